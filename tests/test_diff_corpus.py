"""kb.versions.diff and kb.versions.history on the three real English CR files, checked against an independent reading
of the raw text files done here (rule numbers and texts straight from the lines, whitespace-normalised). The corpus is parsed once
per module."""

from __future__ import annotations

import difflib
import re

import pytest
from click.testing import CliRunner

from ingest.kinds import parse_source
from kb.cli import main
from kb.link.resolve import link
from kb.model import GLOSSARY, RULE, SUBRULE
from kb.store import Store
from kb.versions.catalog import list_versions, resolve_pair
from kb.versions.diff import diff_versions
from kb.versions.history import rule_history

RULE_LINE = re.compile(r"^(\d{3}\.\d+[a-z]?)\.?(?:\s+(.*))?$")
HEADING_LINE = re.compile(r"^\d{1,3}\.\s")
NUMBER_IN_TEXT = re.compile(r"\b\d{3}(?:\.\d+[a-z]?)?\b")


def norm(text: str) -> str:
    return " ".join(text.split())


def raw_lines(path) -> list[str]:
    return [line.strip() for line in path.read_text(encoding="utf-8-sig").splitlines()]


def raw_rules(path) -> dict[str, str]:
    """Rule number → whitespace-normalised text (with its examples), read line by line from the body."""
    lines = raw_lines(path)
    start = next(i for i, line in enumerate(lines) if line.startswith("100.1. "))
    end = next(i for i in range(start, len(lines)) if lines[i] == "Glossary")
    rules: dict[str, list[str]] = {}
    current = None
    for line in lines[start:end]:
        if not line:
            continue
        if m := RULE_LINE.match(line):
            current = m.group(1)
            rules[current] = [m.group(2) or ""]
        elif HEADING_LINE.match(line):
            current = None
        elif current:
            rules[current].append(line)
    return {number: norm(" ".join(parts)) for number, parts in rules.items()}


def raw_glossary_definitions(path) -> list[str]:
    lines = raw_lines(path)
    start = next(i for i, line in enumerate(lines) if line.startswith("100.1. "))
    glossary = next(i for i in range(start, len(lines)) if lines[i] == "Glossary")
    credits = next(i for i in range(glossary, len(lines)) if lines[i] == "Credits")
    blocks, block = [], []
    for line in lines[glossary + 1:credits] + [""]:
        if line:
            block.append(line)
        elif block:
            blocks.append(block)
            block = []
    return [norm(" ".join(b[1:])) for b in blocks]


def store_cr_files(store: Store, paths) -> None:
    """Parse, store and link (what 'kb ingest' does, without the search index these tests do not use)."""
    with store.transaction():
        for path in paths:
            store.put_document(parse_source(str(path), path.read_bytes()))
        link(store)


@pytest.fixture(scope="module")
def corpus_store(corpus_dir, tmp_path_factory):
    store = Store.open(tmp_path_factory.mktemp("kb-corpus"))
    store_cr_files(store, sorted(corpus_dir.glob("MagicCompRules-*.txt")))
    yield store
    store.close()


@pytest.fixture(scope="module")
def recent_diff(corpus_store):
    return diff_versions(corpus_store, *resolve_pair(corpus_store, "2025-11-14", "2026-01-16"))


@pytest.fixture(scope="module")
def renumbering_diff(corpus_store):
    return diff_versions(corpus_store, *resolve_pair(corpus_store, "20231117", "20251114"))


def test_versions_listed_with_counts(corpus_store, corpus_dir):
    versions = {v.version: v for v in list_versions(corpus_store)}
    assert list(versions) == ["20260116", "20251114", "20231117"]
    for v, name in [("20231117", "2023-11-17"), ("20251114", "2025-11-14"), ("20260116", "2026-01-16")]:
        path = corpus_dir / f"MagicCompRules-{name}.txt"
        assert versions[v].effective_date == name
        assert versions[v].glossary == len(raw_glossary_definitions(path))
        rules_and_headings = len(raw_rules(path))
        assert versions[v].rules > rules_and_headings  # plus chapters and sections


