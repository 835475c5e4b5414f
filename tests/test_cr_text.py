"""The CR text parser on the Japanese sample and on encoding, line-ending and damage variants of it."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest
from conftest import DATA

from ingest.cr_text import parse_cr_text
from kb.errors import KbError

JA = DATA / "JPN_CR_20231117_0.txt"
SEED_000 = Path(__file__).resolve().parents[2] / "shared" / "seeds" / "000_40cb52731239ad1d.txt"


@pytest.fixture(scope="module")
def ja_doc():
    return parse_cr_text(JA.read_bytes(), str(JA))


def nodes_of(doc):
    return {n.id: n for n in doc.nodes}


def test_header_version_and_dates(ja_doc):
    assert (ja_doc.lang, ja_doc.version, ja_doc.effective_date) == ("ja", "20231117.0", "2023-11-17")


def test_contents_list_is_not_the_body(ja_doc):
    # 用語集 and クレジット appear in the contents too; chapters appear once each as nodes
    chapters = [n for n in ja_doc.nodes if n.kind == "chapter"]
    assert [c.number for c in chapters] == ["1", "6", "7"]
    assert nodes_of(ja_doc)["cr:6"].title == "呪文、能力、効果"


def test_rules_match_the_seed_quote(ja_doc):
    """Seed 000 (MTG Wiki) quotes rules 601.1–601.7 of 20231117.0: every one must come out verbatim."""
    if not SEED_000.exists():
        pytest.skip(f"seed missing: {SEED_000}")
    nodes = nodes_of(ja_doc)
    quoted = [line[2:] for line in SEED_000.read_text(encoding="utf-8").splitlines() if line.startswith("- 601.")]
    assert len(quoted) == 22  # 601.1, 601.2, 601.2a–i, 601.3, 601.3a–f, 601.4–601.7
    for line in quoted:
        number, text = line.split(" ", 1)
        assert nodes[f"cr:{number}"].text == text, number


def test_japanese_references(ja_doc):
    nodes = nodes_of(ja_doc)
    r = nodes["cr:601.2b"]
    targets = [x.target for x in r.refs]
    assert targets == ["700.2", "702.47", "118.8", "118.9", "601.2f", "107.3"]  # rule 118.8、rule 118.9 both found
    r = nodes["cr:601.2"]
    assert [x.target for x in r.refs] == ["601.2a", "601.2b", "601.2c", "601.2d", "601.2f", "601.2g", "601.2h", "601.3", "728"]
    seven28 = r.refs[-1]
    assert r.text[seven28.start : seven28.end] == "728"
    assert r.text[seven28.end :].startswith("〔不正な処理の扱い〕参照")
    assert [x.target for x in nodes["cr:100.1b"].refs] == ["8"]  # セクション8


def test_keyword_titles(ja_doc):
    nodes = nodes_of(ja_doc)
    assert nodes["cr:701.34"].text == "予示する/Manifest"
    assert nodes["cr:701.34a"].text.startswith("「[カードを]予示する/Manifest [a card]」場合")


def test_glossary_names_and_senses(ja_doc):
    nodes = nodes_of(ja_doc)
    cast = nodes["gl:唱える"]
    assert (cast.title, cast.english) == ("唱える", "Cast")
    you = nodes["gl:あなた"]
    assert (you.aliases, you.english) == (("あなたの",), "You, Your")
    face_down = nodes["gl:裏向き"]
    assert face_down.text.startswith("1. カードについて") and "\n2. " in face_down.text
    assert not any(n.kind == "chapter" and n.title and n.title.startswith("カードについて") for n in ja_doc.nodes)


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-le-bom", "utf-16-be-bom", "utf-8"])
@pytest.mark.parametrize("newline", ["\r\n", "\r", "\n"])
def test_encodings_and_line_endings_give_the_same_nodes(ja_doc, encoding, newline):
    text = JA.read_bytes().decode("utf-8-sig").replace("\r\n", "\n").replace("\n", newline)
    if encoding == "utf-16-le-bom":
        data = codecs.BOM_UTF16_LE + text.encode("utf-16-le")
    elif encoding == "utf-16-be-bom":
        data = codecs.BOM_UTF16_BE + text.encode("utf-16-be")
    else:
        data = text.encode(encoding)
    doc = parse_cr_text(data, "variant.txt")
    assert [(n.id, n.text, n.examples, n.refs) for n in doc.nodes] == [(n.id, n.text, n.examples, n.refs) for n in ja_doc.nodes]


def test_example_after_blank_line_and_indented_continuation():
    text = ("マジック総合ルール(和訳 20231117.0 版)\n\n1. ゲームの考え方\n\n100. 総則\n\n100.1. 本文。\n\n"
            "例:最初の例。\n\n    続きの段落。\n100.1a 細則。\n例: 二つ目。\n\n用語集\n\n唱える/Cast\n定義。\n")
    nodes = nodes_of(parse_cr_text(text.encode(), "t.txt"))
    assert nodes["cr:100.1"].examples == ("最初の例。\n続きの段落。",)
    assert nodes["cr:100.1a"].examples == ("二つ目。",)


def test_not_a_cr_file_is_one_clear_error():
    with pytest.raises(KbError, match=r"^notes\.txt:1: not a Comprehensive Rules text"):
        parse_cr_text("買い物リスト\n牛乳\n".encode(), "notes.txt")


def test_truncated_file_is_one_clear_error():
    data = JA.read_bytes()
    head = data[: data.index(b"100.1.")]
    with pytest.raises(KbError, match=r"truncated"):
        parse_cr_text(head, "JPN_CR_cut.txt")


def test_wrong_encoding_names_the_line():
    data = JA.read_bytes().decode("utf-8-sig").encode("utf-8")
    broken = data.replace(b"601.2c", b"601.2c \xff\xfe\xfa")
    with pytest.raises(KbError, match=r"^bad\.txt:\d+: cannot decode as utf-8"):
        parse_cr_text(broken, "bad.txt")


def test_bad_records_are_warned_and_skipped():
    text = ("マジック総合ルール(和訳 20231117.0 版)\n\n1. ゲームの考え方\n\n100. 総則\n\n100.1. 本文。\n\n"
            "100.1. 重複。\n\n100.1a 細則。\n\n用語集\n\n孤立した語\n\n唱える/Cast\n定義。\n")
    doc = parse_cr_text(text.encode(), "dup.txt")
    messages = [str(d) for d in doc.diagnostics]
    assert any("dup.txt:line 9: rule 100.1 appears twice" in m for m in messages)
    assert any("glossary entry '孤立した語' has no definition" in m for m in messages)
    assert {n.id for n in doc.nodes} == {"cr:1", "cr:100", "cr:100.1", "cr:100.1a", "gl:唱える"}


def _with_header(title_version: str, translated: str | None) -> bytes:
    """The sample under another real header: ``和訳 <title_version> 版`` and the translator line's date."""
    text = JA.read_bytes().decode("utf-8-sig").replace("和訳 20231117.0 版", f"和訳 {title_version} 版")
    line = next(x for x in text.splitlines() if x.endswith("に翻訳したものです。"))
    return text.replace(line, line.replace("2023-11-18", translated) if translated else "").encode()


