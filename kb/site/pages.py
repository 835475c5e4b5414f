"""Page producers: each turns :class:`SiteData` into :class:`Page` records (path, template, context), or into
:class:`PageGroup` s of pages made only when the inputs the group names change (:mod:`kb.site.page`).

A page's context is plain JSON-able data holding everything the page shows (its shapes: :mod:`kb.site.contexts`;
links as URLs: the hover previews of referenced rules come from ``previews/<section>.js``, made by
:func:`preview_pages`); the builder hashes it with the template to decide whether the page must be re-rendered. To
add a kind of page, write ``def my_pages(site) -> Iterable[Page]`` and append it to :data:`PAGE_PRODUCERS` (or pass
``producers=[*PAGE_PRODUCERS, my_pages]`` to :func:`kb.site.build_site`).
"""

from __future__ import annotations

import hashlib
import marshal
import unicodedata
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any

from kb import rulenum
from kb.fold import fold
from kb.ids import id_name
from kb.model import CHAPTER, GLOSSARY, SECTION, SUBRULE, Node
from kb.site.changes import LANG_NAMES, change_pages, history_context
from kb.site.chrome import CARDS_INDEX, CHANGES_INDEX, site_context
from kb.site.contexts import (
    Bullet,
    JaContext,
    LangText,
    LinkContext,
    NodeContext,
    Pager,
    RuleContext,
    Segment,
    SiteContext,
    TermContext,
    TocItem,
)
from kb.site.page import Deferred, Page, PageGroup
from kb.site.records import Archive, Entry, Link, SiteData
from kb.site.render import article_html, article_outline
from kb.store import NodeKey
from kb.urls.paths import legacy_page_for_id, rule_page, section_page, typed_page_for_id
from kb.urls.where import archive_glossary, archive_root, term_anchor
from kb.versions.current import JA_STATUSES


def segments(text: str, links: list[Link]) -> list[Segment]:
    """``text`` cut at its links: plain strings and [text, target, kind] lists (target None = unresolved)."""
    out: list[Segment] = []
    pos, size = 0, len(text)
    for start, end, target, kind in links:
        if start < pos or end > size or end <= start:
            continue  # overlaps an earlier link or out of range
        if start > pos:
            out.append(text[pos:start])
        out.append([text[start:end], target, kind])
        pos = end
    if pos < size:
        out.append(text[pos:])
    return out


def words_head(text: str, limit: int) -> str:
    """``" ".join(text.split())[:limit]``, splitting only as much of a long text as it takes (an article is 15,000
    characters; a page shows its first 120): the words of a prefix are a prefix of the words of the text."""
    size = 2 * limit + 16
    while size < len(text):
        head = " ".join(text[:size].split())
        if len(head) >= limit:
            return head[:limit]
        size *= 4
    return " ".join(text.split())[:limit]


def _langs(site: SiteData, entry: Entry) -> list[LangText]:
    """The texts of an entry, Japanese first."""
    out: list[LangText] = []
    for lang in ("ja", "en"):
        node = entry.nodes.get(lang)
        if node is None:
            continue
        out.append({"lang": lang, "title": node.title, "english": node.english,
                    "text": segments(node.text, entry.links.get(lang, [])),
                    "examples": list(node.examples), "aliases": list(node.aliases)})
    return out


def rule_context(site: SiteData, entry: Entry, memo: dict[str, RuleContext]) -> RuleContext:
    """What a rule block shows (made once per rule in ``memo``: it appears on its section page and on rule pages)."""
    number = entry.number
    assert number is not None  # every rule entry has its number (kb.site.gather)
    if number not in memo:
        history = history_context(site, {lang: node.number or node.id for lang, node in entry.nodes.items()})
        memo[number] = {"number": number, "kind": entry.kind, "label": entry.label, "url": entry.url,
                        "page": rule_page(number), "langs": _langs(site, entry), "cited_by": entry.cited_by,
                        "history": history, **ja_context(site, entry)}
    return memo[number]


JA_STATUS_NOTES = {"outdated": "英語原文が更新されています（和訳は旧版のもの）", "missing": "未翻訳"}


def ja_context(site: SiteData, entry: Entry) -> JaContext:
    """How current the Japanese text of a rule or term is: its status, a note when it is not current, the
    translation's version, the number it had there when it differs, and the English changes since."""
    ja = entry.ja
    node = entry.nodes.get("ja")
    return {"ja_status": entry.ja_status, "ja_note": JA_STATUS_NOTES.get(entry.ja_status),
            "ja_version": ja.key.version if ja else None,
            "ja_number": node.number if node and node.number != entry.number else None,
            "ja_ops": [[o.op, o.text] for o in ja.ops] if ja else []}


def _plain(entry: Entry, site: SiteData, limit: int = 120) -> str:
    node = entry.main_node()
    return words_head((node.title or node.text or "") if entry.kind in (CHAPTER, SECTION) else node.text, limit)


