"""Node ids (kb.ids): every builder round-trips through split_id."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from kb import ids

names = st.text(min_size=1, max_size=20)


@given(names)
def test_every_builder_round_trips(name):
    for build, prefix in ((ids.rule_id, "cr"), (ids.glossary_id, "gl"), (ids.article_id, "wiki"), (ids.card_id, "card")):
        node_id = build(name)
        assert ids.split_id(node_id) == (prefix, name)
        assert ids.id_name(node_id) == name
    assert ids.rule_number(ids.rule_id(name)) == name
    assert ids.rule_number(ids.glossary_id(name)) is None


@given(names, names)
def test_note_ids_keep_set_and_card(set_name, card):
    node_id = ids.note_id(set_name, card)
    assert ids.split_id(node_id) == ("note", f"{set_name}:{card}")


def test_predicates():
    assert ids.is_rule_id("cr:601.2f") and not ids.is_rule_id("card:x")
    assert ids.is_glossary_id("gl:唱える") and not ids.is_glossary_id("glx:y")
    assert ids.is_article_id("wiki:唱える")
    assert ids.split_id("plain") == ("", "plain")


REPO = Path(__file__).resolve().parent.parent
# a string literal that opens with an id prefix ("gl:", f"cr:{n}"; not a message like f"note: {x}"), an id sliced
# past or up to its prefix (id[3:], key.id[:3]), or an id taken apart by hand (.partition(":"), .split(":", 1))
_ID_LITERAL = re.compile(r"""^[rbuf]*["'](?:cr|gl|wiki|note|card):(?!\s)""", re.IGNORECASE)
_ID_SLICED = re.compile(r"""id\[:?[345]:?\]|\.partition\(["']:["']\)|\.split\(["']:["'], ?1\)""")
# wiki titles (``Category:…``), not node ids, are split on ":" here
_TRIPLE_QUOTED = re.compile(r"""^[rbuf]*(?:\"\"\"|''')""", re.IGNORECASE)
_TAKES_APART_WIKI_TITLES = {"ingest/wikititle.py", "ingest/net/sites.py"}


def _offences(path: Path) -> list[tuple[int, str]]:
    """(line, what) of each id built or sliced by hand in one module; docstrings and comments do not count."""
    source = path.read_text(encoding="utf-8")
    found: list[tuple[int, str]] = []
    code = source.splitlines()  # the source with comments and triple-quoted strings blanked out
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        (row, col), (end_row, end_col) = token.start, token.end
        if token.type == tokenize.STRING and _ID_LITERAL.match(token.string):
            found.append((row, token.string))
        elif token.type == tokenize.COMMENT or (token.type == tokenize.STRING and _TRIPLE_QUOTED.match(token.string)):
            for line in range(row, end_row + 1):
                first = col if line == row else 0
                last = end_col if line == end_row else len(code[line - 1])
                code[line - 1] = code[line - 1][:first] + " " * (last - first) + code[line - 1][last:]
    if str(path.relative_to(REPO)) not in _TAKES_APART_WIKI_TITLES:
        found += [(number, line.strip()) for number, line in enumerate(code, 1) if _ID_SLICED.search(line)]
    return found


def test_the_guard_catches_each_form(tmp_path):
    assert _ID_LITERAL.match('f"cr:{number}"') and _ID_LITERAL.match('"gl:"') and _ID_LITERAL.match("f'wiki:{t}'")
    assert not _ID_LITERAL.match('f"note: {note}"') and not _ID_LITERAL.match('"card"')
    for sliced in ("key.id[3:]", "article.id[5:]", 'node_id.partition(":")', 'moved_to.split(":", 1)', "t.id[:3]"):
        assert _ID_SLICED.search(sliced), sliced


def test_no_module_but_kb_ids_builds_or_slices_an_id():
    offenders = []
    for folder in ("kb", "ingest"):
        for path in sorted((REPO / folder).rglob("*.py")):
            if path == REPO / "kb" / "ids.py":
                continue
            offenders += [f"{path.relative_to(REPO)}:{number}: {what}" for number, what in _offences(path)]
    assert offenders == [], "node ids built or sliced outside kb/ids.py:\n" + "\n".join(offenders)


def test_each_shared_fact_is_defined_once():
    """TITLE_BOOST, INDEX_DIR and the two "outside" reference-kind sets have one definition; the ambiguous names
    OUTSIDE_KINDS and KIND_NAMES are gone."""
    definitions: dict[str, list[str]] = {}
    for folder in ("kb", "ingest"):
        for path in sorted((REPO / folder).rglob("*.py")):
            for match in re.finditer(r"^([A-Z_]+)\s*(?::[^=\n]+)?=", path.read_text(encoding="utf-8"), re.M):
                definitions.setdefault(match[1], []).append(str(path.relative_to(REPO)))
    for name in ("TITLE_BOOST", "INDEX_DIR", "REFS_OUTSIDE_KB", "REFS_OUTSIDE_SITE"):
        assert len(definitions.get(name, [])) == 1, (name, definitions.get(name))
    assert "OUTSIDE_KINDS" not in definitions and "KIND_NAMES" not in definitions
