"""Finding 21.10: a truncated or deleted Sudachi user dictionary broke search (exit 2, a traceback from inside
Sudachi): the damage checksums did not cover it. Each compiled dictionary now has its SHA-256 beside it: a reader
searches without a damaged one and says so in one line; every writer compiles it again. Replayed with real ``kb``
processes on a dictionary cut short and on one deleted."""

from __future__ import annotations

import json

import pytest
from hostile import SAMPLE_CR, kb

pytestmark = pytest.mark.slow  # processes, servers or several ingests each: out of the quick suite

DAMAGE = {
    "cut short": lambda dic: dic.write_bytes(dic.read_bytes()[:1000]),
    "deleted": lambda dic: dic.unlink(),
    "overwritten": lambda dic: dic.write_bytes(b"\0" * len(dic.read_bytes())),
}


@pytest.mark.parametrize("writer", [("ingest", str(SAMPLE_CR)), ("index",)])
@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_user_dictionary_is_said_by_readers_and_rebuilt_by_writers(tmp_path, damage, writer):
    kb_dir = tmp_path / "kb"
    assert kb(kb_dir, "ingest", "--quiet", str(SAMPLE_CR)).returncode == 0
    [dic] = (kb_dir / "userdict").glob("*.dic")
    whole = dic.read_bytes()
    found = kb(kb_dir, "search", "--json", "状況起因処理")
    assert found.returncode == 0 and found.stderr == ""
    DAMAGE[damage](dic)
    searched = kb(kb_dir, "search", "--json", "状況起因処理")
    assert searched.returncode == 0, searched.stderr
    assert "Traceback" not in searched.stderr and "internal error" not in searched.stderr
    [line] = searched.stderr.splitlines()
    assert f"the search index is stale (its user dictionary {dic.stem} is missing or damaged): run 'kb index'" in line
    assert json.loads(searched.stdout)  # answered from the index as it is
    healed = kb(kb_dir, *writer)
    assert healed.returncode == 0, healed.stderr
    assert dic.read_bytes() == whole  # compiled again, the same
    again = kb(kb_dir, "search", "--json", "状況起因処理")
    assert again.returncode == 0 and again.stderr == "" and again.stdout == found.stdout