def home_pages(site: SiteData) -> Iterable[Page]:
    chapters = [{"number": n, "label": site.rules[n].label, "url": site.rules[n].url,
                 "sections": [{"number": s, "label": site.rules[s].label, "url": site.rules[s].url}
                              for s in site.rules[n].children]} for n in site.chapters]
    counts: dict[str, int | dict[str, int]] = {
        "rules": sum(1 for e in site.rules.values() if e.kind not in (CHAPTER, SECTION)), "terms": len(site.terms),
        **{kind: sum(1 for e in site.others.values() if e.kind == kind) for kind in ("article", "note", "card")}}
    if site.english_version:
        rules = [e for e in site.rules.values() if e.kind not in (CHAPTER, SECTION)]
        counts["ja"] = {status: sum(1 for e in rules if e.ja_status == status) for status in JA_STATUSES}
    description = (f"マジック：ザ・ギャザリング総合ルール {site.effective_date or site.primary_version or ''} "
                   "版の全文、用語集、関連記事を相互リンクで読めるサイト。")
    yield Page("index.html", "home.html", "マジック総合ルール", description,
               {"site": site_context(site), "chapters": chapters, "counts": counts, "others": _other_lists(site),
                "cards_index": CARDS_INDEX if counts["card"] else None,
                "changes": CHANGES_INDEX if site.changes and site.changes.pairs else None})
    site_ctx = site_context(site)
    yield Page("404.html", "404.html", "ページが見つかりません", "お探しのページは見つかりませんでした。", {"site": site_ctx},
               in_sitemap=False)
    yield Page("search.html", "search.html", "検索", "総合ルール・用語集・記事の全文検索。", {"site": site_ctx})


def _other_lists(site: SiteData) -> dict[str, list[LinkContext]]:
    lists: dict[str, list[LinkContext]] = {}
    for entry in site.others.values():
        if entry.kind == "card":
            continue  # many, and named in passing: the card index lists them
        lists.setdefault(entry.kind, []).append({"label": entry.label, "url": entry.url})
    for items in lists.values():
        items.sort(key=lambda i: _kana_key(site, i["label"]))
    return lists


def _rule_parts(site: SiteData, only: Collection[str] | None = None) -> list[tuple[str, list[Page], dict[int, Any]]]:
    """A page per chapter and per section (every rule anchored by its number; a long section with its own contents),
    and a page per rule (headed by its name); each with the previous and the next page of its level.

    In parts, in order: each chapter's page alone, each section's page alone, and each rule's page
    with its subrules' (:func:`_part_of`) — a rule's citation changes its page, its parent's and its section's. Each
    part: its name, its pages, and the values its pages' contexts share with other pages by identity (id → the value's
    digest, made once per build: the chrome, the rule contexts). ``only``: those parts alone (their names)."""
    site_ctx = site_context(site)
    memo: dict[str, RuleContext] = {}
    pagers = _pagers(site)
    above = _ancestry(site)
    parts: dict[str, list[Page]] = {}
    for number, entry in site.rules.items():
        if only is not None and (number if entry.kind in (CHAPTER, SECTION) else above(number)[0]) not in only:
            continue
        if entry.kind == CHAPTER:
            sections = [rule_context(site, site.rules[s], memo) for s in entry.children]
            parts.setdefault(number, []).append(Page(
                entry.url, "chapter.html", entry.label, f"総合ルール 第{number}章 {entry.label} の目次。",
                {"site": site_ctx, "rule": rule_context(site, entry, memo), "sections": sections,
                 "pager": pagers[number]}))
        elif entry.kind == SECTION:
            rules: list[RuleContext] = []
            _walk(site, entry, rules, memo, include_self=False)
            parent = site.rules.get(number[0])
            toc = [_toc_item(site.rules[child]) for child in entry.children] if len(rules) >= LONG_SECTION else []
            parts.setdefault(number, []).append(Page(
                entry.url, "section.html", entry.label, f"総合ルール {entry.label}：{_plain(entry, site)}",
                {"site": site_ctx, "rule": rule_context(site, entry, memo), "rules": rules,
                 "parent": {"label": parent.label, "url": parent.url} if parent else None,
                 "toc": toc if len(toc) >= 2 else [], "pager": pagers[number]}))
        else:
            family: list[RuleContext] = []
            _walk(site, entry, family, memo, include_self=True)
            section = site.rules.get(number.split(".")[0])
            part, name, crumbs = above(number)
            plain = _plain(entry, site)
            parts.setdefault(part, []).append(Page(
                rule_page(number), "rule.html", f"{number} {plain[:40]}", f"{number}：{plain}",
                {"site": site_ctx, "rule": family[0], "children": family[1:], "name": name,
                 "crumbs": crumbs, "pager": pagers[number],
                 "section": {"label": section.label, "url": section.url} if section else None}))
    shared = {id(value): _digest(value) for value in (site_ctx, *memo.values())}
    return [(name, pages, shared) for name, pages in parts.items()]


def _digest(value: Any) -> str:
    """A hash of plain data (marshal format 2: the bytes of the values only)."""
    return hashlib.sha256(marshal.dumps(value, 2)).hexdigest()[:24]


def part_inputs(pages: list[Page], shared: dict[int, str]) -> list[tuple[Any, ...]]:
    """What a part's pages are made of, from the pages themselves: each page's fields and context, a value shared
    with other pages (the chrome, a rule's context: :func:`_rule_parts`) named by its digest (made once per build,
    not once per part showing it) — so a group's inputs are its pages' contexts, listed by nobody, at the cost of the
    values it shows."""

    get = shared.get  # the shared values are dicts: only a dict is looked up, only a list walked (by its class: the
    # values are plain JSON-able data, and a call per value was most of the cost)

    def items(values: list[Any]) -> list[Any]:  # a list of rule contexts or of links
        return [(("shared", d) if (d := get(id(v))) is not None else v) if v.__class__ is dict
                else items(v) if v.__class__ is list else v for v in values]

    made = []
    for page in pages:
        assert page.deferred is None  # a rule page is made whole
        made.append((page.path, page.template, page.title, page.description, page.in_sitemap,
                     {key: (("shared", d) if (d := get(id(value))) is not None else value) if value.__class__ is dict
                      else items(value) if value.__class__ is list else value for key, value in page.context.items()}))
    return made


LONG_SECTION = 12  # rules on a section page from which it has its own contents (601: 44 in the 2026 rules)


