"""One writer at a time per kb folder: :func:`writer_lock`.

Every command that writes into a kb folder — ``kb ingest`` (store, search index, URL cache), ``kb fetch`` (the cache),
``kb build`` (it reads the store throughout and swaps its output in), ``kb index``, ``kb update`` — holds this lock for
its whole run. A second writer waits up to :data:`WAIT_SECONDS` (``$KB_WRITER_WAIT`` to change it), then fails with
"another kb is writing <kb dir> (pid N)". The lock is an advisory ``flock`` on ``<kb dir>/.writer.lock``, released by
the OS when its holder dies (a killed writer never blocks the next one); the file holds the holder's pid. Re-entrant
within a process (``kb update`` ingests and builds while it holds it). Readers take no lock: the store's transactions
and the build's and update's swaps keep what they see whole.
"""

from __future__ import annotations

import fcntl
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from kb.errors import KbError

LOCK_NAME = ".writer.lock"
WAIT_SECONDS = 5.0

_held: dict[Path, int] = {}  # lock files this process holds → nesting depth


def wait_seconds() -> float:
    """How long a second writer waits: ``$KB_WRITER_WAIT`` seconds, else :data:`WAIT_SECONDS`."""
    value = os.environ.get("KB_WRITER_WAIT")
    try:
        return max(0.0, float(value)) if value else WAIT_SECONDS
    except ValueError:
        raise KbError(f"KB_WRITER_WAIT={value!r}: not a number of seconds") from None


@contextmanager
def writer_lock(kb_dir: str | os.PathLike, *, wait: float | None = None) -> Iterator[None]:
    """Hold the writer lock of the kb folder ``kb_dir`` (created if missing) for the block; see the module doc."""
    folder = Path(kb_dir).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(folder / LOCK_NAME, f"another kb is writing {folder}", wait=wait):
        yield


@contextmanager
def exclusive_lock(lock_file: Path, busy: str, *, wait: float | None = None) -> Iterator[None]:
    """Hold the lock ``lock_file`` (an advisory ``flock``; the file, created if missing, holds the holder's pid) for
    the block, re-entrant within the process; a second process waits up to :func:`wait_seconds`, then fails with
    "<busy> (pid N); try again when it has finished". The writer lock, and the lock of a site's output folder."""
    if lock_file in _held:
        _held[lock_file] += 1
        try:
            yield
        finally:
            _held[lock_file] -= 1
        return
    with _open_lock_file(lock_file) as handle:  # closing it releases the lock
        _acquire(handle, busy, wait_seconds() if wait is None else wait)
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        _held[lock_file] = 1
        try:
            yield
        finally:
            del _held[lock_file]
            handle.truncate(0)


def _open_lock_file(path: Path) -> IO[str]:
    """The lock file ``path``, made if missing; a one-line KbError when it cannot be: its folder cannot be written
    (read-only), or something that is not a regular file (a folder, a FIFO) took its name."""
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK, 0o644)  # a FIFO would block without
    except OSError as exc:
        kind = "a folder, not a file" if isinstance(exc, IsADirectoryError) else exc.strerror or str(exc)
        raise KbError(f"{path}: cannot open this lock file ({kind}); a command that writes needs a writable folder "
                      "with a plain file there (remove whatever else has its name)") from None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise KbError(f"{path}: not a plain file, so not kb's lock file; remove it and run the command again")
    return os.fdopen(descriptor, "r+", encoding="ascii")


def _acquire(handle: IO[str], busy: str, wait: float) -> None:
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                handle.seek(0)
                pid = handle.read().strip() or "unknown"
                raise KbError(f"{busy} (pid {pid}); try again when it has finished") from None
            time.sleep(0.05)
