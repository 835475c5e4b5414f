"""The Sudachi user dictionary: glossary terms and MTG Wiki titles as single words of the search analysis.

Sudachi's system dictionary does not know the game's words: it cuts 接死 into 接 + 死 and 瞬速 into 瞬 + 速, so the
query 死 matched every rule about deathtouch. :func:`prepare` reads the stored Japanese glossary terms (with their
aliases) and MTG Wiki article titles, keeps each one the system dictionary cuts into two or more pieces that are all
nouns, prefixes or suffixes (a compound noun: 接死, 状況起因処理, 両面カード — not a phrase such as 戦場に出る or a
verb such as 唱える), compiles them into ``<kb_dir>/userdict/<digest>.dic`` (``名詞,普通名詞,一般``, the reading
its source gives or :func:`kb.search.names.reading_of` knows, else Sudachi's reading of the pieces) and hands back
a :class:`kb.splitter.JapaneseSplitter` splitting with it. The digest covers the words and the system dictionary's
version, so it names the analysis (:attr:`kb.splitter.JapaneseSplitter.dictionary_id`): the search index records
it, and when it changes re-analyses only the texts that hold a word added, removed or read otherwise (the lexicon of
each dictionary is kept beside it, ``<digest>.csv``: :func:`lexicon_words`), and so does the static search
(:func:`words_changed_in`). The index still holds a
user word's pieces of two or more characters (状況起因処理
→ 起因), as it holds a system word's mode-A parts.

Damage: each compiled dictionary has its SHA-256 beside it (``<digest>.sha256``, written after it); a dictionary
whose file is missing, cut or changed is not :func:`intact`: a writer compiles it again (:func:`prepare`), a reader
splits without it and says so (:func:`kb.search.index.reader_staleness`), instead of failing inside Sudachi.

Entry points: :func:`prepare` (build if needed; called by the index update and the site build) and
:func:`recorded` (the dictionary an index recorded, for a searcher). Both take the command's splitter and return
the splitter with the dictionary (the same one when it already has it); nothing is switched in the process.

Compiling a dictionary costs about 0.25 s, nearly all of it fixed (Sudachi's own compiler spends 5–6 s and 700 MiB
indexing the whole system dictionary first; :func:`_compile_here` compiles against a stand-in of it, kept in
``<kb_dir>/userdict/stand-in/`` after the first compile, which builds it in 0.45 s more, and writes the same bytes),
in a process of its own (:func:`_compile`), so a new name costs its documents, not a compile. With
``$KB_USERDICT_CACHE`` set to a folder, a compiled dictionary is also kept there (named by its digest and the SudachiPy
version, written atomically, never pruned) and copied from there by any knowledge base that needs the same words —
the test suite sets it: it ingests the same sample into about a hundred fresh knowledge bases.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from kb.errors import KbError
from kb.fold import fold
from kb.model import ARTICLE, GLOSSARY
from kb.splitter import JapaneseSplitter, system_dictionary_path
from kb.store import Store

FOLDER = "userdict"
CHECKSUM_SUFFIX = ".sha256"  # beside each compiled dictionary: its SHA-256
LEXICON_SUFFIX = ".csv"  # beside each compiled dictionary: its words (see lexicon_words)
SHARED_ENV = "KB_USERDICT_CACHE"  # a folder of compiled dictionaries shared by knowledge bases (see the module doc)
STAND_INS = "stand-in"  # the folder of the kept stand-in system dictionaries (see _stand_in)
KEEP = 4  # dictionaries kept (a searcher of another process may still use an older one)
COMPOUND_POS = frozenset(["名詞", "接頭辞", "接尾辞"])
POS = "名詞,普通名詞,一般,*,*,*"
CONNECTION_ID = 5146  # the left and right connection id of 名詞,普通名詞,一般 in sudachidict-core
COST = 3000  # below the cost of the pieces' path, so the whole word wins
_WORD = re.compile(r"^(?:(?![\x00-\x7f])[\w])+$")  # Japanese word characters only: no spaces, dots, Latin


def installed_version(distribution: str, package: str) -> str:
    """The installed version of ``distribution`` (whose import name is ``package``), "none" when it is not installed:
    read from the name of its ``<name>-<version>.dist-info`` folder beside the package, as importlib.metadata reads
    it, which otherwise costs every kb process tens of milliseconds (it parses metadata with the email package);
    importlib.metadata only when there is no such folder (an installation without one)."""
    from importlib.util import find_spec

    spec = find_spec(package)
    if spec is None:
        return "none"
    folder = None
    if spec.origin:  # a package's __init__.py, or a module's file
        folder = Path(spec.origin).parent.parent if spec.submodule_search_locations is not None else Path(spec.origin).parent
    prefix = distribution.replace("-", "_").lower() + "-"
    if folder is not None and folder.is_dir():
        for entry in os.scandir(folder):
            name = entry.name.lower()
            if name.startswith(prefix) and name.endswith(".dist-info") and entry.is_dir():
                return entry.name[len(prefix):-len(".dist-info")]
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "none"


def candidate_names(store: Store) -> list[str]:
    """The Japanese glossary terms (and aliases) and MTG Wiki titles of the store, folded, each once, sorted."""
    names: set[str] = set()
    for _key, _kind, title, aliases, _english in store.name_rows(lang="ja", kinds=(GLOSSARY, ARTICLE)):
        if title:
            names.update([title, *aliases])
    return sorted({fold(n) for n in names})


def user_words(splitter: JapaneseSplitter, names: list[str],
               readings: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """(word, reading) for each name the system dictionary cuts into compound-noun pieces (see the module doc);
    ``readings``: the readings sources give, by name."""
    from kb.search.names import reading_of

    if not names:  # no Japanese names (an English-only store): the system dictionary is not even loaded
        return []
    tokenizer = splitter.tokenizer(system=True)
    _, mode_c = splitter.modes
    out = []
    for name in names:
        if not 2 <= len(name) <= 24 or not _WORD.match(name):
            continue
        pieces = tokenizer.tokenize(name, mode_c)
        if len(pieces) < 2 or any(p.part_of_speech()[0] not in COMPOUND_POS for p in pieces):
            continue
        reading = ((readings or {}).get(name) or reading_of(splitter, name)
                   or "".join(p.reading_form() or p.surface() for p in pieces))
        out.append((name, reading))
    return out


def lexicon(words: list[tuple[str, str]]) -> str:
    """The Sudachi lexicon CSV of the words."""
    return "".join(f"{w},{CONNECTION_ID},{CONNECTION_ID},{COST},{w},{POS},{r},{w},*,A,*,*,*,*\n" for w, r in words)


def prepare(store: Store, splitter: JapaneseSplitter) -> JapaneseSplitter:
    """``splitter`` with the user dictionary of ``store``'s names, built when missing (with none when no name needs
    one: the system dictionary alone); its :attr:`~kb.splitter.JapaneseSplitter.dictionary_id` is the digest. The
    dictionary the same names made last is remembered (:data:`LAST`, by a hash SQLite makes of the nodes' names
    and readings: :meth:`kb.store.Store.name_digest`): the index update and the site build of one ``kb update``,
    and every build whose names did not change, neither read the names nor look them up in Sudachi again."""
    from kb.codedigest import code_digest
    from kb.search.names import source_readings

    folder = store.kb_dir / FOLDER
    key = hashlib.sha256(f"{code_digest()}\n{installed_version('sudachidict-core', 'sudachidict_core')}\n"
                         f"{store.name_digest('ja', (GLOSSARY, ARTICLE))}".encode()).hexdigest()
    known = _last(folder, key)
    if known == "":
        return splitter.with_user_dictionary(None)
    if known is not None and intact(path := folder / f"{known}.dic") and lexicon_words(store, known) is not None:
        return splitter.with_user_dictionary(path)
    given = {fold(name): reading for name, reading in source_readings(store).items()}
    names = candidate_names(store)
    words = user_words(splitter, names, given)
    if not words:
        _remember(folder, key, "")
        return splitter.with_user_dictionary(None)
    csv = lexicon(words)
    path = folder / f"{_digest(csv)}.dic"
    if not intact(path):
        _build(csv, folder, path)
    if lexicon_words(store, path.stem) is None:  # beside it, its words: what the index diffs a new dictionary with
        part = path.with_name(f".{path.stem}{LEXICON_SUFFIX}.{os.getpid()}")
        part.write_text(csv, encoding="utf-8")
        os.replace(part, path.with_suffix(LEXICON_SUFFIX))
    _remember(folder, key, path.stem)
    return splitter.with_user_dictionary(path)


LAST = "last-names"  # in the dictionaries' folder: "<key of the names> <digest of their dictionary>" (see prepare)


def _last(folder: Path, key: str) -> str | None:
    """The digest of the dictionary the names ``key`` made ('' = none), when they are the names last prepared."""
    try:
        recorded, _, digest = (folder / LAST).read_text(encoding="ascii").partition(" ")
    except (OSError, ValueError):
        return None
    digest = digest.strip()
    return digest if recorded == key and (digest == "" or re.fullmatch("[0-9a-f]{16}", digest)) else None


def _remember(folder: Path, key: str, digest: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    part = folder / f".{LAST}.{os.getpid()}"
    part.write_text(f"{key} {digest}\n", encoding="ascii")
    os.replace(part, folder / LAST)


def changed_words(store: Store, old: str, new: str) -> frozenset[str] | None:
    """The words added, removed or read otherwise from the dictionary ``old`` to ``new`` of ``store`` (digests; ''
    = none), None when the words of either are not known (:func:`lexicon_words`). Only a text that
    :func:`text_holds` one of them is analysed otherwise by the two."""
    return words_changed_in(store.kb_dir / FOLDER, old, new)


def words_changed_in(folder: Path, old: str, new: str) -> frozenset[str] | None:
    """:func:`changed_words` of the dictionaries in ``folder`` (the folder of a splitter's user dictionary: the
    site build's static search has no store at hand)."""
    before, after = _words_in(folder, old), _words_in(folder, new)
    if before is None or after is None:
        return None
    return frozenset(w for w in before.keys() | after.keys() if before.get(w) != after.get(w))


_LONG_VOWELS = re.compile("ー{2,}")


def collapsed(text: str) -> str:
    """Folded text with each run of long-vowel marks as one, as Sudachi reads its input (its prolonged-sound-mark
    plugin): a user word can match in a text only where its collapsed form is in the text's."""
    return _LONG_VOWELS.sub("ー", text)


def text_holds(text: str, words: Iterable[str]) -> bool:
    """Whether ``text`` holds one of the user words ``words`` where Sudachi could read it (folded, long vowels
    collapsed): a text that holds none is split the same with or without them — Sudachi's lattice has another
    edge only where a word's surface is (and the analysis hands Sudachi whole Japanese runs, which a word's
    characters never end)."""
    folded = collapsed(fold(text))
    return any(collapsed(w) in folded for w in words)


def word_grams(word: str) -> set[str] | None:
    """The character bigrams (:func:`kb.search.analysis.bigram_terms`) that every text :func:`text_holds` ``word``
    in has among its own — found so through an index of bigrams —, or None when a text can hold it without: its
    collapsed fold must be folded already and one Japanese run (:func:`kb.search.analysis.is_japanese_run`) of two
    or more characters but middle dots (a word of one such character, or with another one, stands in a text's runs
    otherwise)."""
    from kb.search.analysis import MIDDLE_DOTS, bigram_terms, is_japanese_run

    seen = collapsed(word)
    if fold(seen) != seen or not is_japanese_run(seen) or sum(c not in MIDDLE_DOTS for c in seen) < 2:
        return None
    return set(bigram_terms(seen))


def _digest(csv: str) -> str:
    """The name of the dictionary of the lexicon ``csv``: it covers the words and the system dictionary's version."""
    return hashlib.sha256(f"{installed_version('sudachidict-core', 'sudachidict_core')}\n{csv}".encode()).hexdigest()[:16]


def lexicon_words(store: Store, digest: str) -> dict[str, str] | None:
    """word → reading of the dictionary ``digest`` of ``store`` ('' = none: no words), read from the lexicon kept
    beside it (``<digest>.csv``, checked against the digest it is named by); None when it is missing or is not the
    lexicon of that digest. :func:`kb.search.index.update_index` re-analyses only the texts holding a word that
    differs between two dictionaries."""
    return _words_in(store.kb_dir / FOLDER, digest)


def _words_in(folder: Path, digest: str) -> dict[str, str] | None:
    if not digest:
        return {}
    try:
        csv = (folder / f"{digest}{LEXICON_SUFFIX}").read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None
    if _digest(csv) != digest:
        return None
    rows = [line.split(",") for line in csv.splitlines()]
    return {row[0]: row[11] for row in rows if len(row) > 11}


def recorded(store: Store, digest: str, splitter: JapaneseSplitter) -> JapaneseSplitter:
    """``splitter`` with the dictionary ``digest`` of ``store`` (as recorded by the index; '' = none), or with none
    when its file is missing or damaged (:func:`kb.search.index.reader_staleness` then says so)."""
    path = dictionary_path(store, digest)
    return splitter.with_user_dictionary(path if digest and intact(path) else None)


def dictionary_path(store: Store, digest: str) -> Path:
    """The compiled dictionary ``digest`` of ``store``."""
    return store.kb_dir / FOLDER / f"{digest}.dic"


def intact(path: Path) -> bool:
    """Whether the compiled dictionary ``path`` is as it was written: its SHA-256 is the one recorded beside it."""
    try:
        recorded = path.with_suffix(CHECKSUM_SUFFIX).read_text(encoding="ascii").strip()
        return recorded == hashlib.sha256(path.read_bytes()).hexdigest()
    except (OSError, ValueError):
        return False


STAND_IN_SURFACE = "＊"  # the one word of each part of speech of the stand-in system dictionary (see _compile_here)
_SIGNATURE = re.compile(rb"[0-9]{14}-[0-9a-f]{8}")  # a Sudachi dictionary's signature: its build time and a hash
DESCRIPTION = "kb: glossary terms and MTG Wiki titles"  # in each compiled dictionary's header
HEADER_BYTES = 256  # a compiled dictionary's header (magic, version, time, description, signature) is in these


def _compile(source: Path, built: Path, stand_ins: Path) -> None:
    """Compile the lexicon ``source`` into ``built`` in a process of its own (:func:`_compile_here`; the stand-in
    system dictionary kept in ``stand_ins``): the 200 MiB it takes are given back when that process ends instead
    of staying in the writer's."""
    root = str(Path(__file__).resolve().parents[2])  # the folder kb is imported from, for the child
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    done = subprocess.run([sys.executable, "-c", "import sys\nfrom kb.search.userdict import _compile_here\n"
                           "_compile_here(*sys.argv[1:])", str(system_dictionary_path()), str(source), str(built),
                           str(stand_ins)], capture_output=True, text=True, env=env)
    if done.returncode != 0 or not built.is_file():
        why = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise KbError(f"{source}: Sudachi could not compile the user dictionary ({why})")


def _compile_here(system: str, source: str, built: str, stand_ins: str) -> None:
    """Compile the lexicon ``source`` into ``built`` as Sudachi compiles it against the system dictionary
    ``system``, at a fraction of the cost: Sudachi's user-dictionary compiler first indexes every word of the system
    dictionary by its surface (to resolve a word's split parts given as words; this lexicon gives none), 5–6 s of
    CPU and 700 MiB whatever the lexicon's size. Here the lexicon is compiled against a stand-in system dictionary
    (:func:`_stand_in`, kept in the folder ``stand_ins``): the parts of speech of ``system`` in its order, one word
    each (:data:`STAND_IN_SURFACE`), and a connection matrix of no costs just large enough for :data:`CONNECTION_ID`
    — what the compiler reads of a system dictionary for words like these: a part of speech's id, the bounds of a
    connection id. The output is then the bytes Sudachi writes against ``system`` but for two fields of its
    header: its build time, and the signature of the system dictionary it was compiled against (checked when it
    is loaded), which is set to ``system``'s (``tests/test_userdict_compile.py`` compares the two compilers' bytes).
    Checked before it is handed back: loaded with ``system``, it holds each word of the lexicon (that Sudachi
    can read: :func:`collapsed`)."""
    from sudachipy import Dictionary, config, sudachipy

    real = Dictionary(config=config.Config(system=system))
    pos: list[str] = []
    while (part := real.pos_of(len(pos))) is not None:
        pos.append(",".join(part))
    with tempfile.TemporaryDirectory(prefix="kb-userdict-") as tmp:
        stand_in = _stand_in(pos, Path(stand_ins), Path(tmp) / "system.dic")
        sudachipy.build_user_dic(system=str(stand_in), lex=[source], output=built,
                                 description=DESCRIPTION)
        data = bytearray(Path(built).read_bytes())
        ours, theirs = _signature(stand_in), _signature(Path(system))
        at = data.find(ours, 0, HEADER_BYTES)
        if not ours or not theirs or len(ours) != len(theirs) or at < 0:
            raise KbError(f"{built}: not the Sudachi dictionary header this compiler knows (no signature)")
        data[at:at + len(ours)] = theirs
    Path(built).write_bytes(data)
    loaded = Dictionary(config=config.Config(system=system, user=[str(Path(built).resolve())]))
    for row in Path(source).read_text(encoding="utf-8").splitlines():
        word = row.split(",")[0]
        if collapsed(word) == word and not any(m.dictionary_id() == 1 for m in loaded.lookup(word)):
            raise KbError(f"{built}: the compiled user dictionary does not hold {word}")


def _stand_in(pos: list[str], folder: Path, to: Path) -> Path:
    """A stand-in system dictionary for the parts of speech ``pos`` (:func:`_compile_here`) at ``to``, linked from
    the one kept in ``folder``, named by what it is made of, its SHA-256 beside it; built and kept there first when
    it is missing or damaged. Building it is most of a compile (0.5 s: a 53 MB connection matrix of zeros), so it is
    kept, as a sparse file. Linked, it stays the same file while another process publishes another."""
    from sudachipy import sudachipy

    made_of = "\n".join([installed_version("sudachipy", "sudachipy"), str(CONNECTION_ID), *pos])
    kept = folder / f"{hashlib.sha256(made_of.encode()).hexdigest()[:16]}.dic"
    try:
        recorded = kept.with_suffix(CHECKSUM_SUFFIX).read_text(encoding="ascii").strip()
        os.link(kept, to)
        if hashlib.sha256(to.read_bytes()).hexdigest() == recorded:
            return to
        to.unlink()
    except (OSError, ValueError):
        to.unlink(missing_ok=True)
    matrix, words = to.with_name("matrix.def"), to.with_name("stand-in.csv")
    matrix.write_text(f"{CONNECTION_ID + 1} {CONNECTION_ID + 1}\n", encoding="ascii")
    w = STAND_IN_SURFACE
    words.write_text("".join(f"{w},0,0,0,{w},{p},{w},{w},*,A,*,*,*,*\n" for p in pos), encoding="utf-8")
    sudachipy.build_system_dic(matrix=str(matrix), lex=[str(words)], output=str(to), description="stand-in")
    data = to.read_bytes()
    folder.mkdir(parents=True, exist_ok=True)
    part = folder / f".{kept.name}.{os.getpid()}"
    with part.open("wb") as out:  # the zeros as holes
        for at in range(0, len(data), 1 << 16):
            block = data[at:at + (1 << 16)]
            if block.count(0) == len(block):
                out.seek(len(block), os.SEEK_CUR)
            else:
                out.write(block)
        out.truncate(len(data))
    checksum = part.with_suffix(CHECKSUM_SUFFIX)
    checksum.write_text(hashlib.sha256(data).hexdigest() + "\n", encoding="ascii")
    os.replace(part, kept)
    os.replace(checksum, kept.with_suffix(CHECKSUM_SUFFIX))  # after the dictionary: without it, not kept
    return to


def _signature(path: Path) -> bytes:
    """The signature in the header of the dictionary ``path`` (b'' when there is none): of a system dictionary, its
    own; of a user dictionary, the one of the system dictionary it was compiled against."""
    with path.open("rb") as f:
        found = _SIGNATURE.findall(f.read(HEADER_BYTES))
    return found[0] if len(found) == 1 else b""


def _build(csv: str, folder: Path, path: Path) -> None:
    shared = os.environ.get(SHARED_ENV)
    cached = Path(shared) / f"{path.stem}-sudachipy{installed_version('sudachipy', 'sudachipy')}.dic" if shared else None
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        source, built = Path(tmp) / "lexicon.csv", Path(tmp) / "user.dic"
        if cached is not None and cached.is_file():
            shutil.copyfile(cached, built)
        else:
            source.write_text(csv, encoding="utf-8")
            _compile(source, built, folder / STAND_INS)
            if cached is not None:  # published whole or not at all: another process may be reading the folder
                cached.parent.mkdir(parents=True, exist_ok=True)
                part = cached.with_name(f".{cached.name}.{os.getpid()}")
                shutil.copyfile(built, part)
                os.replace(part, cached)
        checksum = Path(tmp) / "user.sha256"
        checksum.write_text(hashlib.sha256(built.read_bytes()).hexdigest() + "\n", encoding="ascii")
        built.replace(path)
        checksum.replace(path.with_suffix(CHECKSUM_SUFFIX))  # after the dictionary: without it, not intact
    for stale in sorted(folder.glob("*.dic"), key=lambda p: p.stat().st_mtime, reverse=True)[KEEP:]:
        stale.unlink(missing_ok=True)
        stale.with_suffix(CHECKSUM_SUFFIX).unlink(missing_ok=True)
        stale.with_suffix(LEXICON_SUFFIX).unlink(missing_ok=True)