def _toc_item(entry: Entry) -> TocItem:
    """A top-level rule in its section's contents: its number and title, or its number and the first words."""
    title = entry.main_node().title
    text = words_head(entry.main_node().text, TOC_HINT + 1)
    hint = "" if title else text if len(text) <= TOC_HINT else text[:TOC_HINT - 1] + "…"
    return {"url": entry.url, "label": entry.label, "hint": hint, "level": 1}


TOC_HINT = 24  # characters of a rule's text in a contents line


def _ancestry(site: SiteData) -> Callable[[str], tuple[str, str | None, list[LinkContext]]]:
    """Each rule number → its part (the rule whose part its page is in: the rule itself, or for a subrule the rule
    above it below its section, 601.2f → 601.2), its name (what its page is headed by: its own title, 702.2 接死, else
    its nearest titled parent's — 601.2f: the section's, 呪文を唱えること) and its crumbs (the levels above it, top
    first: its chapter, its section, and for a subrule its rule) — each made from its parent's, once per number."""
    out: dict[str, tuple[str, str | None, list[LinkContext]]] = {}

    def of(number: str) -> tuple[str, str | None, list[LinkContext]]:
        if number in out:
            return out[number]
        at = rulenum.parse(number)
        if at is None:
            out[number] = (number, None, [])
            return out[number]
        entry = site.rules.get(str(at))
        title = (entry.main_node().title if entry else None) or None
        if at.parent is None:
            out[number] = (str(at), title, [])
            return out[number]
        up = str(at.parent)
        part, name, crumbs = of(up)
        parent = site.rules.get(up)
        out[number] = (part if parent is not None and parent.kind not in (CHAPTER, SECTION) else str(at),
                       title or name, [*crumbs, _page_link(site, up)] if parent is not None else crumbs)
        return out[number]

    return of


def _pagers(site: SiteData) -> dict[str, Pager]:
    """Every rule number → its previous and next page of the same level: chapters among chapters, sections among
    sections, and a rule or subrule the nearest one before and after it at its level or above in document order
    (601.2f ← 601.2e, → 601.2g; 601.3 ← 601.2, not 601.2i; 601.2i → 601.3; a section's last rule → the next
    section's first), so the next page never repeats what this one shows."""
    out: dict[str, Pager] = {}
    for kind in (CHAPTER, SECTION):
        numbers = [n for n, e in site.rules.items() if e.kind == kind]
        for i, n in enumerate(numbers):
            out[n] = {"prev": _page_link(site, numbers[i - 1]) if i else None,
                      "next": _page_link(site, numbers[i + 1]) if i + 1 < len(numbers) else None}
    rules = [(n, 2 if e.kind == SUBRULE else 1) for n, e in site.rules.items() if e.kind not in (CHAPTER, SECTION)]
    before, after = _nearest(rules), _nearest(rules[::-1])
    for n, _ in rules:
        out[n] = {"prev": _page_link(site, before[n]) if n in before else None,
                  "next": _page_link(site, after[n]) if n in after else None}
    return out


def _nearest(rules: list[tuple[str, int]]) -> dict[str, str]:
    """Each rule → the nearest one before it (in this order) at its depth or above (a smaller depth)."""
    out: dict[str, str] = {}
    last: dict[int, str] = {}  # depth d → the latest rule seen at depth d or above
    for n, depth in rules:
        if depth in last:
            out[n] = last[depth]
        for d in range(depth, 3):
            last[d] = n
    return out


def _page_link(site: SiteData, number: str) -> LinkContext:
    entry = site.rules[number]
    return {"label": entry.label, "url": entry.url if entry.kind in (CHAPTER, SECTION) else rule_page(number)}


def _walk(site: SiteData, entry: Entry, out: list[RuleContext], memo: dict[str, RuleContext], *,
          include_self: bool) -> None:
    if include_self:
        out.append(rule_context(site, entry, memo))
    for child in entry.children:
        _walk(site, site.rules[child], out, memo, include_self=True)


def _kana_key(site: SiteData, label: str) -> str:
    """五十音 order: the reading (Sudachi's, for kanji: the site's splitter), katakana folded to hiragana, NFKC — so
    唱える sorts as となえる, and ア and あ together before か."""
    reading = site.readings_asked.get(label) or site.readings.get(label) or site.splitter.reading(label)
    site.readings_asked[label] = reading  # kept for the next build (kb.site.gather.names_record)
    return fold(reading).translate(HIRAGANA_OF)


HIRAGANA_OF = {c: c - 0x60 for c in range(ord("ァ"), ord("ヶ") + 1)}  # str.translate: katakana → hiragana


def _term_reading(entry: Entry) -> str:
    """How a glossary term is read: the reading its source gives (ruby HTML), else its label (read by Sudachi)."""
    return next((n.meta["reading"] for n in entry.nodes.values() if n.meta.get("reading")), entry.label)


GOJUON_ROWS = ("あ", "か", "さ", "た", "な", "は", "ま", "や", "ら", "わ")


OTHER_ROW = "その他"


def _script_of(row: str) -> str:
    """Which jump line of the glossary index a row is on: the 五十音 first, English A–Z after it."""
    return "kana" if row in GOJUON_ROWS else "other" if row == OTHER_ROW else "az"


def _row(site: SiteData, label: str) -> str:
    first = _kana_key(site, label)[:1]
    base = unicodedata.normalize("NFD", first)[:1]
    if "ぁ" <= base <= "ゖ":
        row = [r for r in GOJUON_ROWS if r <= base]
        return row[-1] if row else "あ"
    if base.isascii() and base.isalpha():
        return base.upper()
    return OTHER_ROW


