"""Page paths from titles: portable on Linux, macOS and Windows, and injective (property-tested with an
independent decoder of the documented encoding)."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from kb.site.paths import MAX_NAME_BYTES, href, page_for_id, rule_page, safe_name, url_for
from kb.store import NodeKey

WINDOWS_DEVICES = re.compile(r"^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$", re.I)
WINDOWS_FORBIDDEN = set('<>:"/\\|?*') | {chr(c) for c in range(32)}


def decode(name: str) -> str:
    """The encoding as documented in kb.site.paths, read backwards."""
    if name == "~_":
        return ""
    out, i = [], 0
    while i < len(name):
        ch = name[i]
        if ch == "-":
            out.append(" ")
            i += 1
        elif ch == "_":
            assert name[i + 1].islower()
            out.append(name[i + 1].upper())
            i += 2
        elif ch == "~":
            end = name.index("_", i)
            out.append(chr(int(name[i + 1:end], 16)))
            i = end + 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def assert_portable(name: str) -> None:
    assert name and len(name.encode()) <= MAX_NAME_BYTES
    assert not set(name) & WINDOWS_FORBIDDEN
    assert name not in (".", "..") and not name.endswith((".", " "))
    assert not WINDOWS_DEVICES.match(name + ".html") and not WINDOWS_DEVICES.match(name)
    assert name == name.lower() or not any("A" <= c <= "Z" for c in name)
    assert unicodedata.normalize("NFC", name) == name


def test_named_examples():
    titles = ["唱える/Cast", "爆裂+破綻/Boom+Bust", "..", ".", "CON", "con", "Con.txt", "nul", "COM1", "a" * 300,
              "あ" * 300, "NUL\0byte", "", " ", "trailing.", "マナ・コスト", "Cast", "cast", "CAST"]
    names = [safe_name(t) for t in titles]
    assert len(set(names)) == len(titles)
    assert len({n.casefold() for n in names}) == len(titles)  # case-insensitive file systems too
    for title, name in zip(titles, names):
        assert_portable(name)
        if "~~" not in name:
            assert decode(name) == title
    assert safe_name("唱える") == "唱える"
    assert safe_name("唱える/Cast") == "唱える~2f__cast"
    assert safe_name("..") == "~2e_~2e_"
    assert safe_name("con") == "~63_on"


def test_files_can_be_created(tmp_path):
    titles = ["唱える/Cast", "爆裂+破綻/Boom+Bust", "..", "CON", "x" * 300, "ダ" * 300, "NUL\0", "a:b", "a\\b"]
    for title in titles:
        (tmp_path / f"{safe_name(title)}.html").write_text(title, encoding="utf-8")
    assert len(list(tmp_path.iterdir())) == len(titles)
    for title in titles:
        assert (tmp_path / f"{safe_name(title)}.html").read_text(encoding="utf-8") == title


@settings(max_examples=500)
@given(st.text(max_size=40))
def test_short_titles_decode_back(title):
    name = safe_name(title)
    assert_portable(name)
    if "~~" in name:  # cut to fit: ends with a hash of the whole title
        assert len(name.encode()) > MAX_NAME_BYTES - 30
    else:
        assert decode(name) == title  # a left inverse: no two titles share a name


@settings(max_examples=300)
@given(st.text(min_size=1, max_size=40), st.text(min_size=1, max_size=40))
def test_distinct_titles_never_collide_even_case_or_normalisation_folded(a, b):
    if a == b:
        return
    x, y = safe_name(a), safe_name(b)
    assert x.casefold() != y.casefold()
    assert unicodedata.normalize("NFD", x) != unicodedata.normalize("NFD", y)


@settings(max_examples=200)
@given(st.text(min_size=60, max_size=400))
def test_long_titles_are_cut_with_a_hash(title):
    name = safe_name(title)
    assert_portable(name)
    if len(name.encode()) >= MAX_NAME_BYTES - 30 and "~~" in name:
        assert safe_name(title + "x") != name


def test_url_scheme():
    assert url_for(NodeKey("20231117.0", "ja", "cr:601.2f")) == "cr/601.html#601.2f"
    assert url_for(NodeKey("20231117.0", "ja", "cr:601.2")) == "cr/601.html#601.2"
    assert url_for(NodeKey("20231117.0", "ja", "cr:601")) == "cr/601.html"
    assert url_for(NodeKey("20231117.0", "ja", "cr:6")) == "cr/6.html"
    assert url_for(NodeKey("20231117.0", "ja", "gl:唱える")) == "glossary/唱える.html"
    assert url_for(NodeKey("", "ja", "wiki:唱える/Cast")) == "wiki/唱える~2f__cast.html"
    assert url_for(NodeKey("", "ja", "card:Dryad Arbor")) == "cards/_dryad-_arbor.html"
    assert page_for_id("note:x") == "notes/x.html"
    assert rule_page("601.2f") == "cr/601.2f.html"


def test_relative_links():
    assert href("index.html", "cr/601.html#601.2f") == "cr/601.html#601.2f"
    assert href("cr/601.html", "cr/601.html#601.2f") == "../cr/601.html#601.2f"
    assert href("cr/601.html", "glossary/唱える.html") == "../glossary/%E5%94%B1%E3%81%88%E3%82%8B.html"
