"""kb.versions.diff on small inputs: the classification rules, inline ops, and a Japanese version pair made from the bundled
sample (character-level diff, a renumbered rule, ``kb diff`` on the command line)."""

from __future__ import annotations

import json
from itertools import pairwise

import pytest
from click.testing import CliRunner
from conftest import DATA
from hypothesis import given, settings
from hypothesis import strategies as st

from kb.cli import main
from kb.model import GLOSSARY, RULE, SECTION, SUBRULE, Node
from kb.pipeline import ingest_sources
from kb.store import Store
from kb.versions.catalog import resolve_pair
from kb.versions.diff import MOVE_THRESHOLD, diff_nodes, diff_versions, inline_ops


def rule(number: str, text: str, *, kind: str = SUBRULE, lang: str = "en", examples=()) -> Node:
    parent = number[:-1] if kind == SUBRULE else number.split(".")[0]
    return Node(id=f"cr:{number}", kind=kind, lang=lang, version="v", text=text, number=number,
                parent=f"cr:{parent}", examples=tuple(examples))


def section(number: str, title: str) -> Node:
    return Node(id=f"cr:{number}", kind=SECTION, lang="en", version="v", title=title, number=number)


def by_status(changes) -> dict[str, set]:
    out: dict[str, set] = {}
    for c in changes:
        out.setdefault(c.status, set()).add((c.old_id, c.new_id) if c.status in ("moved", "changed") else c.old_id or c.new_id)
    return out


def test_statuses_for_plain_edits():
    old = [section("601", "Casting Spells"), rule("601.1", "Casting", kind=RULE), rule("601.1a", "Text one."),
           rule("601.1b", "Text two that will be edited a little."), rule("601.1c", "Gone soon.")]
    new = [section("601", "Casting Spells"), rule("601.1", "Casting", kind=RULE), rule("601.1a", "Text  one.\n"),
           rule("601.1b", "Text two that was edited a little."), rule("601.1d", "Brand new rule about something else.")]
    got = by_status(diff_nodes(old, new, "en"))
    assert got["unchanged"] == {"cr:601", "cr:601.1", "cr:601.1a"}  # whitespace differences are no change
    assert got["changed"] == {("cr:601.1b", "cr:601.1b")}
    assert got["removed"] == {"cr:601.1c"}
    assert got["added"] == {"cr:601.1d"}
    assert "moved" not in got


def test_inserted_rule_shifts_the_rest_and_they_are_moved_not_rewritten():
    """Inserting 'Behold' before 'Cast' renumbers Cast and its subrules, whose texts cite their own new numbers."""
    old = [section("701", "Keyword Actions"), rule("701.4", "Cast", kind=RULE),
           rule("701.4a", "To cast a spell is to take it from where it is, put it on the stack, and pay its costs."),
           rule("701.4b", "See rule 701.4a and rule 601, “Casting Spells.”")]
    new = [section("701", "Keyword Actions"), rule("701.4", "Behold", kind=RULE),
           rule("701.4a", "To behold a quality is to reveal a card with that quality from your hand."),
           rule("701.5", "Cast", kind=RULE),
           rule("701.5a", "To cast a spell is to take it from where it is, put it on the stack, and pay its costs."),
           rule("701.5b", "See rule 701.5a and rule 601, “Casting Spells.”")]
    changes = diff_nodes(old, new, "en")
    got = by_status(changes)
    assert got["moved"] == {("cr:701.4", "cr:701.5"), ("cr:701.4a", "cr:701.5a"), ("cr:701.4b", "cr:701.5b")}
    assert got["added"] == {"cr:701.4", "cr:701.4a"}
    assert "removed" not in got and "changed" not in got
    moved_b = next(c for c in changes if c.old_id == "cr:701.4b")
    assert moved_b.text_changed  # only the masked rule number differs: moved, with the new number highlighted
    assert [o.text for o in moved_b.ops if o.op == "insert"] == ["701.5a "]


def test_similar_text_under_another_parent_is_not_taken_for_the_same_rule():
    """'Amass' 701.44b and 'Explore' 701.44b read alike; when Amass moved to 701.47 its subrule went along."""
    amass_b = "A player “amassed” after the process described in rule 701.44a is complete, even if some were impossible."
    explore_b = "A permanent “explores” after the process described in rule 701.44a is complete, even if some were impossible."
    old = [section("701", "Keyword Actions"), rule("701.40", "Explore", kind=RULE),
           rule("701.40b", explore_b.replace("701.44a", "701.40a")),
           rule("701.44", "Amass", kind=RULE), rule("701.44b", amass_b)]
    new = [section("701", "Keyword Actions"), rule("701.44", "Explore", kind=RULE), rule("701.44b", explore_b),
           rule("701.47", "Amass", kind=RULE), rule("701.47b", amass_b.replace("701.44a", "701.47a"))]
    mapping = {c.old_id: c.new_id for c in diff_nodes(old, new, "en") if c.old_id}
    assert mapping == {"cr:701": "cr:701", "cr:701.40": "cr:701.44", "cr:701.40b": "cr:701.44b",
                       "cr:701.44": "cr:701.47", "cr:701.44b": "cr:701.47b"}


