"""The one HTML reader (ingest/htmltree.py) and the facts defined once: its shared tree edits on real lxml trees, and
guards that no other module of kb/ or ingest/ reads HTML itself or keeps its own list of the MTG Wiki's hosts."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.htmltree import (
    MAX_DEPTH,
    children_html,
    drop_keeping_tail,
    html_document,
    html_fragment,
    html_root,
    html_soup,
    insert_links,
    markup_text,
)
from ingest.net.sites import PROFILES, profile_for_url
from ingest.wikititle import WIKI_HOST, WIKI_HOSTS, parse_wiki_href
from kb.model import Diagnostic

REPO = Path(__file__).resolve().parent.parent
SOURCES = sorted(p for folder in ("kb", "ingest") for p in (REPO / folder).rglob("*.py"))


def _spans(text: str, pattern: str) -> list[tuple[int, int, str, dict[str, str]]]:
    return [(m.start(), m.end(), m.group(1), {"href": f"#{m.group(1)}"}) for m in re.finditer(pattern, text)]


def test_insert_links_in_text_keeps_what_lies_between():
    root = html_fragment("<p>see #A and #B, then <b>bold</b> rest</p>")
    p = root[0]
    insert_links(p, "text", _spans(p.text, r"#(\w)"))
    assert children_html(root) == '<p>see <a href="#A">A</a> and <a href="#B">B</a>, then <b>bold</b> rest</p>'


def test_insert_links_in_a_tail_puts_them_after_the_element():
    root = html_fragment("<p><b>x</b> 601.2 and 702.1 end</p>")
    bold = root[0][0]
    links = [(m.start(), m.end(), m.group(), {"class": "ref"}) for m in re.finditer(r"\d{3}\.\d", bold.tail)]
    insert_links(bold, "tail", links)
    assert children_html(root) == '<p><b>x</b> <a class="ref">601.2</a> and <a class="ref">702.1</a> end</p>'


def test_insert_links_without_links_changes_nothing():
    root = html_fragment("<p>plain</p>")
    insert_links(root[0], "text", [])
    assert children_html(root) == "<p>plain</p>"


def test_drop_keeping_tail_moves_the_tail_to_what_came_before():
    root = html_fragment("<p>a<span>chrome</span>b<i>c</i></p>")
    drop_keeping_tail(root[0][0])
    assert children_html(root) == "<p>ab<i>c</i></p>"
    drop_keeping_tail(root[0][0])
    assert children_html(root) == "<p>ab</p>"


def test_html_document_keeps_deep_nesting_and_warns_past_the_limit():
    diagnostics: list[Diagnostic] = []
    deep = "<html><body>" + "<div>" * 600 + "bottom" + "</div>" * 600 + "<p>after</p></body></html>"
    tree = html_document(deep, "deep.html", diagnostics)
    assert "bottom" in tree.text_content() and "after" in tree.text_content() and not diagnostics
    too_deep = "<html><body>" + "<div>" * (MAX_DEPTH + 100) + "x</body></html>"
    html_document(too_deep, "too_deep.html", diagnostics)
    assert [d.message for d in diagnostics] == [f"HTML nested deeper than {MAX_DEPTH} levels; the rest of the page is lost"]


def test_html_document_reads_bytes_by_their_declared_charset():
    page = '<html><head><meta charset="shift_jis"></head><body><a href="/x">唱える</a></body></html>'.encode("cp932")
    assert html_document(page, "p.html", []).find(".//a").text == "唱える"


def test_the_three_readers_agree_on_a_page():
    page = "<html><body><p>呪文を<b>唱える</b></p></body></html>"
    assert html_document(page, "p", []).find(".//p").text_content() == "呪文を唱える"
    root = html_root(page)
    assert root is not None and "".join(root.find(".//p").itertext()) == "呪文を唱える"
    assert html_soup(page).p.get_text() == "呪文を唱える"


# a parser called, or lxml.html imported as a module (its element type may be imported for annotations)
_READS_HTML = re.compile(r"\b(?:document_fromstring|fragment_fromstring|fromstring|HTMLParser|BeautifulSoup)\(|"
                         r"\bimport lxml\.html\b|\bfrom lxml import html\b")


def test_only_htmltree_reads_html():
    readers = [str(p.relative_to(REPO)) for p in SOURCES
               if p.name != "htmltree.py" and _READS_HTML.search(p.read_text(encoding="utf-8"))]
    assert readers == []


def test_the_wiki_hosts_are_listed_once():
    listed = [str(p.relative_to(REPO)) for p in SOURCES
              if p.name != "wikititle.py" and re.search(r"['\"](?:www\.mtgwiki\.com|wiki\.mtg-jp\.com)['\"]",
                                                          p.read_text(encoding="utf-8"))]
    assert listed == []
    assert WIKI_HOST in WIKI_HOSTS


def test_every_wiki_host_is_the_wiki_for_the_parser_and_the_fetch():
    for host in sorted(WIKI_HOSTS):
        link = parse_wiki_href(f"https://{host}/wiki/%E5%94%B1%E3%81%88%E3%82%8B")
        assert link is not None and (link.kind, link.target) == ("wiki", "唱える")
        profile = profile_for_url(f"https://{host}/wiki/X")
        assert profile is PROFILES["mtgwiki"]
    link = parse_wiki_href("https://example.org/wiki/X")
    assert link is not None and link.kind == "external"


_OLD_READINGS = re.compile(r"<(rt|rp)\b[^>]*>.*?</\1\s*>", re.I | re.S)
_OLD_TAGS = re.compile(r"<[^>]*>")


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(["<", ">", "rt", "RP", "rp", "</", "/", " ", "x", "<rt>", "</rt>", "</RT >", "<rp x>",
                                 "\n", "<rtc>", "唱"]), max_size=16).map("".join))
def test_markup_text_is_the_two_patterns_in_linear_time(text):
    assert markup_text(text) == _OLD_TAGS.sub("\n", _OLD_READINGS.sub("", text))