def glossary_pages(site: SiteData) -> Iterable[Page]:
    """The glossary's index (always: every page's navigation links it; without terms it says so) and a page per
    term."""
    site_ctx = site_context(site)
    entries = sorted(site.terms.values(), key=lambda e: _kana_key(site, _term_reading(e)))
    articles = term_articles(site)
    rows: dict[str, list[dict[str, str | None]]] = {}
    for entry in entries:
        rows.setdefault(_row(site, _term_reading(entry)), []).append(
            {"label": entry.label, "english": _english_name(entry), "url": entry.url})
    order = [*GOJUON_ROWS, *sorted(r for r in rows if r not in GOJUON_ROWS and r != OTHER_ROW), OTHER_ROW]
    groups = [{"row": row, "id": f"row-{i}", "items": rows[row], "script": _script_of(row)}
              for i, row in enumerate((r for r in order if r in rows), 1)]
    yield Page("glossary/index.html", "glossary.html", "用語集", "総合ルール用語集の索引：五十音順、英語のみの用語は A–Z 順。",
               {"site": site_ctx, "groups": groups})
    for entry in entries:
        article = articles.get(entry.id)
        term: TermContext = {"label": entry.label, "english": _english_name(entry), "langs": _langs(site, entry),
                             "article": {"label": article.label, "url": article.url} if article else None,
                             "cited_by": entry.cited_by, **ja_context(site, entry)}
        yield Page(entry.url, "term.html", f"{entry.label}（用語集）", f"{entry.label}：{_plain(entry, site)}",
                   {"site": site_ctx, "term": term})


def _english_name(entry: Entry) -> str | None:
    """The English name of a term: given by the Japanese glossary, or the paired English entry's title."""
    english = next((n.english for n in entry.nodes.values() if n.english), None)
    if english is None and "en" in entry.nodes and entry.nodes["en"].title != entry.label:
        english = entry.nodes["en"].title
    return english


PAGE_KIND_LABELS = {"article": "MTG Wiki 記事", "note": "リリースノート", "card": "カード"}


def site_pages_by_name(site: SiteData) -> dict[str, tuple[str, str]]:
    """Every name an MTG Wiki link may use for something the site has a page of → (site path, link kind): articles
    (title, redirect aliases), then glossary terms (Japanese and English names), then cards (``日本語名/English``, each
    name alone) — the first claim of a name wins."""
    names: dict[str, tuple[str, str]] = {}
    for entry in site.others.values():
        if entry.kind == "article":
            for node in entry.nodes.values():
                for name in (node.title, id_name(node.id), *node.aliases):
                    if name:
                        names.setdefault(name, (entry.url, "wiki"))
    for entry in site.terms.values():
        for name in (entry.label, _english_name(entry)):
            if name:
                names.setdefault(name, (entry.url, "term"))
    for entry in site.others.values():
        if entry.kind == "card":
            node = next(iter(entry.nodes.values()))
            for name in (node.title, node.english, node.text, id_name(node.id)):
                if name:
                    names.setdefault(name, (entry.url, "card"))
    return names


def term_articles(site: SiteData) -> dict[str, Entry]:
    """Glossary term id → the MTG Wiki article of the same name (its title, a redirect alias, or the same English
    name): the pair the term page and the article page link both ways."""
    articles = [e for e in site.others.values() if e.kind == "article"]
    by_name: dict[str, Entry] = {}
    for entry in articles:
        for node in entry.nodes.values():
            for name in (node.title, *node.aliases):
                if name:
                    by_name.setdefault(name, entry)
    by_english = {n.english.casefold(): e for e in articles for n in e.nodes.values() if n.english}
    pairs = {}
    for term in site.terms.values():
        english = _english_name(term)
        article = by_name.get(term.label) or (by_english.get(english.casefold()) if english else None)
        if article is not None:
            pairs[term.id] = article
    return pairs


def _lines(segs: list[Segment]) -> list[list[Segment]]:
    """Segments cut into lines (at ``\n`` in plain pieces): a release note's heading and bullets."""
    lines: list[list[Segment]] = [[]]
    for seg in segs:
        if isinstance(seg, str):
            first, *rest = seg.split("\n")
            if first:
                lines[-1].append(first)
            for piece in rest:
                lines.append([piece] if piece else [])
        else:
            lines[-1].append(seg)
    return [line for line in lines if line]


def _plain_line(line: list[Segment]) -> str:
    return "".join(seg if isinstance(seg, str) else seg[0] or "" for seg in line)


def _bullet(line: list[Segment]) -> Bullet:
    head = line[0]
    if isinstance(head, str) and head.startswith("• "):
        return {"bullet": True, "segments": [head[2:], *line[1:]] if head[2:] else line[1:]}
    return {"bullet": False, "segments": line}


