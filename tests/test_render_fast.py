"""The faster paths of rendering and the link check against the formulas they replace: ``href`` as the page's relative
prefix and the target's (memoised) encoding, the long lists of links written by one filter each rather than a
template loop, ``_resolve`` parsing each link once and ``page_links`` unescaping only values that need it. The same
bytes, for random paths and texts (Japanese, spaces, ``#`` anchors, ``%``, HTML's special characters)."""

from __future__ import annotations

import marshal
import re
from functools import cache
from unittest.mock import patch
from urllib.parse import quote, unquote, urlsplit

from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2 import Template
from markupsafe import Markup, escape

from kb.site import linkcheck
from kb.site.manifest import FileRecord, file_record
from kb.site.output import RECORDS
from kb.site.render import TEMPLATES, Renderer, escaped
from kb.urls.paths import href, relative_prefix


def old_href(from_page: str, target: str) -> str:
    """kb.urls.paths.href before the split into prefix and encoding."""
    depth = from_page.count("/")
    path, _, anchor = target.partition("#")
    url = "../" * depth + quote(path, safe="/~._-")
    return f"{url}#{quote(anchor, safe='~._-')}" if anchor else url


def old_resolve(base: str, link: str) -> str | None:
    """kb.site.linkcheck._resolve before it parsed each link once."""
    parts = urlsplit(link)
    if parts.scheme or parts.netloc or link.startswith("/"):
        return None
    if not parts.path:
        return f"#{unquote(parts.fragment)}" if parts.fragment else ""
    target = linkcheck._join(base, unquote(parts.path)) or f"../{link}"
    return f"{target}#{unquote(parts.fragment)}" if parts.fragment else target


_OLD_ATTR_RE = re.compile(r'\s(href|src|id)="([^"]*)"')


def old_page_links(html: str) -> tuple[list[str], list[str]]:
    links: list[str] = []
    ids: list[str] = []
    for attr, value in _OLD_ATTR_RE.findall(html):
        (ids if attr == "id" else links).append(value.replace("&amp;", "&").replace("&#34;", '"').replace("&#39;", "'"))
    return links, ids


# path segments and texts: Japanese, Latin, spaces, %, #, ?, HTML's special characters, dots
ALPHABET = st.sampled_from([*"aZ09 -_.~%#?&<>\"'/:唱えるカード・ー é\u3099\0\n", "%41", "%E5%94%B1", "..", "&amp;"])
TEXT = st.lists(ALPHABET, max_size=12).map("".join)
SEGMENT = st.lists(st.sampled_from(list("az09-_.~ %唱カé&'")), min_size=1, max_size=8).map("".join)
PAGE = st.lists(SEGMENT, min_size=1, max_size=3).map(lambda parts: "/".join(parts) + ".html")
TARGET = st.tuples(PAGE, st.one_of(st.just(""), TEXT)).map(lambda t: f"{t[0]}#{t[1]}" if t[1] else t[0])

RENDERER = Renderer.for_templates(TEMPLATES)


@settings(max_examples=200, deadline=None)
@given(st.one_of(PAGE, st.just("index.html"), st.just("")), st.one_of(TARGET, TEXT))
def test_href_is_the_old_formula_and_needs_no_escaping(from_page: str, target: str) -> None:
    expected = old_href(from_page, target)
    assert href(from_page, target) == expected
    assert RENDERER.href(relative_prefix(from_page), target) == expected  # memoised on the renderer
    assert RENDERER.href(relative_prefix(from_page), target) == expected  # and again, from the memo
    assert str(escape(expected)) == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(TEXT, TEXT.map(Markup), st.integers(), st.none()), max_size=8), st.booleans())
def test_escaped_is_markupsafe_escape_of_each(values: list[object], strings_only: bool) -> None:
    if strings_only:
        values = [v for v in values if type(v) is str]  # the one-call path (but for a NUL in a value)
    assert escaped(values) == [str(escape(v)) for v in values]


@cache
def _template(source: str) -> Template:
    return RENDERER.env.from_string(source)


def _old_loop(source: str, page_path: str, **variables: object) -> str:
    """A list as the templates wrote it before: a Jinja loop calling ``rel`` on each item."""
    return _template(source).render(page_path=page_path, page_root=relative_prefix(page_path), **variables)


def _new_filter(name: str, items: object, page_path: str) -> str:
    return _template(f"{{{{ items|{name} }}}}").render(page_path=page_path, page_root=relative_prefix(page_path),
                                                      items=items)


