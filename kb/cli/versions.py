"""CLI for rules updates: ``kb versions``, ``kb diff``, ``kb history`` and ``kb update`` (thin layers over
:mod:`kb.versions.catalog`, :mod:`kb.versions.diff`, :mod:`kb.versions.history` and :mod:`kb.update`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from kb.cli.terminal import incomplete_warnings, json_text, quiet_option, say, terminal_safe
from kb.ids import id_name

if TYPE_CHECKING:
    from kb.store import Store
    from kb.versions.diff import TextOp

LANGS = click.Choice(["ja", "en"])


def _store(ctx: click.Context) -> Store:
    from kb.store import Store

    return Store.open(ctx.obj.get("kb_dir"), create=False)


def _echo_json(data: object) -> None:
    click.echo(json_text(data, indent=1))


@click.command()
@click.option("--lang", type=LANGS, default=None, help="Only versions of this language.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@quiet_option
@click.pass_context
def versions(ctx: click.Context, lang: str | None, as_json: bool) -> None:
    """List the rules versions in the knowledge base, newest first, with dates and counts.

    \b
    Example:
        kb versions
        kb versions --lang en --json
    """
    from kb.versions.catalog import list_versions

    with _store(ctx) as store:
        found = list_versions(store, lang)
    if as_json:
        _echo_json([v.to_json() for v in found])
        return
    if not found:
        say("no rules versions yet; run 'kb ingest' with a CR text file")
        return
    click.echo(f"{'version':12} {'lang':4} {'effective':10} {'rules':>6} {'glossary':>8}  {'ingested':25}  dates")
    for v in found:
        dates = (f"release {v.release}" if v.release else "") if v.lang == "en" else "; ".join(filter(None, [
            f"翻訳日 {v.translated_date}" if v.translated_date else "", f"claims {v.claim_date}" if v.claim_date else "",
            f"original {v.original}" if v.original else "no English original stored"]))
        click.echo(f"{v.version:12} {v.lang:4} {v.effective_date or '-':10} {v.rules:6} {v.glossary:8}  {v.ingested_at:25}"
                   f"  {dates}".rstrip())


@click.command()
@click.argument("old")
@click.argument("new")
@click.option("--lang", type=LANGS, default=None, help="Language to compare when OLD/NEW name versions of both.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (every rule and glossary entry, with inline diff ops).")
@click.option("--all", "show_all", is_flag=True, help="Also list unchanged rules (text output).")
@quiet_option
@click.pass_context
def diff(ctx: click.Context, old: str, new: str, lang: str | None, as_json: bool, show_all: bool) -> None:
    """Show what changed from version OLD to NEW: added, removed, changed (inline), moved (renumbered) rules and
    glossary entries, and references that now point elsewhere. OLD and NEW are version ids as 'kb versions'
    prints them, or effective dates.

    \b
    Example:
        kb diff 20251114 20260116
        kb diff 2023-11-17 2025-11-14 --lang en --json
    """
    from kb.versions.catalog import resolve_pair
    from kb.versions.diff import diff_versions

    with _store(ctx) as store:
        old_v, new_v = resolve_pair(store, old, new, lang)
        result = diff_versions(store, old_v, new_v)
    if as_json:
        _echo_json(result.to_json())
        return
    counts = result.counts()
    click.echo(f"{old_v.label} → {new_v.label}")
    edits = result.edit_counts()
    click.echo("  " + ", ".join(f"{k} {v}" for k, v in counts.items())
               + f"; texts edited {edits['text']}, references renumbered only {edits['references']}")
    for change in result.changes:
        if change.status == "unchanged" and not show_all:
            continue
        click.echo(f"{_STATUS_MARK[change.status]} {terminal_safe(change.label)}"
                   + (f"  ({change.similarity:.2f})" if change.status == "moved" else "")
                   + ("  [references renumbered]" if change.edit == "references" else ""))
        if change.status in ("changed", "moved") and change.ops:
            click.echo("    " + render_ops(change.ops).replace("\n", "\n    "))
        elif change.status in ("added", "removed"):
            text = change.new_text if change.status == "added" else change.old_text
            click.echo("    " + click.style(_clip(text), fg="green" if change.status == "added" else "red"))
    if result.retargeted:
        click.echo("references that now point elsewhere:")
        for r in result.retargeted:
            where = f"now {id_name(r.moved_to)}" if r.moved_to else "removed"
            now = f"; {r.target} is now another rule" if r.now_at_target else f"; {r.target} no longer exists"
            source = f"{r.source_id} [{r.source_version or 'unversioned'}]"
            click.echo(terminal_safe(f"  {source} cites {r.target}: that rule is {where}{now}"))


_STATUS_MARK = {"added": "+", "removed": "-", "changed": "~", "moved": ">", "unchanged": "="}


def render_ops(ops: Sequence[TextOp], context: int = 60) -> str:
    """Inline diff for a terminal: [-deleted-]{+inserted+} (coloured on a terminal), long unchanged runs cut to
    ``context`` characters around each change."""
    out = []
    for i, op in enumerate(ops):
        if op.op == "equal":
            text = op.text
            if i > 0 and i < len(ops) - 1 and len(text) > 2 * context:
                text = text[:context] + " … " + text[-context:]
            elif i == 0 and len(text) > context:
                text = "… " + text[-context:]
            elif i == len(ops) - 1 and len(text) > context:
                text = text[:context] + " …"
            out.append(terminal_safe(text, keep_newlines=True))
        elif op.op == "delete":
            out.append(click.style(f"[-{terminal_safe(op.text, keep_newlines=True)}-]", fg="red"))
        else:
            out.append(click.style(f"{{+{terminal_safe(op.text, keep_newlines=True)}+}}", fg="green"))
    return "".join(out)


def _clip(text: str | None, limit: int = 200) -> str:
    flat = " ".join((text or "").split())
    return terminal_safe(flat if len(flat) <= limit else flat[:limit] + "…")


@click.command()
@click.argument("rule")
@click.option("--lang", type=LANGS, default=None, help="Only this language's history (default: every language).")
@click.option("--version", "version", default=None,
              help="Start from RULE as numbered in this version (default: newest that has it).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (the first language's history, the others beside).")
@quiet_option
@click.pass_context
def history(ctx: click.Context, rule: str, lang: str | None, version: str | None, as_json: bool) -> None:
    """Show one rule's (or glossary term's) history across every ingested version, following renumbering.

    \b
    Example:
        kb history 701.40
        kb history 701.34 --version 20231117
        kb history Blight --json
    """
    from kb.store import NodeKey
    from kb.versions.current import bilingual_history, current_view

    with _store(ctx) as store:
        found = bilingual_history(store, rule, lang=lang, version=version)
        view = current_view(store)
    if as_json:
        _echo_json(found[0].to_json() | {"other_languages": [h.to_json() for h in found[1:]]})
        return
    for i, result in enumerate(found):
        if len(found) > 1:
            click.echo(("" if i == 0 else "\n") + _LANG_NAMES.get(result.lang, result.lang) + ":")
        for e in result.entries:
            edited = "references renumbered" if e.edit == "references" else "text changed"
            how = {"first": "", "added": "added", "unchanged": "unchanged", "changed": edited,
                   "removed": "removed"}.get(e.status)
            if e.status == "moved" and e.previous_id:  # a move always names where it came from
                how = f"renumbered from {id_name(e.previous_id)}" + (f", {edited}" if e.ops else "")
            click.echo(terminal_safe(f"{e.version:12} {e.effective_date or '-':10} {e.label:12} {how}"))
            if e.ops:
                click.echo("    " + render_ops(e.ops).replace("\n", "\n    "))
            elif e.status in ("first", "added"):
                click.echo("    " + _clip(e.text))
        last = result.entries[-1] if result.entries else None
        shown_id = view.current_ids.get(NodeKey(last.version, "ja", last.node_id)) if last and result.lang == "ja" else None
        if shown_id and view.english:
            click.echo(f"  shown with {id_name(shown_id)} of {view.english.version} "
                       f"(translation {view.status(shown_id)})")


_LANG_NAMES = {"en": "English", "ja": "Japanese"}


@click.command()
@click.argument("sources", nargs=-1, required=False)
@click.option("--site", "sites", multiple=True,
              help="Re-crawl this site as last fetched (conditional requests) and ingest it. Repeatable.")
@click.option("--out", type=click.Path(file_okay=False), default=None, help="Rebuild the site in this folder.")
@click.option("--strict", is_flag=True, help="Fail on warnings, unresolved references and broken links.")
@click.option("--delay", type=click.FloatRange(min=0), default=None,
              help="Seconds between requests to one host (default 1).")
@click.option("--contact", default=None, help="URL or address put in the User-Agent.")
@click.option("--base-url", "base_url", metavar="URL", default=None,
              help="Where the site is served, as for 'kb build --base-url' (absolute sitemap, feed and canonical links).")
@click.option("--force", is_flag=True,
              help="Store a rules text even when it is incomplete or far smaller than the newest version it replaces.")
@quiet_option
@click.pass_context
def update(ctx: click.Context, sources: tuple[str, ...], sites: tuple[str, ...], out: str | None, strict: bool,
           delay: float | None, contact: str | None, base_url: str | None, force: bool) -> None:
    """Fetch, ingest, compare and rebuild, all or nothing: when nothing changed nothing is touched; when any
    stage fails the previous knowledge base and site stay as they were.

    \b
    Example:
        kb update --site wisdom-guild --out site
        kb update MagicCompRules-20260116.txt --out site --base-url https://example.org/rules/
    """
    from kb.update import run_update

    if not sources and not sites:
        raise click.UsageError("give SOURCES (files, folders, URLs) and/or --site SITE")
    result = run_update(ctx.obj.get("kb_dir"), sources=sources, sites=sites, out=out, strict=strict, delay=delay,
                        contact=contact, base_url=base_url, on_stage=lambda stage: say(f"kb update: {stage}…"),
                        force=force)
    for line in incomplete_warnings(result.warnings):
        click.echo(f"warning: {terminal_safe(line)}", err=True)
    for line in result.skipped:
        say(f"skipped: {line}")
    if not result.changed:
        click.echo("nothing changed: the knowledge base and the site are already up to date")
        return
    click.echo(f"stored {result.stored} changed source(s); {len(result.warnings)} warnings (see 'kb ingest' for each)")
    for d in result.diffs:
        counts = ", ".join(f"{k} {v}" for k, v in d.counts().items() if k != "unchanged")
        click.echo(f"{d.old.label} → {d.new.label}: {counts}")
    if result.build is not None:
        b = result.build
        edit = "; an edit build" if b.edit else ""  # kb.site.edits
        click.echo(f"site: {b.pages} pages in {b.out} ({b.rendered} rendered, {b.reused} reused{edit})")
