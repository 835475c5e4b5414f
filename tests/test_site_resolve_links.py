"""kb.site.linkcheck.resolve_links parses each link once and joins each folder once; the targets are those
:func:`urllib.parse.urlsplit`, :func:`urllib.parse.unquote` and a plain join of the path's parts give, for every link
shape. page_links undoes the attribute escapes of a value only where it has one: the values each one's own unescaping
gives."""

from __future__ import annotations

from urllib.parse import quote, unquote, urlsplit

import pytest

from kb.site.linkcheck import page_links, resolve_links

LINKS = ["", "#", "#601.2", "#a%20b", "../index.html", "../cr/601.html#601.2f", "glossary/x.html#",
         "../wiki/" + quote("唱える") + ".html", "../wiki/" + quote("攻撃の変身起因-relic~f972c74d") + ".html#" + quote("見出し"),
         "./a/../b.html#x", "../../../x.html", "a#b#c", "%7e/a.html", "%zz.html", "%E5%94.html", "a%5Cb.html",
         "a\\x41.html", "a/..", "a/.", "a/", "../..", "x/../../y.html", "./", "../a/./b/../c.html#d",
         "a b.html", "唱える.html", "a\u200bb.html", "?q=1", "a?b#c", " a.html", "\ta.html", "a\n.html",
         "//host/y", "/abs.html", "mailto:x@example.org", "https://example.org/x", "data:,", "C:/x"]


def join(base: str, rel: str) -> str | None:
    stack = [p for p in base.split("/") if p not in ("", ".")]
    for part in rel.split("/"):
        if part == "..":
            if not stack:
                return None
            stack.pop()
        elif part not in ("", "."):
            stack.append(part)
    return "/".join(stack)


def reference(path: str, link: str) -> str | None:
    """What a link resolves to by urllib's own splitting and decoding."""
    parts = urlsplit(link)
    if parts.scheme or parts.netloc or link.startswith("/"):
        return None
    target = join(path.rpartition("/")[0], unquote(parts.path)) or f"../{link}" if parts.path else ""
    target = f"{target}#{unquote(parts.fragment)}" if parts.fragment else target
    return path + target if not target or target[0] == "#" else target


@pytest.mark.parametrize("path", ["index.html", "cr/601.html", "v/20240730/cr/6.html"])
def test_every_link_resolves_as_urllib_would(path):
    got = resolve_links(path, LINKS)
    want = [target for link in LINKS if (target := reference(path, link)) is not None]
    assert got == want
    assert len(want) == len(LINKS) - 6  # all but the six outside or absolute links


def test_page_links_unescapes_each_value_as_alone():
    values = ["a.html", "a&amp;b.html", "&amp;#34;x", "q&#34;r", "s&#39;t", "plain", "", "&amp;amp;"]
    html = "".join(f'<a href="{v}" id="{v}x">' for v in values) + '<img src="&#39;.png">'
    one = [v.replace("&amp;", "&").replace("&#34;", '"').replace("&#39;", "'") for v in values]
    assert page_links(html) == ([*one, "'.png"], [v + "x" for v in one])
    assert page_links('<a href="a.html" id="b">') == (["a.html"], ["b"])
    assert page_links('<a href="a\0&amp;b" id="c">') == (["a\0&b"], ["c"])  # the separator in a value