LINK = st.fixed_dictionaries({"url": TARGET, "label": TEXT})


@settings(max_examples=60, deadline=None)
@given(PAGE, st.lists(st.tuples(TARGET, TEXT), max_size=6))
def test_cited_items_are_the_old_loop(page_path: str, items: list[tuple[str, str]]) -> None:
    old = _old_loop('{% for url, label in items %}<li><a href="{{ url|rel }}">{{ label }}</a></li>{% endfor %}',
                    page_path, items=items)
    assert _new_filter("cited_items", items, page_path) == old
    assert _new_filter("cited_items", [list(i) for i in items], page_path) == old  # as read back from JSON


@settings(max_examples=60, deadline=None)
@given(PAGE, st.lists(LINK, max_size=6))
def test_link_items_are_the_old_loop(page_path: str, items: list[dict[str, str]]) -> None:
    old = _old_loop('{% for i in items %}<li><a href="{{ i.url|rel }}">{{ i.label }}</a></li>{% endfor %}',
                    page_path, items=items)
    assert _new_filter("link_items", items, page_path) == old


@settings(max_examples=60, deadline=None)
@given(PAGE, st.lists(st.fixed_dictionaries({"url": TARGET, "label": TEXT, "hint": TEXT,
                                             "level": st.sampled_from([1, 2])}), max_size=6))
def test_toc_items_are_the_old_loop(page_path: str, items: list[dict[str, object]]) -> None:
    old = _old_loop('{% for t in items %}<li class="toc-level-{{ t.level }}"><a href="{{ t.url|rel }}">{{ t.label }}'
                    '</a>{% if t.hint %} <span class="toc-hint">{{ t.hint }}</span>{% endif %}</li>{% endfor %}',
                    page_path, items=items)
    assert _new_filter("toc_items", items, page_path) == old


@settings(max_examples=60, deadline=None)
@given(PAGE, st.lists(st.fixed_dictionaries({"url": TARGET, "label": TEXT, "before": TEXT, "name": TEXT,
                                             "after": TEXT}), max_size=6))
def test_mention_items_are_the_old_loop(page_path: str, items: list[dict[str, str]]) -> None:
    old = _old_loop('{% for m in items %}<li><a href="{{ m.url|rel }}">{{ m.label }}</a><p class="mention">'
                    '{{ m.before }}<mark>{{ m.name }}</mark>{{ m.after }}</p></li>{% endfor %}', page_path, items=items)
    assert _new_filter("mention_items", items, page_path) == old


@settings(max_examples=60, deadline=None)
@given(PAGE, st.lists(st.fixed_dictionaries({"url": TARGET, "label": TEXT,
                                             "english": st.one_of(st.none(), TEXT)}), max_size=6))
def test_term_items_are_the_old_loop(page_path: str, items: list[dict[str, object]]) -> None:
    old = _old_loop('{% for t in items %}<li><a href="{{ t.url|rel }}">{{ t.label }}</a>{% if t.english %} '
                    '<span class="en-name" lang="en">{{ t.english }}</span>{% endif %}</li>{% endfor %}',
                    page_path, items=items)
    assert _new_filter("term_items", items, page_path) == old


@settings(max_examples=60, deadline=None)
@given(PAGE, st.lists(st.fixed_dictionaries({"url": TARGET, "label": st.sampled_from(["Lurrus", "唱える", "a&b"]),
                                             "english": st.one_of(st.none(), st.sampled_from(["Lurrus", "<Cast>"])),
                                             "mentions": st.integers(0, 999)}), max_size=6))
def test_card_items_are_the_old_loop(page_path: str, items: list[dict[str, object]]) -> None:
    old = _old_loop('{% for c in items %}<li><a class="ref ref-card" href="{{ c.url|rel }}">{{ c.label }}</a>'
                    '{% if c.english and c.english != c.label %} <span class="en-name" lang="en">{{ c.english }}</span>'
                    '{% endif %}（{{ c.mentions }}）</li>{% endfor %}', page_path, items=items)
    assert _new_filter("card_items", items, page_path) == old


LINK_TEXT = st.one_of(
    st.builds(lambda ups, target: "../" * ups + target, st.integers(0, 3), st.one_of(TARGET, TEXT)),
    st.builds(href, PAGE, TARGET),
    st.sampled_from(["https://mtgwiki.com/wiki/A", "//evil.example/x", "/abs.html", "#", "#a%20b", "?q=1#x", "",
                     "mailto:x@y", "a:b/c.html", "./x/./y.html", "x/../../y.html", " ../a.html", "\t../a.html",
                     "../a\n.html"]))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["", "cr", "glossary", "a/b"]), LINK_TEXT)
