"""What a build takes from the one before instead of making it again — the name table and the labels' readings
(kept in the build's records with what they were made from, :func:`kb.site.gather._names`) and the user
dictionary's words (remembered beside the dictionaries, :func:`kb.search.userdict.prepare`) — is taken only when
its inputs are unchanged: after a changed article, a new title other articles link to, a removed article, a changed
CR rule and a build that failed half-way, the site equals a full build's byte for byte and the table equals one
made from the store. Also the shortcuts of the page producers and the gather step over long texts
(:func:`kb.site.pages.words_head`, the mention's sentence) give what the whole text gives. And the store's
documents, read once per generation, are read again after any write.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kb.model import Node
from kb.pipeline import ingest_sources, remove_sources
from kb.search import names as names_module
from kb.search import userdict
from kb.site import build_site, builder
from kb.site.gather import MENTION_CONTEXT, SENTENCE_ENDS, _mention
from kb.site.manifest import NAMES, load_record
from kb.site.pages import words_head
from kb.site.records import Entry
from kb.splitter import JapaneseSplitter
from kb.store import Store
from tests.test_site_per_page import assert_same_site, cr_and_wiki, page_of, wiki_page, write_wiki


def _counting(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[int]:
    calls: list[int] = []
    real = getattr(module, name)

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def _table(site: Path) -> tuple:
    return tuple(load_record(site, NAMES)["table"])


def _fresh_table(store: Store) -> tuple:
    table = names_module.name_table(store, userdict.prepare(store, JapaneseSplitter()))
    return table.english, table.readings, table.rules


def _full_build_equals(store: Store, site: Path, full: Path) -> None:
    build_site(store, full)
    assert_same_site(full, site, search=False)
    assert _table(site) == _fresh_table(store)


@pytest.mark.slow  # eight builds and four user dictionaries of new names
def test_what_a_build_takes_from_the_last_is_what_it_would_make(tmp_path, monkeypatch):
    paths, cr, text = cr_and_wiki(tmp_path)
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(cr), str(tmp_path / "wiki")], index=False).failed
        build_site(store, site)
        made = _counting(monkeypatch, names_module, "names_from")
        words = _counting(monkeypatch, userdict, "user_words")
        read = _counting(monkeypatch, JapaneseSplitter, "reading")  # a label's reading, for the 五十音 order

        # a changed article, no name changed: the table and the dictionary's words are taken as they were
        paths["引用記事"].write_text(wiki_page("引用記事", ["孤立記事"], "竜巻ミョルニルの説明。"), encoding="utf-8")
        assert not ingest_sources(store, [str(paths["引用記事"])], index=False).failed
        report = build_site(store, site)
        assert page_of("引用記事") in report.rendered_pages
        assert made == [] and words == [] and read == []
        _full_build_equals(store, site, tmp_path / "full1")
        assert read  # the full build reads them
        made.clear()

        # the article given an English name, its title as it was: the table is made again (it holds English names)
        page = wiki_page("引用記事", ["孤立記事"], "竜巻ミョルニルの説明。")
        paths["引用記事"].write_text(page.replace("<b>引用記事</b>", "<b>引用記事</b>/<i>Quoted Article</i>"),
                                     encoding="utf-8")
        assert not ingest_sources(store, [str(paths["引用記事"])], index=False).failed
        build_site(store, site)
        assert made == [1] and "Quoted Article" in str(_table(site))
        _full_build_equals(store, site, tmp_path / "full1b")
        made.clear()

        # a new title that an article already links to (a red link until now): the table is made again (the
        # tables are compared with one made from the store by _full_build_equals)
        new = write_wiki(tmp_path / "new", {"新しい記事": ["対象記事"]})
        assert not ingest_sources(store, [str(new["新しい記事"])], index=False).failed
        report = build_site(store, site)
        assert made == [1] and page_of("末端記事") in report.rendered_pages
        _full_build_equals(store, site, tmp_path / "full2")
        made.clear()

        # the new article removed again: the table is made again, the red link is one again
        assert not remove_sources(store, [str(new["新しい記事"])]).failed
        report = build_site(store, site)
        assert made == [1] and page_of("末端記事") in report.rendered_pages
        _full_build_equals(store, site, tmp_path / "full3")

        # a changed CR rule (its text only)
        old = "プレイヤーはその呪文の総コストを決定する。"
        assert old in text
        cr.write_text(text.replace(old, old + "竜巻ミョルニル。"), encoding="utf-8")
        assert not ingest_sources(store, [str(cr)], index=False).failed
        build_site(store, site)
        assert "竜巻ミョルニル" in (site / "cr" / "601.2f.html").read_text(encoding="utf-8")
        _full_build_equals(store, site, tmp_path / "full4")

        # a build that fails after gathering (its records not written) leaves the last build's; the next is whole
        paths["対象記事"].write_text(wiki_page("対象記事", ["連鎖記事"], "失敗した構築の後。"), encoding="utf-8")
        assert not ingest_sources(store, [str(paths["対象記事"])], index=False).failed

        def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
            raise RuntimeError("killed")

        real_check = builder.check_links
        monkeypatch.setattr(builder, "check_links", broken)
        with pytest.raises(RuntimeError, match="killed"):
            build_site(store, site)
        monkeypatch.setattr(builder, "check_links", real_check)
        assert "失敗した構築の後" not in (site / page_of("対象記事")).read_text(encoding="utf-8")
        build_site(store, site)
        assert "失敗した構築の後" in (site / page_of("対象記事")).read_text(encoding="utf-8")
        _full_build_equals(store, site, tmp_path / "full5")


def _built_with_damaged_names(tmp_path: Path, store: Store) -> tuple[dict[str, Path], Path, tuple]:
    """Two articles ingested into ``store`` and built into ``tmp_path/site``, whose names record is then damaged:
    the articles' paths, the site and the table the record held."""
    paths = write_wiki(tmp_path / "wiki", {"接死記事": [], "瞬速記事": []})
    site = tmp_path / "site"
    assert not ingest_sources(store, [str(tmp_path / "wiki")], index=False).failed
    build_site(store, site)
    good = _table(site)
    (site / NAMES).write_bytes(b"\x00not marshal")
    return paths, site, good


