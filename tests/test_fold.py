"""One fold: the search analysis, the rule-number reader, the linker's name lookup and the glossary's 五十音 key all
fold text the same way (kb.fold)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kb import rulenum
from kb.fold import fold, fold_name, fold_with_offsets
from kb.link.index import fold as link_fold
from kb.link.index import loose_fold
from kb.search import analysis


def test_every_stage_folds_alike():
    for text in ("６０１．２ｆ", "ﾏﾅ･ｺｽﾄ", "ＭＡＮＩＦＥＳＴ", "ｶﾞｲｱ", "唱える"):
        assert analysis.fold(text) == fold(text)
        assert link_fold(f"  {text}\u3000") == fold_name(text) == fold(text)
    assert fold("６０１．２ｆ") == "601.2f" and rulenum.normalize("６０１．２ｆ") == "601.2f"
    assert fold("ﾏﾅ･ｺｽﾄ") == "マナ・コスト" and fold("ｶﾞｲｱ") == "ガイア" and fold("ＭＡＮＩＦＥＳＴ") == "manifest"
    assert loose_fold("パーティー") == loose_fold("ﾊﾟｰﾃｨ") == "パーティ"  # built on the one fold


def test_offsets_map_back_to_the_original():
    folded, starts, ends = fold_with_offsets("ｶﾞｲｱ 601")
    assert folded == "ガイア 601"
    assert [("ｶﾞｲｱ 601"[s:e]) for s, e in zip(starts, ends, strict=True)] == ["ｶﾞ", "ｲ", "ｱ", " ", "6", "0", "1"]


_FOLDED_ALIKE = st.text(st.sampled_from("ｶﾞｲｱﾊﾟﾞﾟ\u3099\u309a６０１．ＡＢｃ（）唱えるカカ\u3099ーｰé\u0301İßﬁ ・･"), max_size=12)


@given(_FOLDED_ALIKE | st.text(max_size=12))
def test_fold_is_the_offsets_fold_without_offsets(text):
    assert fold(text) == fold_with_offsets(text)[0]
