"""The ``kb`` command: a thin click layer over the library API. Errors the user can act on are
:class:`KbError` and print one line; anything else is a bug and shows a traceback only with ``--debug``."""

from __future__ import annotations

import errno
import gc
import sys
from typing import TYPE_CHECKING, Any, TextIO

import click

from ingest.kinds import GAVE_NOTHING, SOURCE_KIND_NAMES, gave_nothing
from kb import __version__
from kb.cli.terminal import incomplete_warnings, is_quiet, json_text, quiet_option, say, stage_progress, terminal_safe
from kb.errors import KbError
from kb.model import NODE_KINDS, REF_CATEGORY, REF_EXTERNAL, REF_REDLINK
from kb.store import DB_NAME, Store, default_kb_dir
from kb.store.schema import damaged_database_error

if TYPE_CHECKING:
    from kb.pipeline import IngestReport

FIRST_UNRESOLVED = 10  # unresolved references and skipped files listed without --verbose
GC_THRESHOLD = 50_000  # allocations between two collections of the youngest generation (Python's default: 700)


class KbGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KbError as exc:
            click.echo(f"kb: error: {terminal_safe(str(exc))}", err=True)
            sys.exit(1)
        except BrokenPipeError:  # output piped into head & co.
            sys.stderr.close()
            sys.exit(0)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:  # a bug, or a database SQLite cannot read
            damaged = damaged_database_error(default_kb_dir(ctx.obj.get("kb_dir") if ctx.obj else None) / DB_NAME, exc)
            if damaged is not None:
                click.echo(f"kb: error: {terminal_safe(str(damaged))}", err=True)
                sys.exit(1)
            if getattr(exc, "errno", None) in (errno.ENOSPC, errno.EDQUOT) or "No space left on device" in str(exc):
                where = getattr(exc, "filename", None) or default_kb_dir(ctx.obj.get("kb_dir") if ctx.obj else None)
                click.echo(f"kb: error: {terminal_safe(str(where))}: no space left on the disk; free some space and "
                           "run the command again", err=True)
                sys.exit(1)
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(f"kb: internal error: {type(exc).__name__}: {terminal_safe(str(exc))} (run with --debug for the "
                       "traceback)", err=True)
            sys.exit(2)


@click.group(cls=KbGroup)
@click.version_option(__version__, "--version", "-V", prog_name="kb", message="%(prog)s %(version)s",
                      help="Print kb's version and exit.")
@click.option("--kb-dir", envvar="KB_HOME", type=click.Path(file_okay=False), default=None,
              help="Knowledge-base folder (default: $KB_HOME, else ./.kb).")
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
@quiet_option
@click.pass_context
def main(ctx: click.Context, kb_dir: str | None, debug: bool) -> None:
    """kb — the Japanese MTG Comprehensive Rules knowledge base.

    \b
    Example:
        kb ingest data/
        kb search 唱えた
        kb build --out site
    """
    # a command makes hundreds of thousands of small objects, almost none of them in cycles: with Python's default
    # threshold (700) the cyclic collector ran hundreds of times per ingest or update for nothing
    gc.set_threshold(GC_THRESHOLD, 10, 10)
    ctx.ensure_object(dict)
    ctx.obj["kb_dir"] = kb_dir
    ctx.obj["debug"] = debug


def open_store(ctx: click.Context, *, create: bool = False) -> Store:
    return Store.open(ctx.obj.get("kb_dir"), create=create)


@main.command()
@click.argument("sources", nargs=-1, required=False)
@click.option("--kind", type=click.Choice(SOURCE_KIND_NAMES), default=None,
              help="Force the source kind instead of detecting it (an error when the sources hold nothing of it).")
@click.option("--from-cache", "from_cache", is_flag=False, flag_value="all", default=None, metavar="[SITE]",
              help="Parse what 'kb fetch' stored in the cache (all sites, or one).")
@click.option("--strict", is_flag=True, help="Turn warnings and unresolved references into failure.")
@click.option("--verbose", "-v", is_flag=True,
              help="List every unresolved reference and every file of a folder left out (default: the first ones).")
@click.option("--force", is_flag=True,
              help="Store a rules text even when it is incomplete or far smaller than the newest version it replaces.")
