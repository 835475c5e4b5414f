"""Incremental linking (kb.link.resolve.link with scopes): ingesting or re-ingesting one CR version links only that
version and the unversioned nodes (wiki, notes) — and the store ends up exactly as a full link of the same sources
leaves it: every reference, derived ones included, with the same resolution."""

from __future__ import annotations

import pytest
from conftest import DATA

from kb.link.resolve import link, stored_report
from kb.model import UNVERSIONED
from kb.pipeline import ingest_sources
from kb.store import Store

JA_CR = DATA / "JPN_CR_20231117_0.txt"


def later_version(folder, edit: str = "だけ"):
    text = JA_CR.read_text(encoding="utf-8-sig")
    text = text.replace("和訳 20231117.0 版", "和訳 20240301.0 版").replace("2023年11月17日", "2024年3月1日")
    text = text.replace("通常、そのマナ・コストだけである。", f"通常、そのマナ・コスト{edit}である。")
    path = folder / "JPN_CR_20240301.txt"
    path.write_text(text, encoding="utf-8")
    return path


def every_ref(store: Store) -> list[tuple]:
    return sorted((sr.source_key.version, sr.source_key.lang, sr.source_key.id, sr.seq, sr.ref.kind, sr.ref.target,
                   sr.ref.text, sr.ref.start, sr.ref.end, sr.ref.version,
                   (sr.target_key.version, sr.target_key.lang, sr.target_key.id) if sr.target_key else None)
                  for sr in store.refs())


@pytest.mark.slow
def test_linking_one_version_at_a_time_equals_linking_everything(tmp_path):
    (tmp_path / "a").mkdir()
    later = later_version(tmp_path / "a")
    with Store.open(tmp_path / "kb-a") as incremental:
        ingest_sources(incremental, [str(DATA)], index=False)  # wiki and notes too: a full link
        ingest_sources(incremental, [str(later)], index=False)  # a new, newest version: the wiki's references move to it
        later.write_text(later.read_text(encoding="utf-8").replace("コストだけ", "コストのみ"), encoding="utf-8")
        report = ingest_sources(incremental, [str(later)], index=False)  # one rule changed
        assert report.stored == 1
        compare_with_a_full_link(tmp_path / "full-1", later, every_ref(incremental), stored_report(incremental))
        lines = later.read_text(encoding="utf-8").splitlines(keepends=True)
        later.write_text("".join(line for line in lines if not line.startswith("601.3. ")), encoding="utf-8")
        assert ingest_sources(incremental, [str(later)], index=False).stored == 1  # a rule 601.2 cites removed
        assert any(sr.ref.target == "601.3" and sr.target_key is None for sr in incremental.refs("20240301.0", "ja"))
        compare_with_a_full_link(tmp_path / "full-2", later, every_ref(incremental), stored_report(incremental))
        later.write_text(later.read_text(encoding="utf-8").replace("スタックに積み、コストを支払うこと。",
                                                                   "スタックに置き、コストを支払うこと。"), encoding="utf-8")
        assert ingest_sources(incremental, [str(later)], index=False).stored == 1  # a glossary entry changed: term links redone
        stepwise, stepwise_report = every_ref(incremental), stored_report(incremental)
        compare_with_a_full_link(tmp_path / "full-3", later, stepwise, stepwise_report)
    from_wiki = [sr for sr in whole_refs_from_unversioned(tmp_path / "kb-a")
                 if sr.target_key and sr.target_key.id.startswith("cr:")]
    assert {sr.target_key.version for sr in from_wiki if not sr.ref.version} == {"20240301.0"}  # the newest
    assert {sr.target_key.version for sr in from_wiki if sr.ref.version} == {"20231117.0"}  # the one they quote
    kinds = {row[4] for row in stepwise}
    assert {"auto-term", "term-article", "wiki", "card"} <= kinds


def compare_with_a_full_link(kb_dir, later, stepwise, stepwise_report) -> None:
    with Store.open(kb_dir) as whole:
        ingest_sources(whole, [str(DATA), str(later)], index=False)
        assert every_ref(whole) == stepwise
        full_report = stored_report(whole)
    assert (full_report.resolved, full_report.unresolved) == (stepwise_report.resolved, stepwise_report.unresolved)
    assert [str(d) for d in full_report.diagnostics] == [str(d) for d in stepwise_report.diagnostics]


def whole_refs_from_unversioned(kb_dir):
    with Store.open(kb_dir) as store:
        return [sr for sr in store.refs() if sr.source_key.version == UNVERSIONED]


@pytest.mark.slow
def test_a_scoped_link_leaves_other_versions_alone(tmp_path):
    """Linking the scope of the newer version rewrites no reference of the older one (their term links stay as
    they were even when deleted by hand, which only a full link would redo)."""
    later = later_version(tmp_path)
    with Store.open(tmp_path / "kb") as store:
        ingest_sources(store, [str(JA_CR), str(later)], index=False)
        older_auto = [sr for sr in store.refs("20231117.0", "ja") if sr.ref.kind == "auto-term"]
        newer_auto = [sr for sr in store.refs("20240301.0", "ja") if sr.ref.kind == "auto-term"]
        assert older_auto and newer_auto
        store.delete_refs(["auto-term"])
        link(store, {("20240301.0", "ja")})
        assert not [sr for sr in store.refs("20231117.0", "ja") if sr.ref.kind == "auto-term"]
        assert [sr for sr in store.refs("20240301.0", "ja") if sr.ref.kind == "auto-term"] == newer_auto
        link(store)
        assert [sr for sr in store.refs("20231117.0", "ja") if sr.ref.kind == "auto-term"] == older_auto


def test_relinking_one_rule_reads_the_names_it_looks_up_only(tmp_path, monkeypatch):
    """The link index reads a table when a resolver asks for it: a one-rule relink reads names of the kinds it looks
    up (the glossary), never every node's names, nor every node's source."""
    later = later_version(tmp_path)
    with Store.open(tmp_path / "kb") as store:
        ingest_sources(store, [str(JA_CR), str(later)], index=False)
        asked: list = []
        name_rows = Store.name_rows
        monkeypatch.setattr(Store, "name_rows", lambda self, *a, **k: asked.append(k.get("kinds")) or name_rows(self, *a, **k))
        monkeypatch.setattr(Store, "node_sources", lambda *a, **k: pytest.fail("every node's source was read"))
        later.write_text(later.read_text(encoding="utf-8").replace("コストだけ", "コストのみ"), encoding="utf-8")
        assert ingest_sources(store, [str(later)], index=False).stored == 1
    assert asked and None not in asked
