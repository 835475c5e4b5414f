"""kb at the size of the real MTG Wiki: N generated article pages ingested beside data/ (and, with ``--english``, the
three English CRs of $KB_CORPUS_DIR), every command a new process, reporting wall, CPU and peak RSS of each.

The pages are MonoBook pages as the wiki serves them: the chrome (head, scripts, sidebar, footer) of the real sample
data/mtgwiki/唱える.html around a generated body — a lead ``<b>title</b>/<i>English</i>``, a TOC, two to five
sections with edit links, paragraphs and lists made of the sample's own sentences, links to other generated articles
(popular ones more often), red links, ``(CR:601.2f)`` references, card names ``《日本語名/English》``, glossary
terms of the sample CR, categories. Titles are distinct and of the kinds the wiki has: compound nouns (誘発型墓地処理),
katakana words (some with a final long vowel: ドラゴー), card pages ``日本語名/English Name``, English titles, and the
sample CR's glossary terms. One page in twenty is a redirect page; one article in ten was reached through a redirect
(``mw-redirectedfrom``: its English name becomes an alias).

For each size: ``kb ingest`` of everything, ``kb build``; then, as new processes on the result: a full link and the
incremental link of one changed article (both rolled back: the link time alone), ``kb ingest`` of one changed
article and ``kb build`` after it (with the pages it rendered), ``kb update`` of one changed article, and
``kb update`` of one new article whose title is a new compound noun; each with its share of ingest + build, in wall
and in CPU time. The one-article ``kb update`` runs ``--updates`` times (3), each with a new body (new citations and
card mentions: an edit build that makes again the pages showing who cites what it cites), then as many times with a
prose edit of the same article (a sentence added, nothing cited otherwise: an edit build of its own pages); the last
lines compare each series' medians across the sizes (the update should cost what it changes, not grow with the wiki)
(``--no-link``: without the two link timings). ``--baseline DIR`` also times the full link with the
kb of another checkout (e.g. /work/main, the code before the name indexes) on the same store.
kb's modules (and the baseline's) are byte-compiled first, as a first run leaves them (this machine sets
PYTHONDONTWRITEBYTECODE: every command would otherwise compile each module it imports again).

``--ingest-only``: for each size only ``kb ingest`` of everything and then ``kb ingest`` of one new article whose
title is a new compound noun (its cost as a share of the whole ingest: the index re-analyses only the texts that hold
the new word). ``--versions 1,30``: ``kb ingest`` of that many English rules versions (the 2026-01-16 CR of
$KB_CORPUS_DIR, redated) in one process, wall, CPU and peak RSS (memory bounded by the batch, not the corpus).

Run: .venv/bin/python bench/bench_wiki_scale.py [--sizes 500,1000] [--english] [--baseline /work/main] [--keep DIR]
     [--ingest-only] [--versions 1,30] [--no-link]
"""

from __future__ import annotations

import argparse
import html
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import REPO, byte_compile, corpus_dir  # noqa: E402

TEMPLATE = REPO / "data" / "mtgwiki" / "唱える.html"
GLOSSARY_TITLES = ("マナ・コスト", "優先権", "状況起因処理", "特別な処理", "総コスト", "予示", "裏向き", "戦場に出る")
NOUNS = ("戦場", "墓地", "手札", "追放", "領域", "誘発", "起動", "能力", "呪文", "対象", "効果", "置換", "軽減", "防御",
         "攻撃", "宣言", "解決", "処理", "状態", "起因", "継続", "単発", "常在", "特性", "色", "種類", "生贄", "魔力",
         "蘇生", "再生", "変身", "召喚", "秘儀", "伝説", "英雄", "装備", "城塞", "迷宮", "結界", "霊気", "次元", "精霊")
SUFFIXES = ("型", "値", "化", "者", "式", "性", "群", "界", "術", "")
KANA = tuple("アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワ"
             "ガギグゲゴザジズゼゾダヂヅデドバビブベボパピプペポ")
TAILS = ("ン", "ッ", "ー", "")
ENGLISH = ("Storm", "Blade", "Arbor", "Void", "Mirror", "Flame", "Stone", "Shade", "Grove", "Tide", "Oath", "Relic",
           "Spire", "Wraith", "Herald", "Forge", "Rune", "Vault", "Ember", "Thorn")
