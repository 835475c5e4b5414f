"""The user dictionary compiled against a stand-in system dictionary (kb.search.userdict._compile_here) is the
dictionary Sudachi's own compiler makes against sudachidict-core — the same bytes but its creation time (what each
costs: bench/bench_userdict.py) — and a lexicon Sudachi refuses is one line naming the file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kb.errors import KbError
from kb.search import userdict
from kb.splitter import JapaneseSplitter, system_dictionary_path

# compound nouns of the kinds the wiki's titles and the glossary have: kanji, katakana with long vowels (one
# collapsed by Sudachi), a middle dot, kana and kanji mixed
NAMES = ["接死", "瞬速", "状況起因処理", "代替コスト", "両面カード", "戦場誘発型", "墓地対象値", "マナ・コスト",
         "ドラゴーン能力", "ミラーーブレード効果", "伝説英雄式", "霊気次元群", "起動型能力", "呪文対象"]
TEXT = ("接死を持つクリーチャーが戦場誘発型の能力で墓地対象値を得る。代替コストを支払い、両面カードを唱える。"
        "ミラーーブレード効果とドラゴーン能力、状況起因処理。伝説英雄式霊気次元群の起動型能力。")
REFERENCE = """import sys
from sudachipy import sudachipy
sudachipy.build_user_dic(system=sys.argv[1], lex=[sys.argv[2]], output=sys.argv[3], description=sys.argv[4])
"""
TIME = slice(24, 32)  # the header's creation time (a u64 after the magic and the version)


def _lexicon(tmp_path: Path) -> Path:
    words = userdict.user_words(JapaneseSplitter(), sorted(NAMES))
    assert len(words) >= 10  # the system dictionary cuts them: user words, each with a reading
    path = tmp_path / "lexicon.csv"
    path.write_text(userdict.lexicon(words), encoding="utf-8")
    return path


def _split(path: Path, text: str) -> list[tuple[str, int, str, str]]:
    from sudachipy import Dictionary, config

    tokenizer = Dictionary(config=config.Config(user=[str(path.resolve())])).tokenizer()
    return [(m.surface(), m.dictionary_id(), m.reading_form(), ",".join(m.part_of_speech())) for m in tokenizer.tokenize(text)]


@pytest.mark.slow  # Sudachi's own compiler: 3–6 s of CPU
def test_the_stand_in_compile_writes_the_bytes_sudachi_writes_against_the_system_dictionary(tmp_path):
    source = _lexicon(tmp_path)
    ours, theirs = tmp_path / "ours.dic", tmp_path / "theirs.dic"
    userdict._compile(source, ours, tmp_path / "stand-in")
    subprocess.run([sys.executable, "-c", REFERENCE, str(system_dictionary_path()), str(source), str(theirs),
                    userdict.DESCRIPTION], check=True)
    a, b = bytearray(ours.read_bytes()), bytearray(theirs.read_bytes())
    assert len(a) == len(b) and a[:TIME.start] == b[:TIME.start] and a[TIME.stop:] == b[TIME.stop:]
    split = _split(ours, TEXT)
    assert split == _split(theirs, TEXT)
    assert {s for s, dic, _, _ in split if dic == 1} >= {"接死", "戦場誘発型", "代替コスト", "ドラゴーン能力"}


def test_a_lexicon_sudachi_refuses_is_one_line_naming_it(tmp_path):
    source = tmp_path / "lexicon.csv"
    source.write_text(userdict.lexicon([("接死", "セッシ")]).replace(f",{userdict.CONNECTION_ID},", ",99999,", 1),
                      encoding="utf-8")
    with pytest.raises(KbError, match=r"lexicon\.csv: Sudachi could not compile the user dictionary \(.*99999") as err:
        userdict._compile(source, tmp_path / "user.dic", tmp_path / "stand-in")
    assert "\n" not in str(err.value)
    assert not (tmp_path / "user.dic").exists()


def test_a_compiled_dictionary_holds_every_word_of_its_lexicon_sudachi_can_read_as_one_word(tmp_path):
    source = _lexicon(tmp_path)
    built = tmp_path / "user.dic"
    userdict._compile(source, built, tmp_path / "stand-in")
    for row in source.read_text(encoding="utf-8").splitlines():
        word, reading = row.split(",")[0], row.split(",")[11]
        if userdict.collapsed(word) == word:  # else Sudachi reads the text with one long vowel: never the word
            assert _split(built, word) == [(word, 1, reading, userdict.POS)]


def test_the_stand_in_is_kept_sparse_and_made_again_when_damaged(tmp_path):
    source, kept = _lexicon(tmp_path), tmp_path / "stand-in"
    first, second, third = tmp_path / "1.dic", tmp_path / "2.dic", tmp_path / "3.dic"
    userdict._compile(source, first, kept)
    [stand_in] = kept.glob("*.dic")
    assert stand_in.stat().st_blocks * 512 < stand_in.stat().st_size // 10  # its matrix of zeros is holes
    made = stand_in.stat().st_mtime_ns
    userdict._compile(source, second, kept)  # from the kept one
    assert stand_in.stat().st_mtime_ns == made
    with stand_in.open("r+b") as f:  # damaged: made again
        f.seek(300)
        f.write(b"\xff" * 8)
    userdict._compile(source, third, kept)
    assert userdict.intact(stand_in) and stand_in.stat().st_mtime_ns != made
    a, b, c = (bytearray(p.read_bytes()) for p in (first, second, third))
    assert a[:TIME.start] == b[:TIME.start] == c[:TIME.start] and a[TIME.stop:] == b[TIME.stop:] == c[TIME.stop:]
