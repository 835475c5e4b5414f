"""The 更新履歴 data kept in the diff cache beside the summaries it comes from: read back instead of derived again,
derived again when a summary changes, and the same either way."""

from __future__ import annotations

import pytest

import kb.site.changes as changes
from ingest.kinds import parse_source
from kb.link.resolve import link
from kb.site.records import ChangesData
from kb.store import Store
from kb.versions.diff import CACHE_DIR
from kb.versions.history import consecutive_summaries

DATES = {"20231117": "November 17, 2023", "20250101": "January 1, 2025", "20260116": "January 16, 2026"}


def english(tmp_path, version: str, rules: list[str]):
    path = tmp_path / f"MagicCompRules-{version}.txt"
    body = "".join(f"100.{i}. {text}\n\n" for i, text in enumerate(rules, start=1))
    path.write_text("Magic: The Gathering Comprehensive Rules\n\n"
                    f"These rules are effective as of {DATES[version]}.\n\n1. Game Concepts\n\n100. General\n\n{body}"
                    "Glossary\n\nAbility\nText on an object.\n\nCredits\n\nNobody\n", encoding="utf-8")
    return path


def ingest(store: Store, *paths) -> None:
    with store.transaction():
        for path in paths:
            store.put_document(parse_source(str(path), path.read_bytes()))
        link(store)


@pytest.fixture()
def store(tmp_path):
    s = Store.open(tmp_path / "kb")
    ingest(s, english(tmp_path, "20231117", ["These Magic rules apply to any Magic game.", "A player wins."]),
           english(tmp_path, "20250101", ["These Magic rules apply to every Magic game.", "A player wins.",
                                          "A player loses."]),
           english(tmp_path, "20260116", ["These Magic rules apply to every Magic game.", "A player wins the game.",
                                          "A player loses."]))
    yield s
    s.close()


def gathered(store: Store) -> ChangesData:
    return changes.gather_changes({lang: consecutive_summaries(store, lang) for lang in ("en", "ja")},
                                  [("20260116", "en")])


def test_changes_data_is_read_from_the_cache_until_a_summary_changes(store, tmp_path, monkeypatch):
    derived = []
    derive = changes._language_changes
    monkeypatch.setattr(changes, "_language_changes", lambda *args: derived.append(args[0]) or derive(*args))
    first = gathered(store)
    assert derived.count("en") == 1 and first.pairs and first.history[("en", "100.2")]
    kept = {p.name for p in (store.kb_dir / CACHE_DIR).glob("changes-*.marshal")}
    assert len(kept) == 1  # English (Japanese has no version pair: nothing to keep)

    assert gathered(store) == first and derived.count("en") == 1  # read back

    ingest(store, english(tmp_path, "20260116", ["These Magic rules apply to every Magic game.", "A player wins it.",
                                                 "A player loses."]))
    again = gathered(store)
    assert derived.count("en") == 2
    assert {p.name for p in (store.kb_dir / CACHE_DIR).glob("changes-*.marshal")} > kept
    assert again != first and ["insert", "wins it"] in again.history[("en", "100.2")][-1]["ops"]
    monkeypatch.setattr(changes, "cached_derivation", lambda name, diffs, params, make: make())
    assert again == gathered(store)  # what is derived without the cache


def test_a_summary_keeps_each_change_s_edit(store):
    summaries = consecutive_summaries(store, "en")[1]
    again = consecutive_summaries(store, "en")[1]  # read back from the cache
    assert [s.cached_as for s in again] == [s.cached_as for s in summaries] and all(s.cached_as for s in again)
    read = [c for s in again for c in s.changes if c.status == "changed"]
    assert read and all("edit" in c.__dict__ for c in read)  # not computed again
    assert [c.edit for c in read] == [c.edit for s in summaries for c in s.changes if c.status == "changed"] == ["text"] * 2
