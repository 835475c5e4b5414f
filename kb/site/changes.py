"""The site's view of rules updates: 更新履歴 pages (one per pair of consecutive versions of a language, with inline
highlighting), an index of them, an Atom feed (feedgen), and the history block shown under each rule.

:func:`gather_changes` runs inside :func:`kb.site.gather.gather_site` (on the diffs it read) and leaves plain data on
``SiteData.changes``; :func:`change_pages` is a page producer (``kb.site.pages.PAGE_PRODUCERS``) and
:func:`history_context` gives a rule's history for its page context. Everything here is JSON-able and dated by the
versions' effective dates (never the build time), so an unchanged history re-renders nothing.

Paths: ``changes/index.html``, ``changes/<lang>-<old>-<new>.html``, ``changes/feed.xml``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import partial
from typing import Any

from kb.ids import id_name, is_rule_id
from kb.site.chrome import CHANGES_INDEX as INDEX_PAGE
from kb.site.chrome import site_context
from kb.site.contexts import HistoryBlock
from kb.site.page import Page, PageGroup
from kb.site.records import ChangesData, SiteData
from kb.store import NodeKey
from kb.urls.paths import href
from kb.urls.where import archive_root
from kb.versions.catalog import VersionInfo
from kb.versions.diff import VersionDiff, cached_derivation
from kb.versions.history import HistoryEntry, changed_histories

FEED_PAGE = "changes/feed.xml"
FEED_ID = "urn:kb:mtg-comprehensive-rules:changes"
STATUS_NAMES = {"changed": "変更", "moved": "番号変更", "added": "追加", "removed": "削除", "unchanged": "変更なし"}
REFERENCES_ONLY = "参照番号の変更"  # a change whose text differs only in renumbered rule references (Change.edit)
LANG_NAMES = {"ja": "日本語", "en": "英語"}
SHOWN_STATUSES = ("changed", "moved", "added", "removed")
FEED_ITEMS = 50  # changes listed in a feed entry at most
CONTEXT_WORDS = 6  # of unchanged English text shown on each side of a change on a 更新履歴 page
CONTEXT_CHARS = 20  # of unchanged Japanese text
FORMAT = 1  # of a language's pages data in the diff cache: bump when what _language_changes derives changes


def change_page(lang: str, old: str, new: str) -> str:
    return f"changes/{lang}-{old}-{new}.html"


def gather_changes(steps: dict[str, tuple[list[VersionInfo], list[VersionDiff]]],
                   shown: Iterable[tuple[str | None, str | None]]) -> ChangesData:
    """The pages' data from each language's consecutive version diffs (``steps``: lang → the versions and their
    :func:`kb.versions.history.consecutive_summaries`); keep the histories of the shown (version, lang) pairs' nodes
    that changed at some point. Each language's part is kept in the diff cache, beside the summaries it comes from
    (:func:`kb.versions.diff.cached_derivation`)."""
    data = ChangesData()
    pairs_shown = [(v, lg) for v, lg in shown if v and lg]
    for lang, (versions, diffs) in sorted(steps.items()):
        wanted = sorted({v for v, lg in pairs_shown if lg == lang})
        params = [FORMAT, lang, [[v.version, v.lang, v.effective_date] for v in versions], wanted]
        pairs, history = cached_derivation("changes", diffs, params, partial(_language_changes, lang, versions, diffs, wanted))
        data.pairs += pairs
        data.history.update(((lang, name), entries) for name, entries in history)
    data.pairs.sort(key=lambda p: (p["new"]["effective_date"] or "", p["lang"]), reverse=True)
    return data


def _language_changes(lang: str, versions: list[VersionInfo], diffs: list[VersionDiff], wanted: list[str]
                      ) -> tuple[list[dict[str, Any]], list[tuple[str, list[dict[str, Any]]]]]:
    """One language's pairs (oldest first) and (rule number or term id, entries) of the histories kept (see
    :func:`gather_changes`)."""
    history: list[tuple[str, list[dict[str, Any]]]] = []
    if wanted:
        for key, lineage in changed_histories(lang, versions, diffs).items():
            if key.version in wanted and lineage.changed:
                history.append((id_name(key.id) if is_rule_id(key.id) else key.id,
                                [_entry(e) for e in lineage.entries]))
    return [_pair(d) for d in diffs], history


def history_context(site: SiteData, names: dict[str, str]) -> list[HistoryBlock]:
    """The history blocks for one rule or term: ``names`` maps each shown language to the rule number or term id
    its node has there (a Japanese text may carry an older number: 701.34 shown under 701.40)."""
    changes = site.changes
    if not changes:
        return []
    out: list[HistoryBlock] = []
    for lang in ("ja", "en"):
        entries = changes.history.get((lang, names[lang])) if lang in names else None
        if entries:
            out.append({"lang": lang, "lang_name": LANG_NAMES.get(lang, lang), "entries": entries})
    return out


def change_pages(site: SiteData) -> Iterable[Page | PageGroup]:
    """Producer: the index of updates, a page per version pair, and the Atom feed (a page group)."""
    changes = site.changes
    if not changes or not changes.pairs:
        return
    shown = {(site.english_version, "en")} | {(ja.key.version, "ja") for ja in (site.view.ja.values() if site.view else ())}
    site_ctx = site_context(site)
    yield Page(INDEX_PAGE, "changes_index.html", "更新履歴", "総合ルールの版ごとの変更点の一覧。",
               {"site": site_ctx, "pairs": [_summary(p) | _version_urls(site, p) for p in changes.pairs], "feed": FEED_PAGE,
                "versions": _all_versions(site)})
    for pair in changes.pairs:
        linkable = (pair["new"]["version"], pair["lang"]) in shown
        items = {status: [_linked(site, item, pair if linkable else None) | {"context": context_ops(item["ops"], pair["lang"])}
                          for item in pair["items"] if item["status"] == status] for status in SHOWN_STATUSES}
        yield Page(pair["path"], "changes.html", f"更新履歴 {pair['old']['version']} → {pair['new']['version']}",
                   f"総合ルール{LANG_NAMES.get(pair['lang'], '')}版 {pair['old']['version']} から {pair['new']['version']} "
                   f"への変更点：{_counts_text(pair['counts'], pair['edits'])}。",
                   {"site": site_ctx, "pair": _summary(pair), "items": items, "status_names": STATUS_NAMES,
                    "retargeted": pair["retargeted"], "index": INDEX_PAGE, "references_only": REFERENCES_ONLY})
    # the feed is made (feedgen loaded) only when what it shows changed: the pairs' dates, counts and item labels
    shown_in_feed = [{"path": p["path"], "lang": p["lang"], "counts": p["counts"], "edits": p["edits"],
                      "old": {"version": p["old"]["version"]},
                      "new": {"version": p["new"]["version"], "effective_date": p["new"]["effective_date"]},
                      "items": [{k: i[k] for k in ("status", "label", "edit")} for i in p["items"]
                                if i["status"] in SHOWN_STATUSES][:FEED_ITEMS]} for p in changes.pairs]
    base_url = site.base_url
    yield PageGroup("atom feed", (shown_in_feed, base_url), partial(_feed_page, shown_in_feed, base_url))


def _feed_page(pairs: list[dict[str, Any]], base_url: str | None) -> Iterable[Page]:
    yield Page(FEED_PAGE, "changes_feed.xml", "更新履歴フィード", "", {"xml": atom_feed(pairs, base_url)}, in_sitemap=False)


def atom_feed(pairs: list[dict[str, Any]], base_url: str | None = None) -> str:
    """An Atom feed with one entry per version pair: links absolute under ``base_url`` (the site's root URL, ending
    with ``/``) when given, else relative (resolved against the feed's own URL)."""
    from feedgen.feed import FeedGenerator

    def link(path: str) -> str:  # path: site-relative, in the feed's folder changes/
        return base_url + href("", path) if base_url else path.split("/", 1)[1]

    fg = FeedGenerator()
    fg.id(FEED_ID)
    fg.title("マジック総合ルール 更新履歴")
    fg.subtitle("総合ルールの新しい版が取り込まれるたびに、その変更点を知らせます。")
    fg.language("ja")
    fg.link(href=link(INDEX_PAGE), rel="alternate")
    fg.link(href=link(FEED_PAGE), rel="self")
    fg.updated(_timestamp(max((p["new"]["effective_date"] or "1970-01-01") for p in pairs)))
    for pair in sorted(pairs, key=lambda p: p["new"]["effective_date"] or ""):
        entry = fg.add_entry()
        entry.id(f"{FEED_ID}:{pair['lang']}:{pair['old']['version']}:{pair['new']['version']}")
        entry.title(f"総合ルール {pair['new']['version']}（{LANG_NAMES.get(pair['lang'], pair['lang'])}）の変更点")
        entry.link(href=link(pair["path"]))
        date = _timestamp(pair["new"]["effective_date"] or "1970-01-01")
        entry.updated(date)
        entry.published(date)
        lines = [f"{pair['old']['version']} → {pair['new']['version']}：{_counts_text(pair['counts'], pair['edits'])}"]
        lines += [f"{STATUS_NAMES[i['status']]} {i['label']}" + (f"（{REFERENCES_ONLY}）" if i["edit"] == "references" else "")
                  for i in pair["items"] if i["status"] in SHOWN_STATUSES][:FEED_ITEMS]
        entry.summary("\n".join(lines))
    return fg.atom_str(pretty=True).decode("utf-8")


def _timestamp(iso_date: str) -> str:
    return f"{iso_date}T00:00:00+00:00"


def _pair(diff: VersionDiff) -> dict[str, Any]:
    lang = diff.new.lang
    items = [{"status": c.status, "kind": c.kind, "old": c.old_id, "new": c.new_id, "label": c.label, "edit": c.edit,
              "text": c.new_text if c.status == "added" else c.old_text if c.status == "removed" else None,
              "ops": [[o.op, o.text] for o in c.ops], "similarity": round(c.similarity, 2)}
             for c in diff.changes if c.status in SHOWN_STATUSES]
    retargeted = [{"source": r.source_id, "source_version": r.source_version, "target": r.target,
                   "moved_to": id_name(r.moved_to) if r.moved_to else None, "still_exists": r.now_at_target is not None}
                  for r in diff.retargeted]
    return {"lang": lang, "path": change_page(lang, diff.old.version, diff.new.version),
            "old": {"version": diff.old.version, "effective_date": diff.old.effective_date},
            "new": {"version": diff.new.version, "effective_date": diff.new.effective_date},
            "counts": diff.counts(), "edits": diff.edit_counts(), "items": items, "retargeted": retargeted}


def _summary(pair: dict[str, Any]) -> dict[str, Any]:
    return ({k: pair[k] for k in ("lang", "path", "old", "new", "counts", "edits")}
            | {"lang_name": LANG_NAMES.get(pair["lang"], pair["lang"])})


def _all_versions(site: SiteData) -> list[dict[str, Any]]:
    """The version shown (home page) and every archived one, newest first."""
    shown = [{"version": site.primary_version, "lang_name": LANG_NAMES.get(site.primary_lang or "", ""),
              "effective_date": site.effective_date, "url": "index.html", "current": True}]
    return shown + [{"version": a.version, "lang_name": LANG_NAMES.get(a.lang, a.lang), "effective_date": a.effective_date,
                     "url": archive_root(a.version) + "index.html", "current": False} for a in site.archives]


def _version_urls(site: SiteData, pair: dict[str, Any]) -> dict[str, str]:
    """Where each version of a pair can be read: the home page for the version shown, else its archive."""
    archived = {(a.version, a.lang) for a in site.archives}
    return {f"{side}_url": archive_root(pair[side]["version"]) + "index.html"
            if (pair[side]["version"], pair["lang"]) in archived else "index.html" for side in ("old", "new")}


_WORD = re.compile(r"\S+")


def context_ops(ops: list[list[str]], lang: str) -> list[list[str]]:
    """An inline diff (``[op, text]`` runs) cut down to its changes in context: each unchanged run keeps a few words
    (English; characters in Japanese) next to the changes around it, and what it leaves out becomes a ``["gap", ""]``
    (shown as …). 205.3m's one new creature type among ~300 is a line, not the whole rule."""
    out: list[list[str]] = []
    last = len(ops) - 1
    for at, (op, text) in enumerate(ops):
        if op != "equal":
            out.append([op, text])
            continue
        head = _head(text, lang) if at > 0 else ""  # after a change
        tail = _tail(text, lang) if at < last else ""  # before a change
        if len(head) + len(tail) >= len(text):
            out.append([op, text])
            continue
        out += [part for part in (["equal", head], ["gap", ""], ["equal", tail]) if part[0] == "gap" or part[1]]
    return out


def _head(text: str, lang: str) -> str:
    if lang == "ja":
        return text[:CONTEXT_CHARS]
    words = list(_WORD.finditer(text))
    return text if len(words) <= CONTEXT_WORDS else text[:words[CONTEXT_WORDS - 1].end()]


def _tail(text: str, lang: str) -> str:
    if lang == "ja":
        return text[-CONTEXT_CHARS:]
    words = list(_WORD.finditer(text))
    return text if len(words) <= CONTEXT_WORDS else text[words[-CONTEXT_WORDS].start():]


def _counts_text(counts: dict[str, int], edits: dict[str, int]) -> str:
    """'変更 3（うち参照番号の変更 1）、番号変更 …'."""
    refs = f"（うち{REFERENCES_ONLY} {edits['references']}）" if edits.get("references") else ""
    return "、".join(f"{STATUS_NAMES[s]} {counts[s]}" + (refs if s == "changed" else "") for s in SHOWN_STATUSES)


def _linked(site: SiteData, item: dict[str, Any], pair: dict[str, Any] | None) -> dict[str, Any]:
    """The item with ``url``: the page of its new rule or term on this site, when the site shows ``pair``'s new
    version (None: it does not)."""
    url = None
    if pair and item["new"]:
        entry = site.entry_for(NodeKey(pair["new"]["version"], pair["lang"], item["new"]))
        url = entry.url if entry else None
    return item | {"url": url}


def _entry(e: HistoryEntry) -> dict[str, Any]:
    name = REFERENCES_ONLY if e.status == "changed" and e.edit == "references" else STATUS_NAMES.get(e.status, "")
    return {"version": e.version, "effective_date": e.effective_date, "label": e.label, "status": e.status,
            "status_name": name, "edit": e.edit, "previous": id_name(e.previous_id) if e.previous_id else None,
            "ops": [[o.op, o.text] for o in e.ops]}
