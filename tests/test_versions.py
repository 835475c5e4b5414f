"""kb.versions.catalog and ``kb versions``: every ingested CR version listed with its id, date and counts; names resolved by
id or effective date, per language."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from conftest import DATA

from ingest.kinds import parse_source
from kb.cli import main
from kb.errors import KbError
from kb.link.resolve import link
from kb.model import GLOSSARY
from kb.store import Store
from kb.versions.catalog import list_versions, previous_version, resolve_pair, resolve_version

JA = DATA / "JPN_CR_20231117_0.txt"


def later_japanese(tmp_path):
    text = JA.read_text(encoding="utf-8-sig").replace("和訳 20231117.0 版", "和訳 20240301.0 版")
    text = text.replace("2023-11-17", "2024-03-01").replace("2023-11-18", "2024-03-01")
    path = tmp_path / "JPN_CR_20240301.txt"
    path.write_text(text, encoding="utf-8")
    return path


def english_same_day(tmp_path):
    """A tiny English CR with the Japanese sample's effective date (same numbers, English text)."""
    path = tmp_path / "MagicCompRules-20231117.txt"
    path.write_text("Magic: The Gathering Comprehensive Rules\n\nThese rules are effective as of November 17, 2023.\n\n"
                    "1. Game Concepts\n\n100. General\n\n100.1. These Magic rules apply to any Magic game.\n\n"
                    "Glossary\n\nAbility\nText on an object.\n\nCredits\n\nNobody\n", encoding="utf-8")
    return path


@pytest.fixture()
def store(tmp_path):
    s = Store.open(tmp_path / "kb")
    with s.transaction():
        for path in (JA, later_japanese(tmp_path), english_same_day(tmp_path)):
            s.put_document(parse_source(str(path), path.read_bytes()))
        link(s)
    yield s
    s.close()


def test_list_versions_counts_match_the_file(store):
    versions = list_versions(store)
    assert [(v.version, v.lang, v.effective_date) for v in versions] == [
        ("20240301.0", "ja", "2024-03-01"), ("20231117.0", "ja", "2023-11-17"), ("20231117", "en", "2023-11-17")]
    lines = JA.read_text(encoding="utf-8-sig").splitlines()
    first_rule = next(i for i, line in enumerate(lines) if line.startswith("100.1"))
    body = lines[first_rule - 4:next(i for i in range(first_rule, len(lines)) if lines[i].strip() == "用語集")]
    assert body[0] == "1. ゲームの考え方"
    numbered = [line for line in body if re.match(r"^[1-9](\d\d(\.\d+[a-z]?)?)?\.?\s", line)]
    ja = next(v for v in versions if v.version == "20231117.0")
    assert ja.rules == len(numbered)
    assert ja.glossary == sum(1 for n in store.nodes("20231117.0", "ja", [GLOSSARY])) > 0
    assert ja.sources == (str(JA),)
    assert [v.lang for v in list_versions(store, "en")] == ["en"]


def test_resolve_by_id_or_date(store):
    assert resolve_version(store, "20240301.0").lang == "ja"
    assert resolve_version(store, "2024-03-01").version == "20240301.0"
    assert resolve_version(store, "2023-11-17").version == "20231117.0"  # Japanese first when both fit
    assert resolve_version(store, "2023-11-17", "en").version == "20231117"
    with pytest.raises(KbError, match=r"2020-01-01: no such version; known versions: 20240301.0, 20231117.0, 20231117"):
        resolve_version(store, "2020-01-01")


def test_resolve_pair_finds_the_common_language(store):
    old, new = resolve_pair(store, "2023-11-17", "20240301.0")
    assert (old.version, new.version) == ("20231117.0", "20240301.0")
    with pytest.raises(KbError, match="compare versions of one language"):
        resolve_pair(store, "20231117", "20240301.0")
    assert previous_version(store, new).version == "20231117.0"
    assert previous_version(store, old) is None


def test_kb_versions_command(store, tmp_path):
    runner = CliRunner()
    out = runner.invoke(main, ["--kb-dir", str(tmp_path / "kb"), "versions", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert [(d["version"], d["lang"]) for d in data] == [("20240301.0", "ja"), ("20231117.0", "ja"), ("20231117", "en")]
    assert data[2]["rules"] == 3 and data[2]["glossary"] == 1  # chapter 1, section 100, rule 100.1; 'Ability'
    text = runner.invoke(main, ["--kb-dir", str(tmp_path / "kb"), "versions", "--lang", "ja"])
    assert text.output.splitlines()[1].split()[:3] == ["20240301.0", "ja", "2024-03-01"]
    empty = runner.invoke(main, ["--kb-dir", str(tmp_path / "nothing"), "versions"])
    assert empty.exit_code == 1 and "no knowledge base here" in empty.output