def test_a_damaged_names_record_is_made_again(tmp_path):
    with Store.open(tmp_path / "kb") as store:
        _, site, good = _built_with_damaged_names(tmp_path, store)
        (site / ".kb-build" / "stamp.marshal").unlink()  # else the build has nothing to do
        build_site(store, site)
        assert _table(site) == good == _fresh_table(store)


def test_an_edit_build_that_made_the_name_table_again_keeps_it(tmp_path, monkeypatch):
    """A names record of other inputs (another kb's, or a damaged one) met by an edit build: the table is made
    again once, and kept for the next edit build."""
    with Store.open(tmp_path / "kb") as store:
        paths, site, good = _built_with_damaged_names(tmp_path, store)
        made = _counting(monkeypatch, names_module, "names_from")
        for number, extra in enumerate(["一度目の編集。", "二度目の編集。"]):
            paths["接死記事"].write_text(wiki_page("接死記事", [], extra), encoding="utf-8")
            assert not ingest_sources(store, [str(paths["接死記事"])], index=False).failed
            assert build_site(store, site).edit, number
            assert made == [1], number  # the second edit build takes the first's table
            assert _table(site) == good


def test_the_remembered_user_dictionary_is_the_one_its_names_make(tmp_path, monkeypatch):
    paths = write_wiki(tmp_path / "wiki", {"状況起因処理": [], "両面カード": []})
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(tmp_path / "wiki")], index=False).failed
        first = userdict.prepare(store, JapaneseSplitter()).dictionary_id
        words = _counting(monkeypatch, userdict, "user_words")
        assert userdict.prepare(store, JapaneseSplitter()).dictionary_id == first and words == []
        # a new compound title: other names, another dictionary
        new = write_wiki(tmp_path / "new", {"多人数戦": []})
        assert not ingest_sources(store, [str(new["多人数戦"])], index=False).failed
        second = userdict.prepare(store, JapaneseSplitter()).dictionary_id
        assert words == [1] and second != first
        # the memo names a dictionary whose file is damaged: the words are looked up and the dictionary made again
        (store.kb_dir / userdict.FOLDER / f"{second}.dic").write_bytes(b"damaged")
        assert userdict.prepare(store, JapaneseSplitter()).dictionary_id == second and words == [1, 1]
        assert userdict.intact(store.kb_dir / userdict.FOLDER / f"{second}.dic")
        # back to the first names: the memo holds only the last names, so they are looked up again
        assert not remove_sources(store, [str(new["多人数戦"])]).failed
        assert userdict.prepare(store, JapaneseSplitter()).dictionary_id == first and len(words) == 3
        assert paths  # the first articles stay