def test_dissimilar_texts_are_removed_and_added_not_moved():
    old = [section("702", "Keyword Abilities"), rule("702.9a", "Flying is an evasion ability.")]
    new = [section("702", "Keyword Abilities"),
           rule("702.9b", "A creature with flying can’t be blocked except by creatures with flying.")]
    got = by_status(diff_nodes(old, new, "en"))
    assert got["removed"] == {"cr:702.9a"} and got["added"] == {"cr:702.9b"}


def test_glossary_rename_with_the_same_definition_is_moved():
    def term(name, text):
        return Node(id=f"gl:{name}", kind=GLOSSARY, lang="en", version="v", text=text, title=name)

    old = [term("Tribal", "A card type seen only on older cards. See rule 308, “Tribals.”")]
    new = [term("Kindred", "A card type seen only on older cards. See rule 308, “Kindreds.”")]
    [change] = diff_nodes(old, new, "en")
    assert (change.status, change.old_id, change.new_id) == ("moved", "gl:Tribal", "gl:Kindred")
    assert change.similarity >= MOVE_THRESHOLD


def test_examples_are_part_of_a_rule():
    old = [section("1", "x"), rule("100.1", "Text.", kind=RULE, examples=("One example.",))]
    new = [section("1", "x"), rule("100.1", "Text.", kind=RULE, examples=("Another example.",))]
    [_, change] = diff_nodes(old, new, "en")
    assert change.status == "changed"
    assert ("insert", "Another ") in [(o.op, o.text) for o in change.ops]


def test_inline_ops_are_characters_in_japanese_and_words_in_english():
    assert [(o.op, o.text) for o in inline_ops("呪文を唱える。", "呪文を唱えた。", "ja")] == [
        ("equal", "呪文を唱え"), ("delete", "る"), ("insert", "た"), ("equal", "。")]
    assert [(o.op, o.text) for o in inline_ops("It deals 2 damage.", "It deals 3 damage.", "en")] == [
        ("equal", "It deals "), ("delete", "2 "), ("insert", "3 "), ("equal", "damage.")]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab 唱え.\n", max_size=40), st.text(alphabet="ab 唱え.\n", max_size=40), st.sampled_from(["ja", "en"]))
def test_inline_ops_rebuild_both_texts(old, new, lang):
    ops = inline_ops(old, new, lang)
    assert "".join(o.text for o in ops if o.op != "insert") == old
    assert "".join(o.text for o in ops if o.op != "delete") == new
    assert all(a.op != b.op for a, b in pairwise(ops))  # runs are merged


# -- a Japanese version pair from the bundled sample ------------------------------------------------------------------

def japanese_next_version(tmp_path):
    """The sample as a later version: one rule edited, 701.34g renumbered to 701.34h under a new 701.34g, one removed."""
    text = (DATA / "JPN_CR_20231117_0.txt").read_text(encoding="utf-8-sig")
    assert "和訳 20231117.0 版" in text and "\n701.34g " in text and "\n701.34f " in text
    text = text.replace("和訳 20231117.0 版", "和訳 20240301.0 版").replace("2023-11-17", "2024-03-01")
    text = text.replace("2023-11-18", "2024-03-01")  # the translator line
    text = text.replace("通常、そのマナ・コストだけである。", "通常、そのマナ・コストのみである。")
    text = text.replace("\n701.34g ", "\n701.34g 予示されたパーマネントは裏向きの間、名前を持たない。\r\n\r\n701.34h ")
    start = text.index("\n701.34d ")
    end = text.index("\n", start + 1)
    text = text[:start] + text[end:]
    path = tmp_path / "JPN_CR_20240301.txt"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture()
def japanese_pair(tmp_path):
    store = Store.open(tmp_path / "kb")
    report = ingest_sources(store, [str(DATA / "JPN_CR_20231117_0.txt"), str(japanese_next_version(tmp_path))], index=False)
    assert not report.failed
    yield store
    store.close()