def other_pages(site: SiteData) -> Iterable[Page | PageGroup]:
    """A page per unversioned node: MTG Wiki articles, release notes, cards, and any kind added later; and the card
    index (cards are many and mostly named in passing: the home page links the index instead of listing them).

    An article's (or card's) page shows its node (its content hash covers its text, title, HTML, meta…) and what
    ``shown`` holds — the chrome's digest, its id, kind, URL and label, its links, its paired term, who cites and
    mentions it — and its lookups' answers, which come from ``tables`` (the name and rule tables' digest); its title
    and description are made of its label, kind and text. Each run of :data:`ARTICLE_RUN` such pages, in order, is a
    group named by those (:func:`_article_group`): kept whole, none of its pages made, when none of them changed."""
    articles = _Articles.of(site)
    site_ctx, html = articles.site_ctx, site.html
    run: list[_Article] = []  # article pages not yet yielded, in order
    runs = 0
    for entry in site.others.values():
        node = next(iter(entry.nodes.values()))
        if entry.kind != "note" and html is not None:  # the text is shown with the HTML, made with it
            run.append(articles.article(entry))
            if len(run) == ARTICLE_RUN:
                yield _article_group(runs, run, articles.tables, articles.make)
                run, runs = [], runs + 1
            continue
        if run:  # the pages stay in order (the sitemap's)
            yield _article_group(runs, run, articles.tables, articles.make)
            run, runs = [], runs + 1
        links = entry.links.get(node.lang, [])
        yield Page(entry.url, "node.html", *_page_names(entry, node),
                   {"site": site_ctx, "node": _node_context(entry, node, articles.term_of_article.get(entry.id),
                                                            segments(node.text, links)), "toc": []})
    if run:
        yield _article_group(runs, run, articles.tables, articles.make)
    yield from _cards_index(site, site_ctx, card_facts(site))


def _cards_index(site: SiteData, site_ctx: SiteContext, facts: dict[str, CardFacts]) -> Iterable[Page]:
    cards = sorted((e for e in site.others.values() if e.kind == "card"), key=lambda e: _kana_key(site, e.label))
    if cards:
        items = [{"label": e.label, "url": e.url, "english": next(iter(e.nodes.values())).english,
                  "mentions": facts[e.id][0]} for e in cards]
        yield Page(CARDS_INDEX, "cards.html", "カード", "ルール・記事・リリースノートで言及されているカードの一覧。",
                   {"site": site_ctx, "cards": items})


CardFacts = tuple[int, str, bool]  # what the card index and the previews show of a card: how many cite it, the text
# its preview is cut from, and whether that text is its node's (named by its content hash) rather than a mention's


def card_facts(site: SiteData, entries: Iterable[Entry] | None = None) -> dict[str, CardFacts]:
    """:data:`CardFacts` of every card of ``site`` (of ``entries`` when given), by id."""
    digests = site.html.digests if site.html is not None else {}
    facts = {}
    for entry in site.others.values() if entries is None else entries:
        if entry.kind == "card":
            node = entry.main_node()
            facts[entry.id] = (len(entry.mentions) or len(entry.cited_by), _preview_source(entry),
                               (node.lang, node.id) in digests and not entry.mentions)
    return facts


def edited_pages(site: SiteData, shown_again: ShownAgain, cards: dict[str, CardFacts]) -> Iterable[Page | PageGroup]:
    """The pages an edit build makes (:mod:`kb.site.edits`), as a full build makes them: each edited article's page,
    and the pages showing who cites an entry of ``shown_again`` (:func:`shown_again_in`): its own page (an article's,
    a card's, a term's), its rule parts, the card index when one is a card; and the preview scripts of the edited
    articles and of those cards. ``cards``: every card's :data:`CardFacts` (those shown again as they are now)."""
    articles = _Articles.of(site)
    assert articles.make is not None  # an edit build's site has the stored HTML (kb.site.gather.gather_edited)
    again = {id(entry) for entry in shown_again.entries}
    remade = [entry for entry in site.others.values() if entry.id in site.edited or id(entry) in again]  # in order
    for entry in remade:
        yield articles.make(articles.article(entry))
    for name, made, shared in _rule_parts(site, shown_again.parts) if shown_again.parts else ():
        yield PageGroup(f"rule pages {name}", part_inputs(made, shared), partial(iter, made))
    urls = {entry.url for entry in shown_again.entries if entry.kind == GLOSSARY}
    yield from (page for page in glossary_pages(site) if page.path in urls)
    changed_cards = [entry for entry in shown_again.entries if entry.kind == "card"]
    if changed_cards:
        yield from _cards_index(site, articles.site_ctx, cards)
    yield from preview_pages(site, {_preview_script(*entry.url.rpartition("/")[::2]) for entry in remade}, cards)


@dataclass(frozen=True)
class ShownAgain:
    """What an edit build shows again when entries are cited otherwise (:func:`shown_again_in`): the entries to
    link complete (:func:`kb.site.gather.link_edited`) and the rule parts (names) showing who cites one of them."""

    entries: list[Entry]
    parts: frozenset[str]


def shown_again_in(site: SiteData, targets: Collection[str]) -> ShownAgain:
    """What an edit build shows again when the entries at the URLs ``targets`` are cited otherwise: those, and the
    rule parts showing one of them — with every rule those parts show (their pages show who cites each)."""
    by_url = {entry.url: entry for group in (site.rules, site.terms, site.others) for entry in group.values()}
    found = [by_url[url] for url in targets if url in by_url]
    numbers = {entry.number for entry in found if entry.number}
    parts: set[str] = set()
    shown: set[str] = set()
    above = _ancestry(site)
    near = {part for number in numbers for part in _parts_near(above, number)}
    for name, made, _ in _rule_parts(site, near) if numbers else ():
        if numbers & (part := _numbers_shown(made)):
            parts.add(name)
            shown |= part
    return ShownAgain([*found, *(site.rules[number] for number in sorted(shown - numbers) if number in site.rules)],
                      frozenset(parts))


def _parts_near(above: Callable[[str], tuple[str, str | None, list[LinkContext]]], number: str) -> tuple[str, ...]:
    """The rule parts whose pages may show the block of rule ``number`` (``above``: :func:`_ancestry`): its chapter's,
    its section's and its family's (tests/test_site_edits.py checks it holds of every rule)."""
    return number[:1], number.split(".")[0], above(number)[0]


