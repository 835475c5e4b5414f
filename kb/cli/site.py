"""``kb build`` and ``kb serve``: render the knowledge base as a static site, and preview it locally."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from kb.cli.terminal import terminal_safe
from kb.errors import KbError

if TYPE_CHECKING:
    from http.server import ThreadingHTTPServer


@click.command("build")
@click.option("--out", "out", default="site", show_default=True, type=click.Path(file_okay=False),
              help="Folder to write the site to (replaced only when the build succeeds).")
@click.option("--strict", is_flag=True, help="Fail on any broken internal link or unresolved reference.")
@click.option("--base-url", "base_url", metavar="URL",
              help="Where the site will be served (e.g. https://example.org/rules/): absolute URLs in sitemap.xml, "
                   "the Atom feed, canonical links and the 404 page. Without it every URL is relative.")
@click.option("--quiet", "-q", is_flag=True, help="Print the summary only: no warning lines (notices still show).")
@click.pass_context
def build(ctx: click.Context, out: str, strict: bool, base_url: str | None, quiet: bool) -> None:
    """Render the knowledge base as a static site (re-rendering only pages whose inputs changed).

    \b
    Example:
        kb build --out site
        kb build --out public --strict
        kb build --out public --base-url https://example.org/rules/
        python -m http.server -d site   # or open site/index.html
    """
    from kb.site import build_site
    from kb.store import Store

    with Store.open(ctx.obj.get("kb_dir"), create=False) as store:
        report = build_site(store, out, strict=strict, base_url=base_url)
    for line in report.notices:
        click.echo(f"notice: {line}", err=True)
    if not quiet:
        _print_problems(report.broken, report.unresolved)
    click.echo(f"site: {report.out} — {report.pages} pages ({report.rendered} rendered, {report.reused} unchanged), "
               f"search: {report.search_files} files ({report.search_written} written), "
               f"{len(report.broken)} broken links, {len(report.unresolved)} unresolved references, {report.seconds:.1f} s")


def _print_problems(broken: list[str], unresolved: list[str]) -> None:
    for line in broken[:20]:
        click.echo(terminal_safe(f"warning: broken link {line}"), err=True)
    for line in unresolved[:20]:
        click.echo(terminal_safe(f"warning: unresolved reference: {line}"), err=True)
    more = len(broken) + len(unresolved) - min(20, len(broken)) - min(20, len(unresolved))
    if more > 0:
        click.echo(f"warning: … and {more} more", err=True)


@click.command("serve")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on (0.0.0.0 = every one).")
@click.option("--dir", "site_dir", default="site", show_default=True, type=click.Path(file_okay=False),
              help="The built site folder.")
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

    serve_site(site_dir, host=host, port=port, kb_dir=ctx.obj.get("kb_dir"), on_ready=ready)
