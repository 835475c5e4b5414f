"""Finding 5: a CR text file cut at 95 % was stored as a complete version without a word (at 50 %: only "no
glossary found") and became the newest version; ``--strict`` could not guard against it because the complete
official file failed ``--strict`` too. Replayed on the real English CR files (cut at a line break) with real
``kb`` processes: a cut file is flagged ``incomplete``, refused by ``--strict``, announced when stored without it;
the three complete official files pass ``--strict``."""

from __future__ import annotations

import json

import pytest
from conftest import CORPUS_FILES
from hostile import SAMPLE_CR, kb

from ingest.cr_text import INCOMPLETE, parse_cr_text


def _cut(data: bytes, share: float) -> bytes:
    """The first ``share`` of the file, ending at a line break (as a download cut short)."""
    end = int(len(data) * share)
    return data[:max(data.rfind(b"\r", 0, end), data.rfind(b"\n", 0, end)) + 1]


def _incomplete(doc) -> list[str]:
    return [d.message for d in doc.diagnostics if d.message.startswith(INCOMPLETE)]


@pytest.mark.parametrize("name", CORPUS_FILES)
def test_every_cut_is_flagged_and_the_whole_file_is_not(corpus_dir, name):
    data = (corpus_dir / name).read_bytes()
    assert _incomplete(parse_cr_text(data, name)) == []
    at_95 = _incomplete(parse_cr_text(_cut(data, 0.95), name))
    at_50 = _incomplete(parse_cr_text(_cut(data, 0.50), name))
    at_99 = _incomplete(parse_cr_text(data[:data.rindex(b"Credits")], name))  # everything but the credits
    assert len(at_95) == len(at_50) == len(at_99) == 1
    assert "ends inside the glossary, without its credits" in at_95[0] == at_99[0]
    assert "ends inside the rules, without its glossary and credits" in at_50[0]
    version = parse_cr_text(data, name).version
    assert f"stored as version {version} all the same" in at_50[0]


def test_an_excerpt_is_flagged_as_one():
    doc = parse_cr_text(SAMPLE_CR.read_bytes(), SAMPLE_CR.name)
    assert _incomplete(doc) == [f"{INCOMPLETE} the document has no chapter 2, 3, 4, 5, 8, 9 (an excerpt?); it is "
                                "stored as version 20231117.0 all the same — ingest the whole file to replace it "
                                "(--strict refuses it)"]


def test_strict_refuses_a_cut_file_and_takes_the_whole_ones(corpus_dir, tmp_path):
    cut = tmp_path / "MagicCompRules-2026-01-16.txt"
    cut.write_bytes(_cut((corpus_dir / "MagicCompRules-2026-01-16.txt").read_bytes(), 0.95))
    kb_dir = tmp_path / "kb"
    refused = kb(kb_dir, "ingest", "--strict", str(cut))
    assert refused.returncode == 1
    assert f"; first: {cut}:line " in refused.stderr and "incomplete: the document ends inside the glossary" in \
        refused.stderr
    assert json.loads(kb(kb_dir, "versions", "--json").stdout or "[]") == []  # nothing stored
    whole = kb(kb_dir, "ingest", "--strict", *(str(corpus_dir / name) for name in CORPUS_FILES))
    assert whole.returncode == 0, whole.stderr
    # their own errors are still reported: the official glossary's "Map" cites rule 110.10 (for 111.10)
    assert "glossary entry Map [20260116 en] refers to rule 110.10, which does not exist" in whole.stderr


def test_without_strict_a_cut_file_is_announced_when_stored(corpus_dir, tmp_path):
    cut = tmp_path / "MagicCompRules-2026-01-16.txt"
    cut.write_bytes(_cut((corpus_dir / "MagicCompRules-2026-01-16.txt").read_bytes(), 0.5))
    result = kb(tmp_path / "kb", "ingest", str(cut))
    assert result.returncode == 0
    lines = [line for line in result.stderr.splitlines() if INCOMPLETE in line]
    assert len(lines) == 1 and lines[0].startswith(f"warning: {cut}:line ")
    assert "stored as version 20260116 all the same — ingest the whole file to replace it" in lines[0]