CATEGORIES = ("ルール用語", "キーワード能力", "キーワード処理", "カード個別評価", "俗語", "背景世界", "エキスパンション")
RULES = ("601.2f", "601.2a", "117.3a", "704.5a", "702.2b", "113.6", "603.2", "405.1", "305.1", "601.3", "116.2a",
         "202.1", "701.34a", "109.5", "608.2b")


@dataclass(frozen=True)
class Title:
    name: str  # the page title
    english: str | None  # the English name in the lead (/<i>English</i>), when there is one


def sample_sentences(template: str) -> list[str]:
    """The sentences of the sample article's paragraphs and list items, as plain text."""
    body = template[template.find("<!-- start content -->"):template.find('<div class="printfooter">')]
    texts = [re.sub(r"<[^>]+>", "", m) for m in re.findall(r"<(?:p|li)>(.*?)</(?:p|li)>", body, flags=re.S)]
    sentences = [s.strip() + "。" for t in texts for s in html.unescape(t).split("。") if len(s.strip()) > 8]
    return [html.escape(s, quote=False) for s in sentences]


def make_titles(n: int, rng: random.Random) -> list[Title]:
    """``n`` distinct titles of the wiki's kinds (see the module doc); the sample CR's glossary terms first."""
    seen = {"唱える"}  # data/mtgwiki/ has it
    out = [Title(t, None) for t in GLOSSARY_TITLES[:n]]
    seen.update(t.name for t in out)
    while len(out) < n:
        roll = rng.random()
        english = f"{rng.choice(ENGLISH)} {rng.choice(ENGLISH)}{rng.randint(1, 999)}"
        if roll < 0.4:
            name = "".join(rng.sample(NOUNS, rng.randint(2, 3))) + rng.choice(SUFFIXES)
            title = Title(name, english if rng.random() < 0.5 else None)
        elif roll < 0.7:
            name = "".join(rng.choice(KANA) for _ in range(rng.randint(2, 5))) + rng.choice(TAILS)
            title = Title(name, english if rng.random() < 0.5 else None)
        elif roll < 0.95:
            japanese = f"{rng.choice(NOUNS)}の{''.join(rng.sample(NOUNS, 2))}"
            title = Title(f"{japanese}/{english}", None)
        else:
            title = Title(english, None)
        if title.name not in seen and (title.english is None or title.english not in seen):
            seen.update(x for x in (title.name, title.english) if x)
            out.append(title)
    return out


def wiki_href(title: str) -> str:
    return "/wiki/" + quote(title.replace(" ", "_"), safe="/:")


def link(title: str, text: str | None = None) -> str:
    return f'<a href="{wiki_href(title)}" title="{html.escape(title)}">{html.escape(text or title)}</a>'


def redlink(title: str) -> str:
    return (f'<a href="/index.php?title={quote(title)}&amp;action=edit&amp;redlink=1" class="new" '
            f'title="{html.escape(title)} (存在しないページ)">{html.escape(title)}</a>')