def _numbers_shown(pages: list[Page]) -> set[str]:
    """The rule numbers whose blocks (rule contexts: who cites them) the rule pages ``pages`` show."""
    numbers = set()
    for page in pages:
        context = page.context
        for key in ("rule", "rules", "children", "sections"):
            value = context.get(key)
            for block in value if isinstance(value, list) else [value] if value else []:
                numbers.add(block["number"])
    return numbers


@dataclass(frozen=True)
class _Articles:
    """What every article page of a build shares (:func:`other_pages`): the chrome and its digest, the name and rule
    tables its HTML's links are looked up in and their digest, each article's paired term, and the page maker."""

    site_ctx: SiteContext
    chrome: str
    tables: str
    term_of_article: dict[str, Entry]
    digests: dict[tuple[str, str], str]
    make: Callable[[_Article], Page] | None

    @classmethod
    def of(cls, site: SiteData) -> _Articles:
        site_ctx = site_context(site)
        site_pages = site_pages_by_name(site)
        rule_urls = {number: e.url for number, e in site.rules.items()}
        lookup = partial(_lookup, {"page": site_pages.get, "rule": rule_urls.get})
        tables = _digest((site_pages, rule_urls))  # what lookup answers from
        term_of_article = {article.id: site.terms[term_id] for term_id, article in term_articles(site).items()}
        html = site.html
        make = partial(_article_page, html.read, site_ctx, site_pages, rule_urls, lookup, tables) if html else None
        return cls(site_ctx, _digest(site_ctx), tables, term_of_article, html.digests if html else {}, make)

    def article(self, entry: Entry) -> _Article:
        """An article's (or card's) page to make: its entry, node, links, paired term, content hash and ``shown``."""
        node = next(iter(entry.nodes.values()))
        term = self.term_of_article.get(entry.id)
        links = entry.links.get(node.lang, [])
        shown = (self.chrome, node.id, entry.kind, entry.url, entry.label, list(zip(*links, strict=True)),  # links by
                 (term.label, term.url) if term else None, entry.mentions, entry.cited_by)  # column
        return entry, node, links, term, self.digests.get((node.lang, node.id), ""), shown


ARTICLE_RUN = 32  # article pages per group: a build after one article changed makes and hashes its group's pages,
# not the thousands of others

_Article = tuple[Entry, Node, list[Link], Entry | None, str, tuple[Any, ...]]  # entry, node, links, paired term,
# the node's content hash, what else the page shows (other_pages): an article page to make (:func:`_article_page`)


def _article_group(number: int, run: list[_Article], tables: str,
                   make: Callable[[_Article], Page] | None) -> PageGroup:
    """The ``number`` th run of article pages (:func:`other_pages`) as a group named by what its pages are made of:
    the template, the lookup tables' digest and each page's node's content hash and what else it shows."""
    assert make is not None  # article pages are made only with the site's HTML
    return PageGroup(f"article pages {number}", ("node.html", tables, [(content, shown) for *_, content, shown in run]),
                     partial(map, make, run))


def _article_page(read: Callable[[NodeKey], str | None], site_ctx: SiteContext, site_pages: dict[str, tuple[str, str]],
                  rule_urls: dict[str, str], lookup: Callable[[list[Any]], Any], tables: str, article: _Article) -> Page:
    """An article's (or card's) page: everything it shows is its :class:`~kb.site.page.Deferred` part
    (:func:`_article_part`), whose source is the node's content hash and the digest of ``shown``."""
    entry, node, links, term, content, shown = article
    return Page(entry.url, "node.html", *_page_names(entry, node), deferred=Deferred(f"{content}|{_digest(shown)}", partial(
        _article_part, read, entry, node, links, term, site_ctx, site_pages, rule_urls), lookup, tables))


def _page_names(entry: Entry, node: Node) -> tuple[str, str]:
    """An unversioned node's page's title and description: its label, its kind, the head of its text."""
    return f"{entry.label}（{PAGE_KIND_LABELS.get(entry.kind, entry.kind)}）", f"{entry.label}：{words_head(node.text, 120)}"


LONG_ARTICLE = 4  # headings from which an article page has its own contents (唱える: 17)


def _node_context(entry: Entry, node: Node, term: Entry | None, text: list[Segment], html: str | None = None) \
        -> NodeContext:
    """What an unversioned node's page shows of it: its text cut at its links (a release note's as lines), its HTML
    (an article's, :func:`_article_page`), its paired term and who cites or mentions it."""
    return {"id": node.id, "kind": entry.kind, "kind_name": PAGE_KIND_LABELS.get(entry.kind, entry.kind),
            "label": entry.label, "english": node.english, "html": html, "text": text if entry.kind != "note" else [],
            "lines": ([_bullet(line) for line in _lines(text) if _plain_line(line) != entry.label]
                      if entry.kind == "note" else []),
            "meta": {k: v for k, v in node.meta.items() if isinstance(v, (str, int))},
            "term": {"label": term.label, "url": term.url} if term else None,
            "index": CARDS_INDEX if entry.kind == "card" else None,
            "mentions": entry.mentions, "cited_by": entry.cited_by}