def test_real_header_layout(ja_doc):
    lines = JA.read_bytes().decode("utf-8-sig").splitlines()
    assert lines[0] == lines[2] == "========" and lines[1] == "マジック総合ルール(和訳 20231117.0 版)"
    assert not any("発効" in line for line in lines)
    assert not [d for d in ja_doc.diagnostics if "before the first rule" in d.message]


def test_effective_date_is_the_date_the_translation_translates():
    """JPN_CR_20250725_0.txt: 和訳 20250726.0 版, translated 2025-07-25 — the English CR effective 2025-07-25."""
    doc = parse_cr_text(_with_header("20250726.0", "2025-07-25"), "JPN_CR_20250725_0.txt")
    assert (doc.version, doc.effective_date) == ("20250726.0", "2025-07-25")


def test_a_revision_is_its_own_version():
    doc = parse_cr_text(_with_header("20250919.1", "2025-09-19"), "JPN_CR_20250919_1.txt")
    assert (doc.version, doc.effective_date) == ("20250919.1", "2025-09-19")


def test_without_a_translation_line_the_version_gives_the_date():
    doc = parse_cr_text(_with_header("20260116.0", None), "JPN_CR_20260116_0.txt")
    assert (doc.version, doc.effective_date) == ("20260116.0", "2026-01-16")