class Pages:
    """Renders the pages of one generated wiki: the sample's chrome around generated bodies."""

    def __init__(self, titles: list[Title], rng: random.Random):
        template = TEMPLATE.read_text(encoding="utf-8")
        self.head = template[:template.find("<!-- start content -->")]
        self.foot = template[template.find('<div class="printfooter">'):]
        self.sentences = sample_sentences(template)
        self.titles = titles
        self.weights = [1 / (rank + 1) for rank in range(len(titles))]  # Zipf: some articles are linked from many
        self.rng = rng

    def chrome(self, title: str, body: str, came_from: str | None, categories: list[str]) -> str:
        head = (self.head.replace("唱える", html.escape(title))
                .replace("%E5%94%B1%E3%81%88%E3%82%8B", quote(title.replace(" ", "_"))))
        if came_from:
            head = head.replace("title=Cast&amp;redirect=no", f"title={quote(came_from)}&amp;redirect=no") \
                       .replace('title="Cast">Cast</a>', f'title="{html.escape(came_from)}">{html.escape(came_from)}</a>')
        else:
            head = re.sub(r'<div id="contentSub">.*?</div>', '<div id="contentSub"></div>', head, flags=re.S)
        cats = " | ".join(f"<span dir='ltr'>{link('カテゴリ:' + c, c)}</span>" for c in categories)
        foot = re.sub(r"<div id=\"mw-normal-catlinks\">.*?</div>",
                      f'<div id="mw-normal-catlinks">{link("特別:Categories", "カテゴリ")}: {cats}</div>',
                      self.foot.replace("%E5%94%B1%E3%81%88%E3%82%8B", quote(title.replace(" ", "_"))), count=1, flags=re.S)
        return head + "<!-- start content -->\n" + body + "\n" + foot

    def sentence(self) -> str:
        out = self.rng.choice(self.sentences)
        roll = self.rng.random()
        if roll < 0.35:
            out = f"{link(self.popular().name)}は、{out}"
        elif roll < 0.45:
            out = f"{redlink(''.join(self.rng.sample(NOUNS, 2)))}の{out}"
        elif roll < 0.6:
            out += f"(CR:{self.rng.choice(RULES)})"
        elif roll < 0.7:
            card = self.rng.choice([t for t in self.rng.sample(self.titles, 8) if "/" in t.name] or [self.titles[-1]])
            out = f"《{html.escape(card.name)}》の{out}"
        elif roll < 0.8:
            out = f"{link(self.rng.choice(GLOSSARY_TITLES))}のとき、{out}"
        return out

    def popular(self) -> Title:
        return self.rng.choices(self.titles, self.weights)[0]

    def article(self, title: Title, came_from: str | None = None, extra: str = "") -> bytes:
        rng = self.rng
        name = title.name.split("/")[0]
        english = title.english or (title.name.split("/", 1)[1] if "/" in title.name else None)
        lead = f"<b>{html.escape(name)}</b>" + (f"/<i>{html.escape(english)}</i>" if english else "")
        sections = [rng.choice(("定義", "解説", "ルール", "利用", "歴史", "主な亜種", "参考")) + str(i)
                    for i in range(rng.randint(2, 5))]
        toc = "".join(f'<li class="toclevel-1"><a href="#{quote(s)}"><span class="tocnumber">{i + 1}</span> '
                      f'<span class="toctext">{s}</span></a></li>' for i, s in enumerate(sections))
        parts = [f"<p>{lead}は、{self.sentence()}{extra}</p>",
                 f'<table id="toc" class="toc" summary="目次"><tr><td><div id="toctitle"><h2>目次</h2></div>'
                 f"<ul>{toc}</ul></td></tr></table>"]
        for number, section in enumerate(sections, 1):
            parts.append(f'<h2><span class="editsection">[<a href="/index.php?title={quote(title.name)}&amp;action=edit'
                         f'&amp;section={number}" title="節を編集: {section}">編集</a>]</span> '
                         f'<span class="mw-headline" id="{quote(section)}">{section}</span></h2>')
            parts += ["<p>" + "".join(self.sentence() for _ in range(rng.randint(1, 4))) + "</p>"
                      for _ in range(rng.randint(1, 3))]
            if rng.random() < 0.5:
                parts.append("<ul>" + "".join(f"<li>{self.sentence()}</li>" for _ in range(rng.randint(2, 5))) + "</ul>")
        parts.append("<ul>" + "".join(f"<li>{link(self.popular().name)}</li>" for _ in range(rng.randint(1, 4))) + "</ul>")
        categories = rng.sample(CATEGORIES, rng.randint(1, 3))
        return self.chrome(title.name, "\n".join(parts), came_from, categories).encode()

    def redirect(self, name: str, target: str) -> bytes:
        body = (f'<div class="redirectMsg"><p>転送先:</p><ul class="redirectText"><li>{link(target)}</li></ul></div>')
        return self.chrome(name, body, None, []).encode()


def generate(folder: Path, n: int, seed: int) -> tuple[list[Title], Pages]:
    """Write ``n`` pages into ``folder`` (one in twenty a redirect page); the titles of the articles and the renderer."""
    rng = random.Random(seed)
    titles = make_titles(n, rng)
    pages = Pages(titles, rng)
    folder.mkdir(parents=True, exist_ok=True)
    articles: list[Title] = []
    for i, title in enumerate(titles):
        if i >= len(GLOSSARY_TITLES) and i % 20 == 19:
            target = rng.choice(articles)
            data = pages.redirect(title.name, target.name)
        else:
            came_from = title.english if title.english and rng.random() < 0.2 else None
            data = pages.article(title, came_from)
            articles.append(title)
        (folder / page_file(title.name)).write_bytes(data)
    return articles, pages


def page_file(title: str) -> str:
    return quote(title, safe="") + ".html"


@dataclass(frozen=True)
class Run:
    wall: float
    cpu: float
    rss_mib: float
    output: str