def _article_part(read: Callable[[NodeKey], str | None], entry: Entry, node: Node, links: list[Link],
                  term: Entry | None, site_ctx: SiteContext, site_pages: dict[str, tuple[str, str]],
                  rule_urls: dict[str, str]) -> tuple[dict[str, Any], list[Any]]:
    """An article's (or card's) whole context — its HTML (:func:`kb.site.render.article_html`, its links pointed at
    our pages), its text cut at its ``links``, the chrome — and the keys of the site's name and rule tables it looked
    up: the :class:`~kb.site.page.Deferred` part of its page, made only when the page is rendered (making and hashing
    it for each of thousands of pages was most of a build that renders three). :func:`other_pages` names it without
    making it: the node's content hash (its text, title, HTML, meta…), its id, URL and label, its links, its paired
    term, who cites and mentions it, the chrome's hash; and the answers to those keys (:func:`_lookup`)."""
    html = read(NodeKey(node.version, node.lang, node.id))
    looked: dict[tuple[str, str], None] = {}
    made = article_html(html, entry.url, _Noting(site_pages, "page", looked), _Noting(rule_urls, "rule", looked)) \
        if html else None
    outline = article_outline(made, entry.url) if made else []
    return ({"site": site_ctx, "node": _node_context(entry, node, term, segments(node.text, links), made),
             "toc": outline if len(outline) >= LONG_ARTICLE else []}, list(looked))


def _lookup(tables: dict[str, Callable[[str], Any]], keys: list[Any]) -> list[Any]:
    """The answers of the tables (``tables``: each one's ``get``, by tag) to the ``(tag, key)`` s an
    :func:`_article_part` looked up."""
    return [tables[table](name) for table, name in keys]


class _Noting(dict[str, Any]):
    """``table`` for one :func:`kb.site.render.article_html` call, noting each key it looks up in ``looked`` (as
    ``(tag, key)``): those keys' answers are all the call reads of the table. Only the lookups are served."""

    def __init__(self, table: dict[str, Any], tag: str, looked: dict[tuple[str, str], None]):
        super().__init__()
        self._table, self._tag, self._looked = table, tag, looked

    def get(self, key: str, default: Any = None) -> Any:
        self._looked[(self._tag, key)] = None
        return self._table.get(key, default)

    def __contains__(self, key: object) -> bool:
        self._looked[(self._tag, str(key))] = None
        return key in self._table

    def __getitem__(self, key: str) -> Any:
        self._looked[(self._tag, key)] = None
        return self._table[key]


PREVIEW_CHARS = 160


def _preview_text(text: str) -> str:
    text = words_head(text, PREVIEW_CHARS + 1)
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


PREVIEW_SHARDS = {"glossary": "gl", "wiki": "wiki", "cards": "cards", "notes": "notes"}  # folder → shard prefix


def preview_pages(site: SiteData, wanted: set[str] | None = None, cards: dict[str, CardFacts] | None = None
                  ) -> Iterable[PageGroup]:
    """Texts for the hover and tap previews, one script per section (``previews/601.js``: the section and every rule
    under it; ``previews/chapters.js``: the chapters) and, for glossary terms, articles, cards and notes, one per folder
    and first character of the page's file name (``previews/gl-5531.js``: ``唱える`` → its definition, keyed by the file
    name without ``.html``; ``cards-…``: a card's first mention in its sentence), loaded by the browser only when a
    reference is hovered or tapped. Each script is a group named by the texts its previews are cut from — an
    unversioned node's by its content hash (an article is 15,000 characters), its text read when the script is made
    — so changing one rule, term or article makes one of them again. ``wanted``: those scripts alone (their names);
    ``cards``: the cards' :data:`CardFacts` when not their entries' (an edit build's: :func:`edited_pages`)."""
    digests = site.html.digests if site.html is not None else {}
    files: dict[str, dict[str, str | Entry]] = {}  # script → key → its text or, for an unversioned node named by
    # its content hash, its entry (its text read when the script is made)
    for number, entry in site.rules.items():
        node = entry.main_node()
        name = number.split(".")[0] if len(number) >= 3 else "chapters"
        if wanted is None or name in wanted:
            files.setdefault(name, {})[number] = node.title or node.text
    for entry in [*site.terms.values(), *site.others.values()]:
        folder, _, file_name = entry.url.rpartition("/")
        if folder not in PREVIEW_SHARDS or not file_name.endswith(".html"):
            continue
        name = _preview_script(folder, file_name)
        if wanted is not None and name not in wanted:
            continue
        key = file_name[: -len(".html")]
        node = entry.main_node()
        if entry.kind == "card":  # a mention's sentence is another node's
            _, text, by_hash = (cards or card_facts(site, [entry]))[entry.id]
        else:
            text, by_hash = _node_preview_source(entry), (node.lang, node.id) in digests
        files.setdefault(name, {})[key] = entry if by_hash else text
    for name, texts in files.items():
        yield PageGroup(f"previews {name}", {
            key: ("hash", digests[(text.main_node().lang, text.main_node().id)]) if isinstance(text, Entry) else text
            for key, text in texts.items()}, partial(_preview_page, name, texts, site.whole))


def _preview_script(folder: str, file_name: str) -> str:
    """The preview script of a page of ``folder`` (a key of :data:`PREVIEW_SHARDS`) named ``file_name``."""
    return f"{PREVIEW_SHARDS[folder]}-{ord(file_name[0]):x}"


def _preview_source(entry: Entry) -> str:
    """The text an entry's preview is cut from: a card's first mention in its sentence, else its node's text."""
    first = entry.mentions[0] if entry.kind == "card" and entry.mentions else None
    if first:
        return f"{first['before']}{first['name']}{first['after']}（{first['label']}）"
    return _node_preview_source(entry)


def _node_preview_source(entry: Entry) -> str:
    """An entry's node's text, whose preview it is when not a mention's (a card's text, else its text or title)."""
    node = entry.main_node()
    return node.text if entry.kind == "card" else node.text or node.title or ""


def _preview_page(name: str, texts: dict[str, str | Entry], whole: Callable[[Entry], Entry]) -> Iterable[Page]:
    yield Page(f"previews/{name}.js", "preview.js", "", "",
               {"name": f"pv/{name}", "texts": {key: _preview_text(
                   _node_preview_source(whole(text)) if isinstance(text, Entry) else text)
                   for key, text in texts.items()}},
               in_sitemap=False)


