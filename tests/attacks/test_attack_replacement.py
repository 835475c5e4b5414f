"""Second attack run, finding 5: a cut-short or fake English CR with a later date silently replaced the site (a file
cut at 60 % removed 1,784 rules and the whole glossary; a 6-line fake left a site of one rule; both exit 0), and the
``incomplete:`` warning was not shown under ``kb update`` or ``kb ingest -q``. Replayed with real ``kb`` processes on
the real English CR files: such a text is refused, in one line naming the file and ``--force``, and nothing changes;
``--force`` stores it; a whole newer release is taken as before."""

from __future__ import annotations

import json

import pytest
from conftest import CORPUS_FILES, copy_kb
from hostile import kb

from kb.model import RULE, Diagnostic, Document, Node
from kb.versions.catalog import VersionInfo
from kb.versions.guard import replacement_refusal

OLD, NEW = CORPUS_FILES[1], CORPUS_FILES[2]  # 2025-11-14, 2026-01-16
FAKE = b"""Magic: The Gathering Comprehensive Rules

These rules are effective as of March 27, 2026.

100. General
100.1. These Magic rules apply to any Magic game with two or more players.
"""


def _cut(data: bytes, share: float) -> bytes:
    end = int(len(data) * share)
    return data[:data.rfind(b"\n", 0, end) + 1]


def _versions(kb_dir) -> list[tuple[str, int]]:
    return [(v["version"], v["rules"]) for v in json.loads(kb(kb_dir, "versions", "--json").stdout)]


def _site_pages(site) -> set[str]:
    return {str(p.relative_to(site)) for p in site.rglob("*.html")}


@pytest.fixture(scope="module")
def old_kb(corpus_dir, tmp_path_factory):
    """The 2025-11-14 English rules ingested by ``kb ingest`` once; each test works on a copy of its own."""
    kb_dir = tmp_path_factory.mktemp("old") / "kb"
    assert kb(kb_dir, "ingest", "-q", str(corpus_dir / OLD)).returncode == 0
    return kb_dir


@pytest.mark.run_first
def test_a_cut_newer_release_is_refused_by_update_and_the_site_kept(corpus_dir, tmp_path, old_kb):
    kb_dir, site = copy_kb(old_kb, tmp_path / "kb"), tmp_path / "site"
    assert kb(kb_dir, "build", "--out", str(site)).returncode == 0
    before_versions, before_pages = _versions(kb_dir), _site_pages(site)
    cut = tmp_path / NEW
    cut.write_bytes(_cut((corpus_dir / NEW).read_bytes(), 0.6))

    refused = kb(kb_dir, "update", str(cut), "--out", str(site))
    assert refused.returncode == 1
    assert f"{cut}: rules version 20260116 would replace 20251114" in refused.stderr
    assert ("but the document ends inside the rules, without its glossary and credits (cut short?): not stored; check the file, "
            "or give --force to store it") in refused.stderr
    assert _versions(kb_dir) == before_versions and _site_pages(site) == before_pages

    forced = kb(kb_dir, "update", str(cut), "--out", str(site), "--force")
    assert forced.returncode == 0, forced.stderr
    assert any(line.startswith("warning: ") and "incomplete: the document ends inside the rules" in line
               for line in forced.stderr.splitlines()), forced.stderr
    assert [v for v, _ in _versions(kb_dir)] == ["20260116", "20251114"]


def test_a_fake_newer_file_is_refused_by_a_quiet_ingest_which_still_says_why(tmp_path, old_kb):
    kb_dir = copy_kb(old_kb, tmp_path / "kb")
    fake = tmp_path / "MagicCompRules-2026-03-27.txt"
    fake.write_bytes(FAKE)
    refused = kb(kb_dir, "ingest", "-q", str(fake))
    assert refused.returncode == 1
    errors = [line for line in refused.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith(f"error: {fake}: rules version 20260327 would replace 20251114")
    assert [line for line in refused.stderr.splitlines() if "warning: " in line and "incomplete:" in line]
    assert [v for v, _ in _versions(kb_dir)] == ["20251114"]


def test_a_whole_newer_release_replaces_the_old_one(corpus_dir, tmp_path, old_kb):
    kb_dir = copy_kb(old_kb, tmp_path / "kb")
    taken = kb(kb_dir, "ingest", "-q", str(corpus_dir / NEW))
    assert taken.returncode == 0, taken.stderr
    assert [v for v, _ in _versions(kb_dir)] == ["20260116", "20251114"]


def _info(version: str, date: str, rules: int, source: str = "old.txt") -> VersionInfo:
    return VersionInfo(version, "en", date, (source,), "2026-01-01T00:00:00", rules - 100, 100)


def _doc(version: str, date: str, rules: int, source: str = "new.txt") -> Document:
    nodes = tuple(Node(id=f"r{i}", kind=RULE, lang="en", version=version) for i in range(rules))
    return Document(source, "cr-text", "en", nodes, version=version, effective_date=date,
                    diagnostics=(Diagnostic(source, "", "a warning"),))


WHOLE = set("123456789")


def refuse(doc, stored, *, incomplete, chapters=WHOLE):
    return replacement_refusal(doc, stored, incomplete=incomplete, chapters=lambda version: chapters)


def test_the_guard_weighs_share_date_and_source():
    stored = [_info("20251114", "2025-11-14", 1000)]
    assert refuse(_doc("20260116", "2026-01-16", 990), stored, incomplete=None) is None
    small = refuse(_doc("20260116", "2026-01-16", 700), stored, incomplete=None)
    assert small is not None and "it has 700 rules and glossary entries, fewer than 80% of its 1000" in small
    excerpt = "the document has no chapter 2"
    assert refuse(_doc("20250101", "2025-01-01", 10), stored, incomplete=excerpt) is None  # older: not shown
    assert refuse(_doc("20260116", "2026-01-16", 10), [], incomplete=excerpt) is None  # nothing to replace
    assert excerpt in (refuse(_doc("20260116", "2026-01-16", 990), stored, incomplete=excerpt) or "")
    # one excerpt may follow another of the same size (the bundled sample, then a later excerpt of it)
    assert refuse(_doc("20260116", "2026-01-16", 1000), stored, incomplete=excerpt) is None
    # the newest version's own file ingested again, cut short; another file of that version (a second source) is not
    assert refuse(_doc("20251114", "2025-11-14", 500, "old.txt"), stored, incomplete=None) is not None
    assert refuse(_doc("20251114", "2025-11-14", 500, "other.txt"), stored, incomplete=None) is None
    # an edited excerpt, one rule less, replaces itself
    assert refuse(_doc("20251114", "2025-11-14", 999, "old.txt"), stored, incomplete=excerpt) is None


def test_an_excerpt_stored_may_be_replaced_by_anything():
    """The guard keeps a whole version (every chapter and a glossary); an excerpt replaced loses nothing."""
    stored = [_info("20231117", "2023-11-17", 1000)]
    assert refuse(_doc("20260116", "2026-01-16", 10), stored, incomplete="x", chapters={"1", "6", "7"}) is None
    no_glossary = [VersionInfo("20231117", "en", "2023-11-17", ("old.txt",), "2026-01-01T00:00:00", 1000, 0)]
    assert refuse(_doc("20260116", "2026-01-16", 10), no_glossary, incomplete="x") is None
    assert refuse(_doc("20260116", "2026-01-16", 10), stored, incomplete="x") is not None