def measure(args: list[str], env: dict[str, str], cwd: Path = REPO) -> Run:
    """Run one command as a new process in ``cwd`` (``python -c``/``-m`` import from there first); its wall time,
    CPU (user + system) and peak RSS."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        out.seek(0)
        output = out.read().decode(errors="replace")
    if status:
        raise SystemExit(f"{' '.join(args)} failed ({status}):\n{output[-3000:]}")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, output)


LINK_TIMER = """
import json, sys, time
from kb.link.resolve import link
from kb.store import NodeKey, Store
class RolledBack(Exception):
    pass
store = Store.open(sys.argv[1])  # to write: the link runs in a transaction, rolled back
one = NodeKey("", "ja", "wiki:" + sys.argv[2]) if len(sys.argv) > 2 else None
try:
    with store.transaction():
        started = time.perf_counter()
        report = link(store, None, None if one is None else {one})
        seconds = time.perf_counter() - started
        raise RolledBack
except RolledBack:
    pass
print(json.dumps({"seconds": seconds, "resolved": report.total_resolved, "refs": sum(1 for _ in store.refs())}))
"""


def time_link(python: str, kb_dir: Path, env: dict[str, str], article: str | None = None,
              code: Path | None = None) -> tuple[Run, dict]:
    """A link of the whole store (or the incremental one of ``article``), rolled back, in a new process (with the kb
    of ``code`` when given)."""
    env = {**env, "PYTHONPATH": str(code)} if code else env
    run = measure([python, "-c", LINK_TIMER, str(kb_dir), *([article] if article else [])], env, code or REPO)
    return run, json.loads(run.output.strip().splitlines()[-1])


def make_sources(n: int, work: Path, args: argparse.Namespace) -> tuple[Path, Path, list[Title], Pages]:
    """``work/sources``: data/, the English CRs when asked, and ``n`` generated pages in its ``mtgwiki-generated``."""
    sources = work / "sources"
    shutil.copytree(REPO / "data", sources)
    if args.english:
        for name in ("MagicCompRules-2023-11-17.txt", "MagicCompRules-2025-11-14.txt", "MagicCompRules-2026-01-16.txt"):
            shutil.copyfile(corpus_dir() / name, sources / name)
    wiki = sources / "mtgwiki-generated"
    articles, pages = generate(wiki, n, args.seed)
    return sources, wiki, articles, pages


def bench_size(n: int, work: Path, args: argparse.Namespace) -> Growth:
    python = sys.executable
    kb = [python, "-m", "kb.cli", "--kb-dir", str(work / "kb")]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    sources, wiki, articles, pages = make_sources(n, work, args)
    size = sum(f.stat().st_size for f in wiki.iterdir())
    print(f"\n== {n} generated pages ({len(articles)} articles, {n - len(articles)} redirects), "
          f"{size / 1e6:.1f} MB of HTML ({size / n / 1000:.1f} KB a page) beside data/"
          + (" and the three English CRs" if args.english else ""))
    rows: list[tuple[str, Run]] = []
    ingest = measure([*kb, "ingest", str(sources)], env)
    rows.append(("kb ingest (everything)", ingest))
    build = measure([*kb, "build", "--out", str(work / "site")], env)
    rows.append(("kb build", build))
    full = ingest.wall + build.wall
    one = articles[len(articles) // 2]
    if not args.no_link:
        link_run, linked = time_link(python, work / "kb", env)
        one_run, one_linked = time_link(python, work / "kb", env, one.name)
        print(f"  stored references: {linked['refs']}; full link {linked['seconds']:.2f} s = "
              f"{linked['seconds'] / n * 1000:.2f} ms per page; incremental link of one article "
              f"{one_linked['seconds'] * 1000:.0f} ms")
        if args.baseline:
            _, old = time_link(python, work / "kb", env, code=Path(args.baseline))
            print(f"  full link with the kb of {args.baseline}: {old['seconds']:.2f} s = "
                  f"{old['seconds'] / n * 1000:.2f} ms per page ({old['seconds'] / linked['seconds']:.1f}× this one)")
        rows += [("link, whole store (process)", link_run), ("link, one article (process)", one_run)]
    path = wiki / page_file(one.name)
    path.write_bytes(pages.article(one, extra=link(articles[0].name)))
    rows.append(("kb ingest (one article changed)", measure([*kb, "ingest", str(path)], env)))
    one_build = measure([*kb, "build", "--out", str(work / "site")], env)
    rows.append(("kb build (after one article changed)", one_build))
    print("  " + next((line for line in one_build.output.splitlines() if line.startswith("site:")), "?"))
    updates = []  # the same step with new bodies: its median is the figure that is compared across sizes
    for other in articles[1:1 + max(1, args.updates)]:
        path.write_bytes(pages.article(one, extra=link(other.name)))
        updates.append(measure([*kb, "update", str(path), "--out", str(work / "site")], env))
    rows.append(("kb update (one article changed)", updates[0]))
    rows += [(f"kb update (one article changed, {i})", run) for i, run in enumerate(updates[1:], 2)]
    body = path.read_bytes()  # then edits of its prose alone: what it cites and mentions stays
    prose = []
    for i in range(max(1, args.updates)):
        path.write_bytes(body.replace(b"</p>", f"（編集{i + 1}）</p>".encode(), 1))
        prose.append(measure([*kb, "update", str(path), "--out", str(work / "site")], env))
    rows += [(f"kb update (prose edit, {i})", run) for i, run in enumerate(prose, 1)]
    print("  " + next((line for line in prose[-1].output.splitlines() if line.startswith("site:")), "?"))
    new = new_compound_title(pages, {t.name for t in articles})  # a new word of the user dictionary
    new_path = wiki / page_file(new.name)
    new_path.write_bytes(pages.article(new))
    added = measure([*kb, "update", str(new_path), "--out", str(work / "site")], env)
    rows.append(("kb update (new compound title)", added))
    said = ("search index:", "site:", "notice", "static search")
    print(f"  new compound title {new.name}: "
          + "; ".join(line.strip() for line in added.output.splitlines() if line.startswith(said)))
    full_cpu = ingest.cpu + build.cpu  # the machine may be shared: CPU time is the steadier measure
    print(f"  {'command':37} {'wall s':>8} {'CPU s':>8} {'peak RSS':>10} {'ms/page':>8} {'% ingest+build':>15}"
          f" {'% CPU':>7}")
    for label, run in rows:
        print(f"  {label:37} {run.wall:8.2f} {run.cpu:8.2f} {run.rss_mib:7.0f} MiB {run.wall / n * 1000:8.1f}"
              f" {run.wall / full:14.1%} {run.cpu / full_cpu:7.1%}")
    kb_size = sum(f.stat().st_size for f in (work / "kb").rglob("*") if f.is_file())
    site_size = sum(f.stat().st_size for f in (work / "site").rglob("*") if f.is_file())
    print(f"  kb folder {kb_size / 1e6:.0f} MB, site {site_size / 1e6:.0f} MB")
    return n, _medians(updates), _medians(prose)


def _medians(runs: list[Run]) -> tuple[float, float, int]:
    middle = len(runs) // 2
    return sorted(run.wall for run in runs)[middle], sorted(run.cpu for run in runs)[middle], len(runs)


Growth = tuple[int, tuple[float, float, int], tuple[float, float, int]]  # pages; the one-article update's and the
# prose edit's median wall and CPU, and how many runs


def print_growth(growth: list[Growth]) -> None:
    """How the one-article ``kb update`` grows with the wiki (issue 24: it should not): each size's median against
    the smallest size's, for a new body (new citations and mentions) and for a prose edit."""
    if len(growth) < 2:
        return
    for title, which in (("one article changed (a new body)", 1), ("prose edit", 2)):
        n0, (wall0, cpu0, _) = growth[0][0], growth[0][which]
        print(f"\n== kb update, {title}, by size (median of the runs; growth against the smallest size)")
        for n, *series in growth:
            wall, cpu, runs = series[which - 1]
            print(f"  {n:6} pages: {wall:6.2f} s wall, {cpu:6.2f} s CPU (median of {runs}) — ×{wall / wall0:.2f} wall,"
                  f" ×{cpu / cpu0:.2f} CPU for ×{n / n0:g} pages")


