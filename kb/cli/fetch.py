"""``kb fetch``: crawl a site into the cache of the kb folder (see :mod:`ingest.net.fetch`), with a progress bar and a
summary of what was fetched, unchanged, failed and skipped by robots.txt."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

import click

from ingest.kinds import FETCH_SITES
from kb.cli.terminal import is_quiet, quiet_option, terminal_safe

if TYPE_CHECKING:
    from ingest.net.fetch import CrawlReport


@click.command("fetch")
@click.argument("site", type=click.Choice(FETCH_SITES))
@click.argument("targets", nargs=-1, metavar="[TITLE_OR_URL...]")
@click.option("--base-url", default=None, help="Crawl this base instead of the site's own; links stay under it.")
@click.option("--delay", type=click.FloatRange(min=0), default=None,
              help="Seconds between requests to a host (default 1; a longer robots.txt Crawl-delay wins).")
@click.option("--depth", type=click.IntRange(min=0), default=None,
              help="Follow links this many steps from the seeds (mtgwiki default 0; wisdom-guild: all rule pages).")
@click.option("--titles-file", type=click.File("r", encoding="utf-8"), default=None,
              help="Read more titles or URLs from this file, one a line ('#' starts a comment).")
@click.option("--contact", envvar="KB_CONTACT", default=None,
              help="Contact URL or e-mail for site owners, sent in the User-Agent (default: $KB_CONTACT).")
@click.option("--tries", type=click.IntRange(min=1), default=4, show_default=True,
              help="Attempts per URL before it is recorded as failed.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=30.0, show_default=True,
              help="Read timeout in seconds (connect timeout: 10).")
@quiet_option
@click.pass_context
def fetch(ctx: click.Context, site: str, targets: tuple[str, ...], base_url: str | None, delay: float | None,
          depth: int | None, titles_file: TextIO | None, contact: str | None, tries: int, timeout: float) -> None:
    """Download SITE's pages into the kb folder's cache (resumable; re-runs only ask what changed).

    \b
    Sites:
        wisdom-guild  the rules viewer /cr/ and every chapter and section page /cr/r/NNN/
        mtgwiki       articles by TITLE, 'Category:NAME' members, links followed to --depth N
        mjmj          the Japanese CR file JPN_CR_YYYYMMDD_N.txt of a version (20260116, 20250919.1), its
                      name (also .rb.html) or URL; --base-url names the host and folder
        mtg-jp        release notes and the official rules document (/gameplay/rules/docs/ID/) by URL
    Then 'kb ingest --from-cache' parses what was fetched.

    \b
    Example:
        kb fetch wisdom-guild --contact mailto:me@example.org
        kb fetch mtgwiki 唱える 'カテゴリ:キーワード処理' --depth 1
        kb fetch mjmj 20260116 --base-url https://mjmj.info/data/docs/
        kb fetch mtg-jp https://mtg-jp.com/gameplay/rules/docs/0000000/
        kb ingest --from-cache
    """
    from ingest.net.fetch import DEFAULT_DELAY, CrawlInterrupted, Politeness, crawl
    from kb.store import default_kb_dir
    from kb.store.lock import writer_lock

    args = list(targets)
    if titles_file is not None:
        args += [line.strip() for line in titles_file if line.strip() and not line.lstrip().startswith("#")]
    politeness = Politeness(delay=DEFAULT_DELAY if delay is None else delay, contact=contact, read_timeout=timeout,
                            max_tries=tries)
    kb_dir = default_kb_dir(ctx.obj.get("kb_dir"))
    with writer_lock(kb_dir), _progress_bar(site, quiet=is_quiet()) as on_progress:
        try:
            report = crawl(site, args, kb_dir=kb_dir, base_url=base_url, depth=depth, politeness=politeness,
                           on_progress=on_progress)
        except CrawlInterrupted as exc:
            _print_summary(exc.report)
            click.echo("interrupted: run the same command again to resume", err=True)
            sys.exit(130)
    if not args and not report.done:  # a site crawled from what it is given (mtgwiki, mjmj, mtg-jp), given nothing
        raise click.UsageError(f"{site}: nothing to fetch; give TITLE_OR_URL arguments or --titles-file")
    _print_summary(report)
    if report.failed:
        sys.exit(1)


class _progress_bar:
    """A rich progress bar on stderr: done/total, outcome counts, pages per second (none with ``quiet``)."""

    def __init__(self, site: str, *, quiet: bool = False):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(bar_width=20), MofNCompleteColumn(),
                                 TextColumn("{task.fields[counts]}"), TextColumn("{task.fields[rate]}"),
                                 TimeElapsedColumn(), console=Console(stderr=True, quiet=quiet), transient=False)
        self.task = self.progress.add_task(site, total=None, counts="", rate="")
        self.notes_said = 0

    def __enter__(self) -> Callable[[CrawlReport, str], None]:
        self.progress.start()
        return self.update

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def update(self, report: CrawlReport, url: str) -> None:
        elapsed = self.progress.tasks[0].elapsed or 0
        rate = f"{report.done / elapsed:.1f}/s" if elapsed > 0 else ""
        counts = (f"new {len(report.fetched)} · 304 {len(report.not_modified)} · resumed {len(report.resumed)}"
                  f" · failed {len(report.failed)} · robots.txt {len(report.robots_skipped)}")
        self.progress.update(self.task, completed=report.done, total=report.done + report.pending, counts=counts,
                             rate=rate)
        for note in report.notes[self.notes_said:]:  # said at once: a capped Crawl-delay is a long wait ahead
            self.progress.console.print(terminal_safe(f"note: {note}"), markup=False, highlight=False, soft_wrap=True)
        self.notes_said = len(report.notes)


def _print_summary(report: CrawlReport) -> None:
    click.echo(f"{report.site}: fetched {len(report.fetched)}, not modified {len(report.not_modified)}, "
               f"resumed from cache {len(report.resumed)}, failed {len(report.failed)}, "
               f"skipped by robots.txt {len(report.robots_skipped)}")
    for url, reason in report.failed.items():
        click.echo(terminal_safe(f"failed: {url}: {reason}"), err=True)
    for url in report.robots_skipped if not is_quiet() else ():
        click.echo(terminal_safe(f"skipped by robots.txt: {url}"), err=True)
