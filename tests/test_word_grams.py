"""A changed user word is found through bigrams (kb.search.userdict.word_grams): every text that holds it where
Sudachi could read it (text_holds) has each of the word's bigrams among its own (the index's ``grams`` field, the
static search's ``g/`` shards), or the word is one bigrams cannot find and every text is looked at."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kb.search.analysis import bigram_terms
from kb.search.userdict import text_holds, word_grams

# characters of the kinds the wiki's titles and texts have: kanji, kana, long vowels (folded and collapsed by
# text_holds), middle dots (skipped by the bigrams), half-width kana and voiced marks, Latin, digits, spaces
CHARS = st.sampled_from(list("代替コスト唱える呪文ーｰ・･ｶﾞｺｽﾄabcＡ1１ 。、\n"))
WORDS = st.text(st.sampled_from(list("代替コスト唱える呪文ーｰ・ｶﾞ")), min_size=1, max_size=6)  # mostly user words'


@settings(max_examples=300)
@given(WORDS, st.text(CHARS, max_size=12), st.text(CHARS, max_size=12))
def test_a_text_holding_a_word_has_its_bigrams(word, before, after):
    text = before + word + after
    grams = word_grams(word)
    if grams is not None and text_holds(text, [word]):
        assert grams <= set(bigram_terms(text)), (word, text)


def test_words_bigrams_can_and_cannot_find():
    assert word_grams("代替コスト") == {"代替", "替コ", "コス", "スト"}
    assert word_grams("マナ・コスト") == {"マナ", "ナコ", "コス", "スト"}  # the middle dot skipped, as in texts
    assert word_grams("ドラゴーーン能力") == set(bigram_terms("ドラゴーン能力"))  # as Sudachi reads it: one long vowel
    assert word_grams("呪") is None  # one character: a text's bigrams do not hold it
    assert word_grams("ａｂ呪文") is None  # folded otherwise (ab): not one Japanese run
