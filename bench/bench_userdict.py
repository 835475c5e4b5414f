"""The user dictionary's compile: kb's stand-in (``kb.search.userdict._compile``, against a stand-in system
dictionary) against Sudachi's own compiler (``sudachipy.build_user_dic`` against sudachidict-core), each a child
process, CPU (user + system) of each over several runs, on the compound nouns of tests/test_userdict_compile.py.
The first run builds the stand-in and keeps it (as ``<kb_dir>/userdict/stand-in/``), the later ones compile against
the kept one. Prints each run's CPU and the median ratio (the stand-in was measured at 0.7 s against 5.8 s when it was
written, before it was kept).

Run: .venv/bin/python bench/bench_userdict.py [--runs 3]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kb.search import userdict  # noqa: E402
from kb.splitter import JapaneseSplitter, system_dictionary_path  # noqa: E402

NAMES = ["接死", "瞬速", "状況起因処理", "代替コスト", "両面カード", "戦場誘発型", "墓地対象値", "マナ・コスト",
         "ドラゴーン能力", "ミラーーブレード効果", "伝説英雄式", "霊気次元群", "起動型能力", "呪文対象"]
SUDACHI = """import sys
from sudachipy import sudachipy
sudachipy.build_user_dic(system=sys.argv[1], lex=[sys.argv[2]], output=sys.argv[3], description=sys.argv[4])
"""


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "lexicon.csv"
        source.write_text(userdict.lexicon(userdict.user_words(JapaneseSplitter(), sorted(NAMES))), encoding="utf-8")
        ratios = []
        for run in range(args.runs):
            before = children_cpu()
            userdict._compile(source, Path(tmp) / f"ours{run}.dic", Path(tmp) / userdict.STAND_INS)
            ours = children_cpu() - before
            before = children_cpu()
            subprocess.run([sys.executable, "-c", SUDACHI, str(system_dictionary_path()), str(source),
                            str(Path(tmp) / f"theirs{run}.dic"), userdict.DESCRIPTION], check=True)
            theirs = children_cpu() - before
            ratios.append(ours / theirs)
            print(f"  run {run + 1}: kb's compile {ours:.2f} s CPU{' (the stand-in built)' if run == 0 else ''},"
                  f" Sudachi's {theirs:.2f} s CPU ({ours / theirs:.2f}×)")
        print(f"median ratio {statistics.median(ratios):.2f}× ({args.runs} runs)")


if __name__ == "__main__":
    main()