@quiet_option
@click.pass_context
def ingest(ctx: click.Context, sources: tuple[str, ...], kind: str | None, from_cache: str | None, strict: bool,
           verbose: bool, force: bool) -> None:
    """Parse SOURCES (files, folders or URLs) into the knowledge base.

    \b
    Example:
        kb ingest data/
        kb ingest MagicCompRules-20260116.txt JPN_CR_20231117_0.txt JPN_CR_20250725_0.rb.html
        kb ingest https://mtg-jp.com/gameplay/rules/docs/0000000/
        kb ingest --kind wisdom-guild saved/701.34.html
    """
    from kb.pipeline import ingest_sources

    if not sources and not from_cache:
        raise click.UsageError("give at least one SOURCE (or --from-cache)")
    with open_store(ctx, create=True) as store, stage_progress("kb ingest") as progress:
        if from_cache:
            from kb.pipeline import ingest_from_cache

            report = ingest_from_cache(store, None if from_cache == "all" else from_cache, kb_dir=ctx.obj.get("kb_dir"),
                                       strict=strict, force=force, progress=progress)
        else:
            report = ingest_sources(store, sources, kind=kind, strict=strict, force=force, progress=progress)
    print_ingest_report(report, quiet=is_quiet(), verbose=verbose)
    if report.failed:
        sys.exit(1)


def print_ingest_report(report: IngestReport, *, quiet: bool = False, verbose: bool = False) -> None:
    """Warnings of the sources read now, then the unresolved references — listed only when this ingest changed the
    store (else they are those of earlier ingests, counted), the first :data:`FIRST_UNRESOLVED` unless ``verbose`` —
    and the errors last, where they are seen: even with --quiet, a source that could not be read, a rules text that
    is incomplete or a source that gave nothing is never silent."""
    warnings = [str(w) for w in report.warnings]
    loud = set(incomplete_warnings(warnings)) | {w for w in warnings if GAVE_NOTHING in w}  # shown even with --quiet
    for line in warnings if not quiet else [w for w in warnings if w in loud]:
        click.echo(f"warning: {terminal_safe(line)}", err=True)
    if not quiet and report.stored:
        shown = report.links.diagnostics if verbose else report.links.diagnostics[:FIRST_UNRESOLVED]
        for d in shown:
            click.echo(f"warning: {terminal_safe(str(d))}", err=True)
        if len(report.links.diagnostics) > len(shown):
            click.echo(f"warning: … and {len(report.links.diagnostics) - len(shown)} more unresolved references "
                       "(--verbose lists every one)", err=True)
    if not quiet and report.skipped:
        for line in report.skipped if verbose else report.skipped[:FIRST_UNRESOLVED]:
            click.echo(f"skipped: {terminal_safe(line)}", err=True)
        if not verbose and len(report.skipped) > FIRST_UNRESOLVED:
            click.echo(f"skipped: … and {len(report.skipped) - FIRST_UNRESOLVED} more (--verbose lists every one)",
                       err=True)
    for line in report.failed:
        click.echo(f"error: {terminal_safe(line)}", err=True)
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(report.nodes_by_kind.items()))
    click.echo(f"sources: {report.stored + report.unchanged} read ({report.stored} stored, {report.unchanged} unchanged), "
               f"{len(report.failed)} failed, {sum(map(gave_nothing, report.documents))} gave nothing"
               + (f", {len(report.skipped)} files skipped (not a known kind of source)" if report.skipped else ""))
    click.echo(f"nodes: {kinds or 'none'}")
    click.echo(f"references: {report.links.total_resolved} resolved, {report.links.total_unresolved} unresolved")
    click.echo(f"warnings: {len(report.warnings) + len(report.links.diagnostics)}")
    if report.index is not None:
        if report.index.notice:
            click.echo(f"notice: {report.index.notice}", err=True)
        click.echo(f"search index: {report.index.added} added, {report.index.updated} updated, "
                   f"{report.index.removed} removed ({report.index.total} nodes)")


LANGS = click.Choice(["ja", "en"])


@main.command()
@click.option("--version", "version", default=None,
              help="Only this version: a version id or effective date as 'kb versions' lists them.")
@click.option("--lang", type=LANGS, default=None, help="Only nodes of this language.")
@click.option("--kind", "kinds", type=click.Choice(NODE_KINDS), multiple=True, help="Only nodes of this kind (repeatable).")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "json"]), default="jsonl", show_default=True,
              help="jsonl: one JSON object per line; json: one JSON list.")
@click.option("--output", "-o", type=click.File("w", encoding="utf-8", lazy=False), default="-", show_default=True,
              help="File to write ('-': standard output).")
@quiet_option
@click.pass_context
def export(ctx: click.Context, version: str | None, lang: str | None, kinds: tuple[str, ...], fmt: str,
           output: TextIO) -> None:
    """Write every node as JSON (one object per line with jsonl).

    \b
    Example:
        kb export --lang ja --format json -o kb.json
        kb export --version 20260116 --kind glossary
    """
    from kb.export import export_records

    with open_store(ctx) as store:
        records = export_records(store, version=version, lang=lang, kinds=list(kinds) or None)
        count = 0
        if fmt == "jsonl":
            for rec in records:
                output.write(json_text(rec) + "\n")
                count += 1
        else:
            listed = list(records)
            count = len(listed)
            output.write(json_text(listed, indent=1))
            output.write("\n")
    if not count:
        say("notice: no node matches" + "".join(f" {flag} {value}" for flag, value in (
            ("--version", version), ("--lang", lang), *(("--kind", k) for k in kinds)) if value))
    elif output.name != "<stdout>":
        say(f"exported {count} nodes to {output.name}")


