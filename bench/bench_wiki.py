"""MTG Wiki parse speed and memory on a generated corpus of wiki-like pages (~20 KB each, MonoBook markup with
headings, edit links, a TOC, lists, CR references, card links, a quoted rule block, footnotes, categories and
chrome), as a ratio to BeautifulSoup's bare ``get_text()`` over the same pages in the same run. Peak memory is the
resident-set growth of a forked child parsing the first 500 pages (so lxml's and nh3's C heaps count).

Run: .venv/bin/python bench/bench_wiki.py [--pages 5000] [--seed 1]
"""

from __future__ import annotations

import argparse
import html
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ingest.mtgwiki import parse_mtgwiki  # noqa: E402
from ingest.wikititle import title_to_path  # noqa: E402

WORDS = ("呪文", "唱える", "スタック", "コスト", "対象", "プレイヤー", "クリーチャー", "戦場", "優先権", "効果", "能力",
         "マナ", "墓地", "手札", "解決", "誘発", "領域", "宣言", "選択", "支払う")
CARDS = (("ドライアドの東屋", "Dryad Arbor"), ("総くずれ", "Rout"), ("未来予知", "Future Sight"),
         ("虚空の選別者", "Void Winnower"), ("ミラーリ", "Mirari"), ("歯と爪", "Tooth and Nail"))
TARGET_BYTES = 20_000


def sentence(rng: random.Random) -> str:
    parts = [rng.choice(WORDS) + rng.choice(("を", "に", "が", "は", "の")) for _ in range(rng.randint(6, 14))]
    out = "".join(parts) + "。"
    roll = rng.random()
    if roll < 0.25:
        out += f"(CR:{rng.randint(100, 729)}.{rng.randint(1, 9)}{rng.choice('abcdef')})"
    elif roll < 0.45:
        ja, en = rng.choice(CARDS)
        out = f'<a href="{title_to_path(f"{ja}/{en}")}" title="{ja}/{en}">{ja}/{html.escape(en)}</a>は' + out
    elif roll < 0.6:
        word = rng.choice(WORDS)
        out = f'<a href="{title_to_path(word)}" title="{word}">{word}</a>の' + out
    return out


def page(i: int, rng: random.Random) -> bytes:
    title = f"記事{i}"
    body: list[str] = [f"<p><b>{title}</b>/<i>Article {i}</i>は、{sentence(rng)}</p>",
                       '<table id="toc" class="toc"><tr><td><div id="toctitle"><h2>目次</h2></div><ul>'
                       '<li class="toclevel-1"><a href="#.E5.AE.9A.E7.BE.A9">定義</a></li></ul></td></tr></table>']
    size, section = 0, 0
    while size < TARGET_BYTES - 4000:
        section += 1
        name = f"節{section}"
        body.append(f'<h2><span class="editsection">[<a href="/index.php?title={title}&amp;action=edit&amp;section={section}">'
                    f'編集</a>]</span> <span class="mw-headline" id="{name}">{name}</span></h2>')
        body.append("<p>" + "".join(sentence(rng) for _ in range(rng.randint(2, 5))) + "</p>")
        body.append("<ul>" + "".join(f"<li>{sentence(rng)}</li>" for _ in range(rng.randint(2, 6))) + "</ul>")
        size = sum(len(b.encode()) for b in body)
    body.append('<div class="cr-quote"><p>引用：総合ルール 20231117.0</p><ul><li>601 呪文を唱えること<ul>'
                + "".join(f"<li>601.2{c} {sentence(rng)}</li>" for c in "abcd") + "</ul></li></ul></div>")
    body.append('<ol class="references"><li id="cite_note-1"><span class="mw-cite-backlink"><a href="#cite_ref-1">↑</a>'
                '</span> <a class="external text" href="https://magic.wizards.com/">Daily MTG</a></li></ol>')
    return (f'<!DOCTYPE html><html lang="ja"><head><meta charset="UTF-8"><title>{title} - MTG Wiki</title>'
            f'<script>var wgPageName="{title}";</script><style>body{{}}</style></head><body class="mediawiki">'
            f'<div id="content"><h1 id="firstHeading">{title}</h1><div id="bodyContent"><h3 id="siteSub">提供：MTG Wiki</h3>'
            + "".join(body)
            + '<div class="printfooter">「http://mtgwiki.com/」より作成</div><div id="catlinks"><a href="/wiki/'
              '%E3%82%AB%E3%83%86%E3%82%B4%E3%83%AA:%E3%83%AB%E3%83%BC%E3%83%AB">ルール</a></div></div></div>'
              '<div id="column-one"><ul><li><a href="/wiki/メインページ">メインページ</a></li></ul></div>'
              '<div id="footer"><li id="lastmod">最終更新 2024年1月5日 (金) 12:34。</li></div></body></html>').encode()


def timed(fn, pages: list[bytes]) -> float:
    start = time.perf_counter()
    for i, data in enumerate(pages):
        fn(data, i)
    return time.perf_counter() - start


def peak_rss(fn, pages: list[bytes]) -> int:
    """Peak resident memory (bytes) of a forked child that runs ``fn`` over ``pages`` (C heaps included)."""
    pid = os.fork()
    if pid == 0:
        for i, data in enumerate(pages):
            fn(data, i)
        os._exit(0)
    _, status, usage = os.wait4(pid, 0)
    if status:
        raise SystemExit(f"memory run failed (status {status})")
    return usage.ru_maxrss * 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    from bs4 import BeautifulSoup

    rng = random.Random(args.seed)
    pages = [page(i, rng) for i in range(args.pages)]
    total = sum(len(p) for p in pages)
    print(f"corpus: {len(pages)} pages, {total / 1e6:.1f} MB ({total / len(pages) / 1000:.1f} KB per page)")

    def baseline(data: bytes, i: int) -> None:
        BeautifulSoup(data, "lxml").get_text()

    def parse(data: bytes, i: int) -> None:
        doc = parse_mtgwiki(data, f"page{i}.html")
        assert doc.nodes, doc.diagnostics

    t_parse = t_base = 0.0
    for start in range(0, len(pages), 100):  # interleaved, so load changes on a noisy machine hit both alike
        chunk = pages[start:start + 100]
        t_parse += timed(parse, chunk)
        t_base += timed(baseline, chunk)
    sample = pages[:500]
    idle = peak_rss(lambda data, i: None, sample)
    mem_parse = peak_rss(parse, sample) - idle
    mem_base = peak_rss(baseline, sample) - idle
    print(f"parse_mtgwiki:           {t_parse:7.2f} s  {len(pages) / t_parse:7.1f} articles/s  "
          f"peak +{mem_parse / 1e6:5.1f} MB RSS over {len(sample)} pages")
    print(f"BeautifulSoup get_text:  {t_base:7.2f} s  {len(pages) / t_base:7.1f} pages/s     "
          f"peak +{mem_base / 1e6:5.1f} MB RSS over {len(sample)} pages")
    print(f"ratio parse / baseline:  time {t_parse / t_base:.2f}x   peak memory {mem_parse / max(mem_base, 1):.2f}x")

if __name__ == "__main__":
    main()
