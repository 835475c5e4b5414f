"""What the CLI prints of text it did not write (source text, file names, URLs, error messages): control
characters (C0 and C1, ESC of terminal escape sequences included), line breaks and bidirectional-format characters
(U+202E and the like) are shown as ``\\x1b``-style escapes, so no input can move the cursor, recolour the terminal,
split one line into two or reverse what follows. :func:`terminal_safe` is the one place this happens for text, and
:func:`json_text` for JSON (the same characters as JSON's own ``\\u`` escapes: the data is unchanged).

And how a command talks besides its output: ``--quiet`` (:func:`quiet_option`, on every command and on ``kb`` itself),
:func:`say` for what ``--quiet`` silences, :class:`StageProgress` for the library's progress callback."""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO, TypeVar

import click

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every unsafe character escaped; ``keep_newlines`` keeps ``\\n`` (multi-line output)."""
    if keep_newlines:
        return "\n".join(_UNSAFE.sub(_escape, line) for line in text.split("\n"))
    return _UNSAFE.sub(_escape, text)


_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")  # JSON escapes C0


def json_text(data: object, *, indent: int | None = None) -> str:
    """``data`` as JSON (non-ASCII kept readable) with every unsafe character written as a ``\\uXXXX`` escape."""
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(data, ensure_ascii=False, indent=indent))


def incomplete_warnings(warnings: list[str]) -> list[str]:
    """The warnings saying a rules text is cut short or an excerpt: shown by every command, even with --quiet."""
    from ingest.cr_text import INCOMPLETE

    return [line for line in warnings if INCOMPLETE in line]


PLAIN_EVERY = 5.0  # seconds: without a terminal, a stage running this long is reported, then every as many seconds
STAGE_NAMES = {"read": "reading sources", "store": "storing", "link": "linking references", "index": "indexing for search",
               "gather": "reading the store", "render": "rendering pages", "search": "writing the search files",
               "check": "checking links"}


class StageProgress:
    """The CLI's side of the library's ``progress(stage, done, total)`` callback (:data:`kb.model.Progress`): on a
    terminal a rich progress bar on stderr (one line per stage, with its count, its bar and the time it took); else
    plain lines for a log, only about what takes long — a stage still running after :data:`PLAIN_EVERY` seconds says
    how far it is (``kb build: rendering pages 3,000/5,378``) every :data:`PLAIN_EVERY` seconds, and when it ends how
    long it took — so a quick command stays as quiet as before; with ``quiet`` nothing. A context manager giving the
    callback. ``clock``: seconds, for the plain lines' timing."""

    def __init__(self, command: str, *, quiet: bool = False, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.command = command
        self.quiet = quiet
        self.stream = stream if stream is not None else sys.stderr
        self.live = not quiet and self.stream.isatty()
        self.clock = clock
        self.stage: str | None = None
        self.started = self.said = 0.0  # when the stage began, when a plain line last spoke of it
        self.tasks: dict[str, Any] = {}
        self.bar: Any = None

    def __enter__(self) -> Callable[[str, int, int | None], None]:
        if self.live:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self.bar = Progress(SpinnerColumn(finished_text="✓"), TextColumn("[bold]{task.description}"),
                                BarColumn(bar_width=30), TextColumn("{task.fields[count]}"), TimeElapsedColumn(),
                                console=Console(file=self.stream), transient=False)
            self.bar.start()
        return self.update

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self._finish()
            self.bar.stop()
        elif not self.quiet:
            self._plain_done()

    def update(self, stage: str, done: int, total: int | None) -> None:
        if self.quiet:
            return
        if self.bar is None:
            self._plain(stage, done, total)
            return
        if stage != self.stage:
            self._finish()
            self.tasks[stage] = self.bar.add_task(STAGE_NAMES.get(stage, stage), total=total, count="")
            self.stage = stage
        self.bar.update(self.tasks[stage], completed=done, total=total, count=f"{done:,}/{total:,}" if total else "")

    def _plain(self, stage: str, done: int, total: int | None) -> None:
        now = self.clock()
        if stage != self.stage:
            self._plain_done()
            self.stage, self.started, self.said = stage, now, now
        elif now - self.said >= PLAIN_EVERY:
            count = f" {done:,}/{total:,}" if total else ""
            self._say(f"{STAGE_NAMES.get(stage, stage)}{count} ({now - self.started:.0f} s)")
            self.said = now

    def _plain_done(self) -> None:
        """The line that ends a long stage (when a plain line spoke of it, or it took :data:`PLAIN_EVERY` s)."""
        if self.stage is None:
            return
        took = self.clock() - self.started
        if took >= PLAIN_EVERY or self.said > self.started:
            self._say(f"{STAGE_NAMES.get(self.stage, self.stage)} done in {took:.1f} s")

    def _say(self, line: str) -> None:
        print(f"{self.command}: {line}", file=self.stream, flush=True)

    def _finish(self) -> None:
        """The stage before the next one is done: its bar full, its clock stopped."""
        if self.stage is not None and self.stage in self.tasks:
            task = self.tasks[self.stage]
            total = self.bar.tasks[task].total
            self.bar.update(task, total=total or 1, completed=total or 1, count=f"{total:,}/{total:,}" if total else "")
            self.bar.stop_task(task)


QUIET = "kb.quiet"  # the key in click's context meta (shared by the group and its command)
QUIET_HELP = ("No progress, notices or warnings on stderr (errors still show, and the warnings that a rules text is "
              "incomplete or that a source gave nothing).")
F = TypeVar("F", bound=Callable[..., Any])


def _set_quiet(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    ctx.meta[QUIET] = bool(value or ctx.meta.get(QUIET))


def quiet_option(command: F) -> F:
    """``--quiet``/``-q``, the same on every command (and on ``kb`` itself): read it with :func:`is_quiet`."""
    return click.option("--quiet", "-q", is_flag=True, expose_value=False, callback=_set_quiet,
                        help=QUIET_HELP)(command)


def is_quiet() -> bool:
    ctx = click.get_current_context(silent=True)
    return bool(ctx and ctx.meta.get(QUIET))


def say(line: str) -> None:
    """One line on stderr that ``--quiet`` silences (a notice, a warning, a hint), made terminal-safe."""
    if not is_quiet():
        click.echo(terminal_safe(line), err=True)


def stage_progress(command: str) -> StageProgress:
    """The progress display of ``command`` (``kb ingest``), silent under ``--quiet``."""
    return StageProgress(command, quiet=is_quiet())