def new_compound_title(pages: Pages, taken: set[str]) -> Title:
    """A title no article has that the user dictionary takes as a new word (a compound of nouns: 新規 is an
    adjectival noun, so 新規… titles are not)."""
    from kb.search.userdict import user_words
    from kb.splitter import JapaneseSplitter

    splitter = JapaneseSplitter()
    while True:
        name = "".join(pages.rng.sample(NOUNS, 3)) + "型"
        if name not in taken and user_words(splitter, [name]):
            return Title(name, None)


def bench_ingest(n: int, work: Path, args: argparse.Namespace) -> None:
    """``kb ingest`` of ``n`` generated pages beside data/ (and the English CRs), then of one new compound title."""
    python = sys.executable
    kb = [python, "-m", "kb.cli", "--kb-dir", str(work / "kb")]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    sources, wiki, articles, pages = make_sources(n, work, args)
    ingest = measure([*kb, "ingest", "--quiet", str(sources)], env)
    new = new_compound_title(pages, {t.name for t in articles})
    new_path = wiki / page_file(new.name)
    # the new title is written in a few other articles too: their texts are what the index re-analyses
    for other in articles[1:6]:
        (wiki / page_file(other.name)).write_bytes(pages.article(other, extra=html.escape(new.name)))
    new_path.write_bytes(pages.article(new))
    changed = [str(wiki / page_file(other.name)) for other in articles[1:6]]
    mentions = measure([*kb, "ingest", "--quiet", *changed], env)
    added = measure([*kb, "ingest", str(new_path)], env)
    index_line = next((line for line in added.output.splitlines() if line.startswith("search index:")), "")
    print(f"\n== kb ingest, {n} generated pages ({len(articles)} articles) beside data/"
          + (" and the three English CRs" if args.english else ""))
    print(f"  {'command':42} {'wall s':>8} {'CPU s':>8} {'peak RSS':>10} {'ms/page':>8} {'% of ingest':>12}"
          f" {'% CPU':>7}")
    for label, run in (("kb ingest (everything)", ingest), ("kb ingest (5 articles name the new title)", mentions),
                       (f"kb ingest (new compound title {new.name})", added)):
        print(f"  {label:42} {run.wall:8.2f} {run.cpu:8.2f} {run.rss_mib:7.0f} MiB {run.wall / n * 1000:8.1f}"
              f" {run.wall / ingest.wall:11.1%} {run.cpu / ingest.cpu:6.1%}")
    print(f"  new compound title: {index_line}")