def archive_pages(site: SiteData) -> Iterable[PageGroup]:
    """Every other stored version, readable as it was (plain text) under ``v/<version>/`` (:mod:`kb.urls.where`):
    a contents page, a page per chapter and section with each rule anchored by its number, and the glossary. Each
    version's pages are a group named by its nodes' digest: made again (its nodes read) only when they change."""
    for archive in site.archives:
        root = archive_root(archive.version)
        lang_name = LANG_NAMES.get(archive.lang, archive.lang)
        name = f"総合ルール {archive.version}（{archive.effective_date or '日付なし'} 発効・{lang_name}）"
        ctx: dict[str, Any] = {
            "site": site_context(site),
            "archive": {"name": name, "version": archive.version, "lang": archive.lang, "index": root + "index.html",
                        "changes": CHANGES_INDEX if site.changes and site.changes.pairs else None,
                        "glossary": archive_glossary(archive.version) if archive.has_glossary else None}}
        yield PageGroup(f"archive {archive.version} {archive.lang}", (ctx, archive.digest),
                        partial(_archive_pages, archive, ctx))


def _archive_pages(archive: Archive, ctx: dict[str, Any]) -> Iterable[Page]:
    root, name = archive_root(archive.version), ctx["archive"]["name"]
    rules, terms = archive.nodes()
    pages: dict[str, list] = {}
    for node in rules:
        number = node.number or id_name(node.id)
        page = root + section_page(number)
        pages.setdefault(page, []).append({"number": number, "kind": node.kind, "title": node.title,
                                           "text": node.text, "examples": list(node.examples)})
    toc = [{"url": page, "label": f"{blocks[0]['number']}. {blocks[0]['title'] or ''}".strip(),
            "kind": blocks[0]["kind"]} for page, blocks in pages.items()]
    yield Page(root + "index.html", "archive.html", name, f"{name}の目次（旧版）。", ctx | {"toc": toc, "blocks": []},
               in_sitemap=False)
    for page, blocks in pages.items():
        yield Page(page, "archive.html", f"{blocks[0]['number']}（{archive.version}）", f"{name} {blocks[0]['number']}",
                   ctx | {"toc": [], "blocks": blocks}, in_sitemap=False)
    if terms:
        items: list[dict[str, object]] = [{"anchor": term_anchor(id_name(n.id)), "title": n.title or id_name(n.id),
                                           "english": n.english, "text": n.text, "examples": []} for n in terms]
        yield Page(archive_glossary(archive.version), "archive.html", f"用語集（{archive.version}）", f"{name}の用語集",
                   ctx | {"toc": [], "blocks": [], "terms": items}, in_sitemap=False)


def redirect_pages(site: SiteData) -> Iterable[Page]:
    """A small redirect page at each URL the previous naming scheme gave a glossary term, article, note or card
    (``glossary/_state~2d__based-_actions.html`` → ``glossary/state--based-actions.html``), so links out there keep
    working, and at the URL a person would type for it (``glossary/state-based-actions.html``) when no other entry
    claims that; none where a page of the site lives."""
    entries = [*site.terms.values(), *site.others.values()]
    taken = {e.url for e in entries} | {"glossary/index.html", CARDS_INDEX}
    typed: dict[str, list[Entry]] = {}
    for entry in entries:
        path = typed_page_for_id(entry.id)
        if path is not None:
            typed.setdefault(path, []).append(entry)
    aliases = [(legacy_page_for_id(entry.id), entry) for entry in entries]
    aliases += [(path, claims[0]) for path, claims in typed.items() if len(claims) == 1]
    for path, entry in aliases:
        if path not in taken:
            taken.add(path)
            yield Page(path, "redirect.html", entry.label, f"{entry.label} のページは移動しました。", {"target": entry.url},
                       in_sitemap=False)


def rule_page_groups(site: SiteData) -> Iterable[PageGroup]:
    """Producer: the rule pages (:func:`_rule_parts`) as a group per part (``rule pages 6``: the chapter's page;
    ``rule pages 601``: the section's; ``rule pages 601.2``: the rule's and its subrules'), named by
    :func:`part_inputs` — a new citation of 601.2f makes the parts of 601 and 601.2 again, not the 3,000 other rule
    pages."""
    for name, made, shared in _rule_parts(site):
        yield PageGroup(f"rule pages {name}", part_inputs(made, shared), partial(iter, made))


def redirect_inputs(site: SiteData) -> list[tuple[Any, ...]]:
    """Everything the redirect producers (:func:`redirect_pages`, :func:`kb.site.redirects.english_redirect_pages`)
    read of the site: each term's and other entry's id, URL and label, and the names of a term's nodes."""
    return [(e.id, e.url, e.label, [(n.lang, n.title, n.english) for n in e.nodes.values()] if e.kind == GLOSSARY
             else None) for e in [*site.terms.values(), *site.others.values()]]


def redirect_page_group(site: SiteData) -> Iterable[PageGroup]:
    """Producer: :func:`redirect_pages` as one group named by :func:`redirect_inputs`."""
    yield PageGroup("redirect pages", redirect_inputs(site), partial(redirect_pages, site))


Producer = Callable[[SiteData], Iterable[Page | PageGroup]]
PAGE_PRODUCERS: list[Producer] = [home_pages, rule_page_groups, glossary_pages, other_pages, change_pages, preview_pages,
                                  redirect_page_group, archive_pages]
EDITED_PRODUCERS = tuple(PAGE_PRODUCERS)  # the producers whose pages edited_pages knows: with another one (appended
# at run time) a build is never an edit build