def test_recent_diff_matches_an_independent_reading(recent_diff, corpus_dir):
    old = raw_rules(corpus_dir / "MagicCompRules-2025-11-14.txt")
    new = raw_rules(corpus_dir / "MagicCompRules-2026-01-16.txt")
    rules = [c for c in recent_diff.changes if c.kind in (RULE, SUBRULE)]
    # every rule of each version is classified exactly once on its side
    assert sorted(c.old_id for c in rules if c.old_id) == sorted(f"cr:{n}" for n in old)
    assert sorted(c.new_id for c in rules if c.new_id) == sorted(f"cr:{n}" for n in new)
    common = old.keys() & new.keys()
    same_text = {f"cr:{n}" for n in common if old[n] == new[n]}
    assert {c.old_id for c in rules if c.status == "unchanged"} == same_text
    assert {c.old_id for c in rules if c.status == "changed"} <= {f"cr:{n}" for n in common} - same_text
    added_or_moved_in = {c.new_id for c in rules if c.status in ("added", "moved")}
    removed_or_moved_out = {c.old_id for c in rules if c.status in ("removed", "moved")}
    assert {f"cr:{n}" for n in new.keys() - old.keys()} <= added_or_moved_in
    assert {f"cr:{n}" for n in old.keys() - new.keys()} <= removed_or_moved_out
    assert {c.new_id for c in rules if c.status == "added"} == {
        f"cr:{n}" for n in ("610.5", "701.68", "701.68a", "701.68b", "701.68c", "701.68d")}
    # the partner abilities lost 'friends forever' (702.124k) and the later ones moved up a letter, texts unchanged
    moved = {(c.old_id, c.new_id) for c in rules if c.status == "moved"}
    new_by_text: dict[str, list[str]] = {}
    for n, text in new.items():
        new_by_text.setdefault(text, []).append(n)
    independent_moves = {(f"cr:{o}", f"cr:{n}") for o, text in old.items() if text != new.get(o)
                         for n in new_by_text.get(text, []) if n != o and old.get(n) != new[n]}
    assert moved == independent_moves == {("cr:702.124m", "cr:702.124k"), ("cr:702.124n", "cr:702.124m"),
                                          ("cr:702.124p", "cr:702.124n")}
    assert {c.old_id for c in rules if c.status == "removed"} == {"cr:702.124k"}
    for c in rules:
        if c.status in ("changed", "moved", "unchanged"):
            assert norm(c.new_text).replace("Example: ", "") == new[c.new_id[3:]].replace("Example: ", "")


def test_recent_diff_glossary_matches_an_independent_reading(recent_diff, corpus_dir):
    old = set(raw_glossary_definitions(corpus_dir / "MagicCompRules-2025-11-14.txt"))
    new = set(raw_glossary_definitions(corpus_dir / "MagicCompRules-2026-01-16.txt"))
    entries = [c for c in recent_diff.changes if c.kind == GLOSSARY]
    gone = {norm(c.old_text) for c in entries if c.status == "removed" or (c.status in ("changed", "moved") and c.text_changed)}
    came = {norm(c.new_text) for c in entries if c.status == "added" or (c.status in ("changed", "moved") and c.text_changed)}
    assert gone == old - new
    assert came == new - old
    assert {c.label for c in entries if c.status == "added"} == {"Blight"}
    assert {c.label for c in entries if c.status == "removed"} == {"Friends Forever"}


def test_keyword_action_renumbering_is_reported_as_moves(renumbering_diff, corpus_dir):
    old = raw_rules(corpus_dir / "MagicCompRules-2023-11-17.txt")
    new = raw_rules(corpus_dir / "MagicCompRules-2025-11-14.txt")
    assert old["701.34"] == "Manifest" and new["701.40"] == "Manifest" and new["701.34"] == "Proliferate"
    assert old["701.4"] == "Cast" and new["701.5"] == "Cast" and new["701.4"] == "Behold"
    by_old = {c.old_id: c for c in renumbering_diff.changes if c.old_id}
    by_new = {c.new_id: c for c in renumbering_diff.changes if c.new_id}
    for a, b in [("701.34", "701.40"), ("701.4", "701.5"), ("701.27", "701.34")]:
        assert (by_old[f"cr:{a}"].status, by_old[f"cr:{a}"].new_id) == ("moved", f"cr:{b}")
    # Manifest's subrules went with it (a new 701.40d, disguise, pushed d–g down a letter): each old subrule is
    # reported moved to the new subrule its text is most like, none as removed + added
    old_subrules = [n for n in old if re.fullmatch(r"701\.34[a-z]", n)]
    new_subrules = [n for n in new if re.fullmatch(r"701\.40[a-z]", n)]
    assert len(old_subrules) == 7 and len(new_subrules) == 8

    def likeness(a: str, b: str) -> float:
        return difflib.SequenceMatcher(None, NUMBER_IN_TEXT.sub("#", a).split(), NUMBER_IN_TEXT.sub("#", b).split()).ratio()

    for number in old_subrules:
        closest = max(new_subrules, key=lambda n: likeness(old[number], new[n]))
        assert likeness(old[number], new[closest]) > 0.8
        assert (by_old[f"cr:{number}"].status, by_old[f"cr:{number}"].new_id) == ("moved", f"cr:{closest}")
    assert by_new["cr:701.40d"].status == "added" and "disguise" in new["701.40d"]
    assert by_new["cr:701.4"].status == "added"
    assert all(c.status != "removed" for c in by_old.values() if c.old_id.startswith("cr:701.34"))
    # 'Amass' 701.44b and 'Explore' 701.44b read alike but belong to different actions
    assert by_old["cr:701.44b"].new_id == "cr:701.47b" and by_new["cr:701.44b"].old_id == "cr:701.40b"