def bench_versions(count: int, work: Path) -> None:
    """``kb ingest`` of ``count`` English rules versions (one text, redated) in one new process."""
    text = (corpus_dir() / "MagicCompRules-2026-01-16.txt").read_text(encoding="utf-8-sig")
    folder = work / "versions"
    folder.mkdir(parents=True)
    for i in range(count):
        year, day = 2000 + i // 28, 1 + i % 28
        dated = text.replace("effective as of January 16, 2026", f"effective as of January {day}, {year}", 1)
        (folder / f"MagicCompRules-{year}-01-{day:02d}.txt").write_text(dated, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = measure([sys.executable, "-m", "kb.cli", "--kb-dir", str(work / "kb"), "ingest", "--quiet", str(folder)], env)
    print(f"  {count:3} rules versions in one kb ingest: {run.wall:8.2f} s wall, {run.cpu:8.2f} s CPU, "
          f"peak RSS {run.rss_mib:7.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="500,1000", help="comma-separated page counts")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--english", action="store_true", help="also ingest the three English CRs of $KB_CORPUS_DIR")
    parser.add_argument("--baseline", help="a checkout whose kb also times the full link (e.g. /work/main)")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it (default: a temporary one)")
    parser.add_argument("--ingest-only", action="store_true", help="only kb ingest, and of one new compound title")
    parser.add_argument("--no-link", action="store_true", help="leave out the link timings (the build and update rows only)")
    parser.add_argument("--versions", help="comma-separated counts of rules versions to ingest in one process")
    parser.add_argument("--updates", type=int, default=3,
                        help="one-article kb updates per size, each with a new body (their median is compared)")
    args = parser.parse_args()
    byte_compile()  # kb's modules as a first run leaves them (bench._common.byte_compile)
    if args.baseline:
        byte_compile(Path(args.baseline))
    if args.versions:
        for count in (int(s) for s in args.versions.split(",")):
            with tempfile.TemporaryDirectory(prefix=f"kb-bench-versions-{count}-") as tmp:
                bench_versions(count, Path(tmp))
        return
    run = bench_ingest if args.ingest_only else bench_size
    growth = []
    for n in (int(s) for s in args.sizes.split(",")):
        if args.keep:
            work = args.keep / str(n)
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            growth.append(run(n, work, args))
        else:
            with tempfile.TemporaryDirectory(prefix=f"kb-bench-wiki-{n}-") as tmp:
                growth.append(run(n, Path(tmp), args))
    if not args.ingest_only:
        print_growth([g for g in growth if g is not None])


if __name__ == "__main__":
    main()
