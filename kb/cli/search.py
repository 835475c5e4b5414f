"""``kb search`` and ``kb index``: the command-line face of :mod:`kb.search` (heavy imports stay inside)."""

from __future__ import annotations

from collections.abc import Iterable

import click

from kb.cli.terminal import json_text, quiet_option, say, stage_progress, terminal_safe


@click.command()
@click.argument("query")
@click.option("--json", "as_json", is_flag=True, help="Print the hits as a JSON list.")
@click.option("--limit", "-n", default=10, show_default=True, type=click.IntRange(1, 1000), help="Number of hits.")
@click.option("--kind", type=click.Choice(["rule", "glossary", "article", "note", "card"]), default=None,
              help="Only this kind (rule = chapters, sections, rules and subrules).")
@click.option("--lang", type=click.Choice(["ja", "en"]), default=None, help="Only this language.")
@click.option("--version", "version", default=None, help="CR version to search (default: what the site shows: the current view).")
@quiet_option
@click.pass_context
def search(ctx: click.Context, query: str, as_json: bool, limit: int, kind: str | None, lang: str | None,
           version: str | None) -> None:
    """Search rules, glossary and articles for QUERY.

    QUERY is words (唱えた, マナコスト, "呪文を唱える"), a rule number in any form (601.2f, ６０１．２ｆ, CR:601.2f;
    120.4 = the rule and its subrules, 120.4. = the rule alone, 601.2a-d = a range), a glossary term in Japanese
    or English (予示, Manifest), with optional filters kind:rule, kind:glossary, lang:en, version:20231117.

    \b
    Example:
        kb search 唱えた
        kb search "rule 601.2a-d"
        kb search Manifest --json --limit 3
        kb search "kind:rule マナ・コスト"
    """
    from kb.search.query import Searcher
    from kb.store import Store

    def notify(message: str) -> None:
        say(f"notice: {message}")

    with Store.open(ctx.obj.get("kb_dir"), create=False) as store, Searcher(store, notify) as searcher:
        hits = searcher.search(query, limit=limit, kind=kind, lang=lang, version=version)
        hint = None if hits or as_json else searcher.suggest(query, lang=lang, version=version)
    if as_json:
        click.echo(json_text([h.to_dict() for h in hits], indent=1))
        return
    if not hits:
        said = [f"closest terms: {', '.join(hint.terms)}"] if hint and hint.terms else []
        said += [f"English name: {', '.join(hint.english)}"] if hint and hint.english else []
        say(f"no results for {query!r}" + "".join(f"; {x}" for x in said))
        return
    corrected = next((h.corrected for h in hits if h.corrected), None)
    if corrected:
        say(f"also searched as {corrected!r}")
    for hit in hits:
        label = " ".join(x for x in (hit.number, hit.title) if x) or hit.id
        if hit.shown_as:
            label += f" (now {hit.shown_as})"
        where = f"  ({hit.section})" if hit.section and hit.section != label else ""
        click.echo(f"{click.style(terminal_safe(label), bold=True)} [{hit.kind} {hit.lang} {hit.version or '-'}] "
                   f"{terminal_safe(hit.url + where)}")
        click.echo("    " + _highlighted(hit.snippet.replace("\n", " "), hit.highlights))


def _highlighted(snippet: str, spans: Iterable[tuple[int, int]]) -> str:
    out, at = [], 0
    for start, end in spans:
        out += [terminal_safe(snippet[at:start]), click.style(terminal_safe(snippet[start:end]), fg="yellow", bold=True)]
        at = end
    out.append(terminal_safe(snippet[at:]))
    return "".join(out)


@click.command("index")
@click.option("--rebuild", is_flag=True, help="Drop the index and build it again from the store.")
@quiet_option
@click.pass_context
def index_command(ctx: click.Context, rebuild: bool) -> None:
    """Check the search index against the knowledge base and bring it up to date ('kb ingest' already does this):
    a damaged index is rebuilt, documents missing or stale are indexed again.

    \b
    Example:
        kb index
        kb index --rebuild
    """
    from kb.pipeline import INDEX_PENDING
    from kb.search.index import update_index, verify_index
    from kb.store import Store
    from kb.store.lock import writer_lock

    with Store.open(ctx.obj.get("kb_dir"), create=False) as store, writer_lock(store.kb_dir), \
            stage_progress("kb index") as progress:
        if rebuild:
            report = update_index(store, rebuild=True, progress=progress)
        else:
            check = verify_index(store, progress=progress)
            if check.damage:
                click.echo(f"index: damaged ({terminal_safe(check.damage)}); rebuilt", err=True)
            report = check.report
        (store.kb_dir / INDEX_PENDING).unlink(missing_ok=True)  # what an ingest left for later is done
    if report.notice:
        say(f"notice: {report.notice}")
    click.echo(f"index: {report.added} added, {report.updated} updated, {report.removed} removed, {report.total} nodes")