def test_citation_left_behind_by_a_renumbering_is_reported(renumbering_diff, corpus_dir):
    """2025-11-14 inserted a new 614.12b, moving the anchor-word rule to 614.12c; 607.2m still says 'See rule 614.12b'."""
    new = raw_rules(corpus_dir / "MagicCompRules-2025-11-14.txt")
    assert "614.12b" in new["607.2m"] and "anchor word" in new["614.12c"] and "anchor word" not in new["614.12b"]
    stale = {(r.source_id, r.target, r.moved_to) for r in renumbering_diff.retargeted}
    assert ("cr:607.2m", "614.12b", "cr:614.12c") in stale
    # a citation that was renumbered along with its target is not reported (616.1d now cites 701.27 Transform)
    assert not any(r.source_id == "cr:616.1d" for r in renumbering_diff.retargeted)


def test_history_follows_renumbering(corpus_store):
    history = rule_history(corpus_store, "701.40")
    assert [(e.version, e.label, e.status) for e in history.entries] == [
        ("20231117", "701.34", "first"), ("20251114", "701.40", "moved"), ("20260116", "701.40", "unchanged")]
    blight = rule_history(corpus_store, "Blight")
    assert [(e.version, e.status) for e in blight.entries] == [("20260116", "added")]
    gone = rule_history(corpus_store, "Friends Forever")
    assert [e.status for e in gone.entries] == ["first", "unchanged", "removed"]
    older = rule_history(corpus_store, "701.34", version="20231117")
    assert [e.label for e in older.entries] == ["701.34", "701.40", "701.40"]


def test_history_and_versions_commands(corpus_store):
    kb = ["--kb-dir", str(corpus_store.path.parent)]
    runner = CliRunner()
    out = runner.invoke(main, [*kb, "history", "601.2a"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0].startswith("20231117") and "20260116" in out.output and "text changed" in out.output
    assert "{+Any one-shot effects" in out.output
    listed = runner.invoke(main, [*kb, "versions"])
    assert listed.exit_code == 0
    assert [line.split()[0] for line in listed.output.splitlines()[1:]] == ["20260116", "20251114", "20231117"]
    missing = runner.invoke(main, [*kb, "history", "999.9z"])
    assert missing.exit_code == 1 and "999.9z" in missing.output


def test_site_histories_from_cached_summaries_equal_the_full_histories(corpus_store):
    """The site's histories come from per-pair summaries without unchanged nodes (cached); they are the full
    histories' changed lineages, entry for entry (texts aside: a summary keeps only the changes' texts)."""
    from dataclasses import replace

    from kb.versions.history import changed_histories, consecutive_summaries, histories

    versions, summaries = consecutive_summaries(corpus_store, "en")
    assert len(versions) == 3 and all(s.omitted_unchanged > 1000 for s in summaries)
    assert all(c.status != "unchanged" for s in summaries for c in s.changes)
    full = {key: h for key, h in histories(corpus_store, "en").items() if h.changed}
    compact = changed_histories("en", versions, summaries)
    assert len(full) > 500 and compact.keys() == full.keys()

    def textless(history):
        return [replace(e, text=None) for e in history.entries]

    assert all(textless(compact[key]) == textless(full[key]) for key in full)
    again = consecutive_summaries(corpus_store, "en")[1]  # from the cache
    assert [(s.counts(), s.changes, s.retargeted) for s in again] == [(s.counts(), s.changes, s.retargeted) for s in summaries]