def test_resolve_is_the_old_formula(base: str, link: str) -> None:
    assert linkcheck._resolve(base, link) == old_resolve(base, link)
    assert linkcheck._resolve(base, link) == old_resolve(base, link)  # from the memo


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["href", "src", "id", "class"]), TEXT), max_size=6))
def test_page_links_are_the_old_formula(attrs: list[tuple[str, str]]) -> None:
    html = "".join(f'<a {name}="{escape(value)}">x</a> <p{" "}{name}="{value.replace(chr(34), "")}"></p>'
                   for name, value in attrs)
    assert linkcheck.page_links(html) == old_page_links(html)



def old_check_links(files: dict[str, FileRecord], old_files: dict[str, FileRecord],
                    old_broken: list[list[str]]) -> list[tuple[str, str, str]]:
    """kb.site.linkcheck.check_links (with a previous build) before one search a kept file and an early return."""
    ids: dict[str, set[str]] = {}

    def problem(link: str) -> str | None:
        target, _, anchor = link.partition("#")
        if target not in files:
            return "no such page"
        if anchor:
            if target not in ids:
                ids[target] = set(marshal.loads(files[target]["ids"]))
            if anchor not in ids[target]:
                return "no such anchor"
        return None

    lost: set[str] | None = {rel for rel in old_files if rel not in files and not rel.startswith(RECORDS)}
    for rel, info in files.items():
        if (old := old_files.get(rel)) is not None and old is not info and old["ids"] != info["ids"] \
                and not set(marshal.loads(old["ids"])) <= set(marshal.loads(info["ids"])):
            lost.add(rel)  # type: ignore[union-attr]
        if len(lost) > linkcheck.LOST_AT_MOST:  # type: ignore[arg-type]
            lost = None
            break
    if lost is not None:
        broken_before: dict[str, set[str]] = {}
        for path, link in old_broken:
            broken_before.setdefault(path, set()).add(link)
        pairs = [(path, link) for path, link in old_broken if path in files and files[path] is old_files.get(path)]
        needles = [target.encode() for target in lost]
        for path, info in files.items():
            old = old_files.get(path)
            if info["links"] == marshal.dumps([]):
                continue
            if info is not old:
                pairs += [(path, link) for link in linkcheck._new_links(info, old, broken_before.get(path, set()), lost)]
            elif any(needle in info["links"] for needle in needles):
                broken = broken_before.get(path, set())
                pairs += [(path, link) for link in marshal.loads(info["links"])
                          if link.partition("#")[0] in lost and link not in broken]
    else:
        pairs = [(path, link) for path, info in files.items() for link in marshal.loads(info["links"])]
    return sorted((path, link, reason) for path, link in pairs if (reason := problem(link)) is not None)


FILE = st.sampled_from(["index.html", "cr/601.html", "cr/6.html", "wiki/唱える.html", "wiki/a b.html", "x.html",
                        f"{RECORDS}names.marshal"])
SITE_LINK = st.builds(lambda path, anchor: f"{path}#{anchor}" if anchor else path, FILE,
                      st.sampled_from(["", "601.2", "a", "唱"]))
RECORD = st.builds(lambda links, ids: file_record("h", links, ids), st.lists(SITE_LINK, max_size=4),
                   st.lists(st.sampled_from(["601.2", "a", "唱"]), max_size=3))


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(FILE, RECORD, max_size=7), st.dictionaries(FILE, st.one_of(st.none(), RECORD), max_size=7),
       st.lists(st.tuples(FILE, SITE_LINK).map(list), max_size=4), st.sampled_from([0, 1, 2, 64]))
def test_check_links_is_the_old_formula(old_files: dict[str, FileRecord], changes: dict[str, FileRecord | None],
                                        old_broken: list[list[str]], lost_at_most: int) -> None:
    """A build's files: the previous build's, some kept (the same record), some rewritten, gone or new."""
    files = {path: record for path, record in old_files.items() if path not in changes}
    files.update({path: record for path, record in changes.items() if record is not None})
    rewritten = {path for path, record in changes.items() if record is not None}  # (an edit build: those written)
    with patch.object(linkcheck, "LOST_AT_MOST", lost_at_most):
        expected = old_check_links(files, old_files, old_broken)
        assert linkcheck.check_links(files, old_files, old_broken) == expected
        assert linkcheck.check_links(files, old_files, old_broken, rewritten) == expected