def _texts(rng: random.Random, count: int) -> list[str]:
    pieces = ["呪文", "を", "唱える", "。", "！", "？", "\n", " ", "  ", "\t", "　", "カード", "•", "- ", "abc", "\n\n"]
    return [" " * rng.randrange(3) + "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 400)))
            for _ in range(count)]


def test_words_head_is_the_head_of_the_words_of_the_whole_text():
    rng = random.Random(7)
    for text in _texts(rng, 400) + ["", " ", "a" * 1000, " ".join(["x"] * 500), "\n" * 300 + "end"]:
        for limit in (1, 24, 25, 120, 161):
            assert words_head(text, limit) == " ".join(text.split())[:limit]


def _sentence_of(text: str, start: int, end: int) -> tuple[str, str]:
    """The mention's sentence as the whole text gives it (every sentence end looked for, then cut)."""
    left = max((text.rfind(ch, 0, start) for ch in SENTENCE_ENDS), default=-1) + 1
    right = min((i for i in (text.find(ch, end) for ch in SENTENCE_ENDS) if i >= 0), default=len(text))
    right += right < len(text) and text[right] != "\n"
    left, right = max(left, start - MENTION_CONTEXT), min(right, end + MENTION_CONTEXT)
    before, after = text[left:start].lstrip("•- ").strip(), text[end:right].rstrip()
    cut_before = left > 0 and text[left - 1] not in SENTENCE_ENDS
    cut_after = right < len(text) and text[right - 1] not in SENTENCE_ENDS
    return ("…" if cut_before else "") + before, after + ("…" if cut_after else "")


def test_a_mention_is_cut_from_its_context_as_from_the_whole_text():
    rng = random.Random(11)
    for text in _texts(rng, 300):
        if len(text) < 3:
            continue
        entry = Entry("wiki:x", "article", "wiki/x.html", "x")
        entry.nodes["ja"] = Node(id="wiki:x", kind="article", lang="ja", text=text)
        for _ in range(5):
            start = rng.randrange(len(text) - 1)
            end = rng.randrange(start + 1, min(len(text), start + 6) + 1)
            mention = _mention(entry, "ja", start, end)
            assert (mention["before"], mention["after"]) == _sentence_of(text, start, end)
            assert mention["name"] == text[start:end]



def test_the_documents_read_once_are_read_again_after_any_write(tmp_path):
    paths = write_wiki(tmp_path / "wiki", {"一つ目": [], "二つ目": []})
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(paths["一つ目"])], index=False).failed
        first = store.documents()
        first.clear()  # the caller's copy

        def articles() -> list[str | None]:
            return [d.title for d in store.documents() if d.kind == "mtgwiki"]

        assert articles() == ["一つ目"]
        assert not ingest_sources(store, [str(paths["二つ目"])], index=False).failed  # a write through this store
        assert articles() == ["一つ目", "二つ目"]
        with Store.open(tmp_path / "kb") as other:  # a write through another connection
            assert not remove_sources(other, [str(paths["一つ目"])]).failed
        assert articles() == ["二つ目"]