def test_japanese_pair_diff(japanese_pair):
    old, new = resolve_pair(japanese_pair, "20231117.0", "2024-03-01")
    result = diff_versions(japanese_pair, old, new)
    got = {c.status: [] for c in result.changes}
    for c in result.changes:
        got[c.status].append(c)
    assert [(c.old_id, c.new_id) for c in got["moved"]] == [("cr:701.34g", "cr:701.34h")]
    assert [c.new_id for c in got["added"]] == ["cr:701.34g"]
    assert [c.old_id for c in got["removed"]] == ["cr:701.34d"]
    [edited] = got["changed"]
    assert edited.old_id == "cr:601.2f"
    assert [(o.op, o.text) for o in edited.ops if o.op != "equal"] == [("delete", "だけ"), ("insert", "のみ")]
    assert result.counts()["unchanged"] == len(result.changes) - 4


def test_kb_diff_json_and_text(japanese_pair, tmp_path):
    runner = CliRunner()
    kb = ["--kb-dir", str(tmp_path / "kb")]
    out = runner.invoke(main, [*kb, "diff", "2023-11-17", "20240301.0", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["lang"] == "ja" and data["counts"]["moved"] == 1
    statuses = {c["new"] or c["old"]: c["status"] for c in data["changes"]}
    assert statuses["cr:601.2f"] == "changed" and statuses["cr:701.34h"] == "moved" and statuses["cr:601.2"] == "unchanged"
    text = runner.invoke(main, [*kb, "diff", "20231117.0", "20240301.0"])
    assert text.exit_code == 0
    assert "> 701.34g → 701.34h" in text.output and "[-だけ-]{+のみ+}" in text.output
    missing = runner.invoke(main, [*kb, "diff", "20231117.0", "20990101"])
    assert missing.exit_code == 1 and "20990101: no such version" in missing.output


def test_a_text_that_differs_only_in_renumbered_references_is_changed_and_labelled():
    """2024-02-02 → 2024-03-08: 121.8 cited "rule 729" and then "rule 730" — a change, of its references only."""
    old = [section("121", "Drawing a Card"), rule("121.8", "See rule 729, “Handling Illegal Actions.”", kind=RULE),
           rule("121.9", "Draw a card.", kind=RULE)]
    new = [section("121", "Drawing a Card"), rule("121.8", "See rule 730, “Handling Illegal Actions.”", kind=RULE),
           rule("121.9", "Draw two cards.", kind=RULE)]
    changes = {c.new_id: c for c in diff_nodes(old, new, "en")}
    renumbered, edited = changes["cr:121.8"], changes["cr:121.9"]
    assert (renumbered.status, renumbered.edit) == ("changed", "references")
    assert [(o.op, o.text) for o in renumbered.ops if o.op != "equal"] == [("delete", "729"), ("insert", "730")]
    assert (edited.status, edited.edit) == ("changed", "text")
    assert changes["cr:121"].status == "unchanged" and changes["cr:121"].edit is None


def test_reference_renumbering_in_kb_diff_json_text_and_the_changes_page(tmp_path):
    text = (DATA / "JPN_CR_20231117_0.txt").read_text(encoding="utf-8-sig")
    later = text.replace("和訳 20231117.0 版", "和訳 20240301.0 版").replace("2023年11月17日", "2024年3月1日")
    rule_601_3 = next(line for line in later.splitlines() if line.startswith("601.3. "))
    assert "rule 728〔" in rule_601_3
    later = later.replace(rule_601_3, rule_601_3.replace("rule 728〔", "rule 729〔"))
    newer = tmp_path / "JPN_CR_20240301.txt"
    newer.write_text(later, encoding="utf-8")
    kb = ["--kb-dir", str(tmp_path / "kb")]
    runner = CliRunner()
    assert runner.invoke(main, [*kb, "ingest", "-q", str(DATA / "JPN_CR_20231117_0.txt"), str(newer)]).exit_code == 0
    data = json.loads(runner.invoke(main, [*kb, "diff", "20231117.0", "20240301.0", "--json"]).output)
    [change] = [c for c in data["changes"] if c["status"] != "unchanged"]
    assert (change["new"], change["status"], change["edit"]) == ("cr:601.3", "changed", "references")
    assert data["edits"] == {"text": 0, "references": 1}
    text_out = runner.invoke(main, [*kb, "diff", "20231117.0", "20240301.0"]).output
    assert "~ 601.3  [references renumbered]" in text_out and "references renumbered only 1" in text_out
    history = runner.invoke(main, [*kb, "history", "601.3"]).output
    assert "references renumbered" in history
    assert runner.invoke(main, [*kb, "build", "--out", str(tmp_path / "site")]).exit_code == 0
    page = (tmp_path / "site" / "changes" / "ja-20231117.0-20240301.0.html").read_text(encoding="utf-8")
    assert "変更 1（うち参照番号の変更 1）" in page and "参照番号の変更のみ" in page
