"""``kb build`` and ``kb serve``: render the knowledge base as a static site, and preview it locally."""

from __future__ import annotations

import errno
import socket
import sys
from typing import TYPE_CHECKING

import click

from kb.cli.terminal import is_quiet, quiet_option, say, stage_progress, terminal_safe
from kb.errors import KbError

if TYPE_CHECKING:
    from http.server import ThreadingHTTPServer

FIRST_PROBLEMS = 10  # broken links and unresolved references listed without --verbose


@click.command("build")
@click.option("--out", "out", default="site", show_default=True, type=click.Path(file_okay=False),
              help="Folder to write the site to (replaced only when the build succeeds).")
@click.option("--strict", is_flag=True, help="Fail on any broken internal link or unresolved reference.")
@click.option("--base-url", "base_url", metavar="URL",
              help="Where the site will be served (e.g. https://example.org/rules/): absolute URLs in sitemap.xml, "
                   "the Atom feed, canonical links and the 404 page. Without it every URL is relative.")
@click.option("--verbose", "-v", is_flag=True, help="List every broken link and unresolved reference (default: the first "
              f"{FIRST_PROBLEMS} of each).")
@quiet_option
@click.pass_context
def build(ctx: click.Context, out: str, strict: bool, base_url: str | None, verbose: bool) -> None:
    """Render the knowledge base as a static site (re-rendering only pages whose inputs changed).

    With --strict a broken internal link or an unresolved reference fails the build and leaves the site as it was:
    for a knowledge base of whole rules texts (the bundled sample in data/ is an excerpt that cites rules it lacks,
    so a strict build of it fails).

    \b
    Example:
        kb build --out site
        kb build --out public --verbose
        kb build --out public --base-url https://example.org/rules/
        python -m http.server -d site   # or open site/index.html
    """
    from kb.site import build_site
    from kb.store import Store

    with Store.open(ctx.obj.get("kb_dir"), create=False) as store, stage_progress("kb build") as progress:
        report = build_site(store, out, strict=strict, base_url=base_url, progress=progress)
    for line in report.notices:
        say(f"notice: {line}")
    if not is_quiet():
        _print_problems(report.broken, report.unresolved, None if verbose else FIRST_PROBLEMS)
    edit = "; an edit build" if report.edit else ""  # kb.site.edits: only the edited articles and what shows them
    click.echo(f"site: {report.out} — {report.pages} pages ({report.rendered} rendered, {report.reused} unchanged{edit}), "
               f"search: {report.search_files} files ({report.search_written} written), "
               f"{len(report.broken)} broken links, {len(report.unresolved)} unresolved references, {report.seconds:.1f} s")


def _print_problems(broken: list[str], unresolved: list[str], first: int | None) -> None:
    for line in broken[:first]:
        click.echo(terminal_safe(f"warning: broken link {line}"), err=True)
    for line in unresolved[:first]:
        click.echo(terminal_safe(f"warning: unresolved reference: {line}"), err=True)
    more = len(broken) + len(unresolved) - len(broken[:first]) - len(unresolved[:first])
    if more > 0:
        click.echo(f"warning: … and {more} more (--verbose lists every one)", err=True)


@click.command("serve")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on (0: any free one).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on (0.0.0.0 = every one).")
@click.option("--dir", "site_dir", default="site", show_default=True, type=click.Path(file_okay=False),
              help="The built site folder.")
@quiet_option
@click.pass_context
def serve(ctx: click.Context, port: int, host: str, site_dir: str) -> None:
    """Serve the built site for preview, with live search at /_search?q=… from the search index.

    \b
    Example:
        kb build --out site && kb serve --dir site
        kb serve --port 8080
    """
    from pathlib import Path

    from kb.site.serve import serve_site

    if not (Path(site_dir) / "index.html").is_file():
        raise KbError(f"{site_dir}: no built site here; run 'kb build --out {site_dir}' first")

    def ready(server: ThreadingHTTPServer) -> None:
        click.echo(f"serving {site_dir} at http://{host}:{server.server_address[1]}/ (Ctrl-C to stop)")
        sys.stdout.flush()

    try:
        serve_site(site_dir, host=host, port=port, kb_dir=ctx.obj.get("kb_dir"), on_ready=ready)
    except socket.gaierror:
        raise KbError(f"--host {host}: no such host or interface (e.g. 127.0.0.1, or 0.0.0.0 for every one)") from None
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise KbError(f"{host}:{port}: the port is in use (another 'kb serve'?); choose another with --port, "
                          "or --port 0 for any free one") from None
        if exc.errno in (errno.EACCES, errno.EADDRNOTAVAIL):
            raise KbError(f"{host}:{port}: cannot listen here ({exc.strerror}); choose another --port or --host") from None
        raise