def test_cp932_japanese_file_gives_the_same_nodes(ja_doc):
    data = JA.read_bytes().decode("utf-8-sig").encode("cp932")
    doc = parse_cr_text(data, "JPN_CR_sjis.txt")
    assert [(n.id, n.text, n.refs) for n in doc.nodes] == [(n.id, n.text, n.refs) for n in ja_doc.nodes]
    assert [d.message for d in doc.diagnostics] == [d.message for d in ja_doc.diagnostics]  # the excerpt's note only
    assert len(doc.diagnostics) == 1 and doc.diagnostics[0].message.startswith("incomplete:")


def test_utf8_with_a_few_windows_1252_bytes_is_utf8_with_a_warning_per_line(corpus_dir):
    """Like the English CR of 2013-07-11: a few Windows-1252 quotes in UTF-8 text, never read as CP932."""
    source = corpus_dir / "MagicCompRules-2023-11-17.txt"
    original = parse_cr_text(source.read_bytes(), str(source))
    lines = source.read_bytes().decode("utf-8-sig").splitlines(keepends=True)
    hit = [i for i, line in enumerate(lines) if line.startswith("702.") and "“" in line][:2]
    for i in hit:  # one curly quote of each line written as Windows-1252 bytes (0x93 “, 0x94 ”) in the UTF-8 text
        lines[i] = lines[i].replace("“", "\x00", 1).replace("”", "\x01", 1)
    data = "".join(lines).encode("utf-8").replace(b"\x00", b"\x93").replace(b"\x01", b"\x94")
    doc = parse_cr_text(data, "MagicCompRules_20130711.txt")
    assert [(n.id, n.text, n.examples) for n in doc.nodes] == [(n.id, n.text, n.examples) for n in original.nodes]
    warnings = [str(d) for d in doc.diagnostics if "Windows-1252" in d.message]
    assert warnings == [f"MagicCompRules_20130711.txt:line {i + 1}: not UTF-8: read 0x93 as '“', 0x94 as '”'"
                        " (Windows-1252)" for i in hit]



def test_charset_labels_boms_and_fallbacks_are_written_only_in_decode():
    """ingest/decode.py is the one charset policy: no other module under ingest/ or kb/ spells a charset label other
    than UTF-8 / ASCII, a list of codecs (a fallback order), a byte-order mark, or a pattern sniffing a declared
    charset. A new parser calls ingest.decode instead."""
    import ast
    import re
    from pathlib import Path

    from ingest.decode import EUC_JP_LABELS, SHIFT_JIS_LABELS, codec_for

    def label(node: ast.AST) -> str | None:  # the codec a constant names, if it is a text encoding's label
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
            return None
        if not re.fullmatch(r"(?=.*[A-Za-z])[\w.:-]{2,40}", node.value, re.A):  # a label: a word, not a number
            return None
        if node.value.strip().lower().replace("_", "-") in SHIFT_JIS_LABELS | EUC_JP_LABELS:
            return "cp932"
        codec = codec_for(node.value)
        return codec if codec and codecs.lookup(codec)._is_text_encoding else None

    repo = Path(__file__).resolve().parent.parent
    found = []
    for folder in ("kb", "ingest"):
        for path in sorted((repo / folder).rglob("*.py")):
            if path.relative_to(repo).as_posix() == "ingest/decode.py":
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                          if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                          and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
            where = f"{path.relative_to(repo)}"
            for node in ast.walk(tree):
                if isinstance(node, ast.List | ast.Tuple | ast.Set | ast.Dict):
                    items = node.keys + node.values if isinstance(node, ast.Dict) else node.elts
                    labels = [c for c in map(label, [i for i in items if i is not None]) if c]
                    if len(labels) >= 2:
                        found.append(f"{where}:{node.lineno}: a list of charsets {labels}")
                elif (codec := label(node)) and codec not in ("utf-8", "ascii") and id(node) not in docstrings:
                    found.append(f"{where}:{node.lineno}: charset label {node.value!r}")  # type: ignore[attr-defined]
                elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "codecs" \
                        and node.attr.startswith("BOM"):
                    found.append(f"{where}:{node.lineno}: a byte-order mark")
                elif isinstance(node, ast.Constant) and isinstance(node.value, str | bytes) and id(node) not in docstrings:
                    text = node.value.decode("latin-1") if isinstance(node.value, bytes) else node.value
                    if re.search(r"(?i)(charset|encoding)\\s", text):
                        found.append(f"{where}:{node.lineno}: a pattern sniffing a declared charset")
    assert found == []