@main.command()
@click.argument("node")
@click.option("--version", "version", default=None, help="Version of NODE (default: newest that has it).")
@click.option("--lang", type=LANGS, default=None, help="Only NODE in this language (default: every language).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: every reference in full.")
@click.option("--limit", "-n", default=10, show_default=True, type=click.IntRange(1),
              help="References listed per kind (the rest are counted).")
@click.option("--all", "show_all", is_flag=True, help="List every reference and citation (no --limit).")
@quiet_option
@click.pass_context
def links(ctx: click.Context, node: str, version: str | None, lang: str | None, as_json: bool, limit: int,
          show_all: bool) -> None:
    """Show what NODE refers to and what cites it (a rule number, glossary term or article title): each kind of
    reference with its count, the same target once, links that leave the knowledge base labelled as such.

    \b
    Example:
        kb links 601.2f
        kb links 唱える --json
        kb links wiki:唱える --all
    """
    from kb.link.query import find_node_keys, links_of
    from kb.versions.catalog import resolve_version

    with open_store(ctx) as store:
        if version is not None:
            version = resolve_version(store, version, lang).version  # an unknown version names the known ones
        if not node.strip():
            raise click.UsageError("NODE is empty: give a rule number (601.2f), a term (唱える) or an article title")
        keys = find_node_keys(store, node, version=version, lang=lang)
        if not keys:
            where = f" of version {version}" if version else f" in {lang}" if lang else ""
            raise KbError(f"{node}: no such rule, term or article{where} in the knowledge base")
        result = [links_of(store, k) for k in keys]
    if as_json:
        click.echo(json_text(result, indent=1))
        return
    limit = 1 << 62 if show_all else limit
    for item in result:
        click.echo(terminal_safe(f"{item['id']} [{item['version'] or '-'} {item['lang']}] {item['label']}"))
        _print_refers_to(item["refers_to"], limit)
        cited = item["cited_by"]
        click.echo(f"  cited by: {len(cited)}")
        for c in cited[:limit]:
            click.echo(terminal_safe(f"    {c['id']} [{c['version'] or '-'} {c['lang']}] {c.get('label') or ''}"))
        if len(cited) > limit:
            click.echo(f"    … and {len(cited) - limit} more (--all lists every one)")


OUTSIDE_LABELS = {REF_EXTERNAL: "external link", REF_REDLINK: "red link: no such page on the wiki",
                  REF_CATEGORY: "wiki category"}


def _print_refers_to(refs: list[dict], limit: int) -> None:
    """The references of one node grouped by kind (most first), each target once with how often it is written."""
    groups: dict[str, dict[tuple[str, str], int]] = {}
    for r in refs:
        where = OUTSIDE_LABELS.get(r["kind"]) or (
            f"{r['node']['id']} [{r['node']['version'] or '-'} {r['node']['lang']}]" if "node" in r
            else "not in the knowledge base")
        targets = groups.setdefault(r["kind"], {})
        targets[(r["target"], where)] = targets.get((r["target"], where), 0) + 1
    click.echo(f"  refers to: {len(refs)}" + (" (" + ", ".join(
        f"{kind} {sum(targets.values())}" for kind, targets in _by_size(groups)) + ")" if refs else ""))
    for kind, targets in _by_size(groups):
        outside = sum(n for (_, where), n in targets.items() if where == "not in the knowledge base")
        click.echo(f"    {kind}: {sum(targets.values())}" + (f", {outside} not in the knowledge base" if outside else ""))
        for (target, where), n in list(targets.items())[:limit]:
            click.echo(terminal_safe(f"      {target} → {where}" + (f"  (×{n})" if n > 1 else "")))
        if len(targets) > limit:
            click.echo(f"      … and {len(targets) - limit} more (--all lists every one)")


def _by_size(groups: dict[str, dict[tuple[str, str], int]]) -> list[tuple[str, dict[tuple[str, str], int]]]:
    return sorted(groups.items(), key=lambda g: (-sum(g[1].values()), g[0]))


from kb.cli.fetch import fetch  # noqa: E402

main.add_command(fetch)

from kb.cli.search import index_command, search  # noqa: E402

main.add_command(search)
main.add_command(index_command)

from kb.cli.versions import diff, history, update, versions  # noqa: E402

main.add_command(versions)
main.add_command(diff)
main.add_command(history)
main.add_command(update)

from kb.cli.site import build, serve  # noqa: E402

main.add_command(build)
main.add_command(serve)
