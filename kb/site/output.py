"""Writing a build into its output folder, all or nothing. Entry points: :func:`output_lock` (held by every build
and ``kb update --out`` for its whole run), :func:`recover` (first, before reading what the previous build left in
``out``), then :class:`Output`.

A build says, file by file, whether it keeps the previous build's copy (:meth:`Output.keep`) or writes a new one
(:meth:`Output.write`: into a staging folder beside ``out``, side by side, named by number — no subfolders, whose
removal costs milliseconds each on some file systems — as the build makes it, so no page waits in memory), then
:meth:`Output.commit` s (or :meth:`Output.abort` s), choosing one of two ways by how many files changed:

- **swap** (the first build, or one that changes many files): the whole new site is made in the staging folder —
  new files moved into their places, kept ones hard-linked (else copied) from ``out`` — and exchanged with ``out``
  in one step (Linux ``renameat2(RENAME_EXCHANGE)``; elsewhere two renames), so a reader sees the old site or the
  new one, whole;
- **in place** (few files changed): a journal pairing the new files with their places and listing the files to
  delete is written in the staging folder, then each new file is renamed over its old copy (atomic per file: a
  reader sees the old page or the new one, never a part) and the deleted ones are removed, the build's own records
  (``.kb-build/``) last, then the changes of its keyed records (:class:`KeyedRecords`: the file records, too many
  to write whole each build) in one transaction. Linking every kept file into a new folder and deleting the old
  folder cost more than the rest of a small rebuild.

A build killed before its commit leaves a staging folder the next build deletes; killed while applying a journal,
the next build completes it first (roll forward), so the site is never left half old, half new.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kb.errors import KbError
from kb.store.keyed import apply_changes
from kb.store.lock import exclusive_lock

JOURNAL = ".kb-journal-3.marshal"  # in the staging folder of an in-place build being applied: {written: [[staged
# name, place]…], deleted: [place…], keyed: [place, tag, changes, fresh] or None} (an older build's journal, another
# format and name, is dropped with its folder)
RECORDS = ".kb-build/"  # the build's own records: applied last
IN_PLACE_MAX_SHARE = 10  # in place when at most 1/10 of the files change


@contextmanager
def output_lock(out: str | os.PathLike) -> Iterator[None]:
    """One build at a time per output folder, whichever knowledge base it comes from (two writer locks do not exclude
    each other): the lock file ``.<name>.lock`` beside ``out`` (inside, it would be swapped away with the old site),
    held with :func:`kb.store.lock.exclusive_lock` — a second build waits up to ``$KB_WRITER_WAIT`` seconds, then
    fails with "another kb is building OUT (pid N)". Re-entrant: ``kb update`` holds it around its build."""
    out = Path(out).resolve()
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise KbError(f"{out}: cannot make the folder it goes in ({error.strerror}); choose another --out") from None
    with exclusive_lock(out.parent / f".{out.name}.lock", f"another kb is building {out}"):
        yield


@dataclass(frozen=True)
class KeyedRecords:
    """What a build changes in a keyed file among its records (:mod:`kb.store.keyed`), applied with its files."""

    rel: str  # the keyed file's place in the site (under RECORDS)
    tag: str
    changes: dict[str, bytes | None]  # key → value, None: removed
    fresh: bool = False  # the changes are all the file holds (there was none to read)


def in_place_suits(changed: int, total: int) -> bool:
    """Whether a build changing ``changed`` of ``total`` files (added, rewritten or deleted) is applied in place."""
    return changed <= total // IN_PLACE_MAX_SHARE


class Output:
    """The files of one build on their way into ``out`` (see the module doc). Every new file is written into the
    staging folder, named by number, as the build makes it; how the build is put in place is decided at
    :meth:`commit`, when it is known how many files changed — so a build streams its pages (none is held until
    the count is known)."""

    def __init__(self, out: Path, *, scan: bool = True):
        """``scan``: find every file in ``out`` first (:func:`regular_files`: a full build keeps the files kb did not
        make, and refuses a symbolic link anywhere in the site); else (an edit build, which touches a few files of
        a large site) each file kept or written is looked at when it is, with the folders it is in
        (:meth:`has`)."""
        self.out = out
        self._existing = regular_files(out) if scan and out.is_dir() else None  # by relative path (None: not scanned)
        self._looked: dict[str, bool] = {}  # unscanned: a folder or file looked at → whether it is there
        self.staging = out.parent / f".{out.name}.staging-{os.getpid()}"
        self._written: list[str] = []
        self._kept: list[str] = []
        self._decided = False  # the journal is written: the build must complete (see recover)
        shutil.rmtree(self.staging, ignore_errors=True)
        self.staging.mkdir(parents=True)

    @property
    def written(self) -> int:
        return len(self._written)

    @property
    def paths_written(self) -> frozenset[str]:
        """The files written so far, by relative path."""
        return frozenset(self._written)

    @property
    def existing(self) -> set[str]:
        """Every regular file in ``out`` (:func:`regular_files`), by relative path: scanned when first asked."""
        if self._existing is None:
            self._existing = regular_files(self.out) if self.out.is_dir() else set()
        return self._existing

    def has(self, rel: str) -> bool:
        """Whether ``rel`` is a regular file in ``out``. A symbolic link on its way is refused as
        :func:`regular_files` refuses one."""
        if self._existing is not None:
            return rel in self._existing
        return self._there(rel, folder=False)

    def _there(self, rel: str, *, folder: bool) -> bool:
        """Whether ``rel`` is a folder (``folder``) or a regular file in ``out``, its folders looked at first (once
        each); KbError for a symbolic link."""
        if (known := self._looked.get(rel)) is not None:
            return known
        parent = os.path.dirname(rel)
        there = False
        if not parent or self._there(parent, folder=True):
            try:
                mode = os.lstat(f"{self.out}/{rel}").st_mode
            except (FileNotFoundError, NotADirectoryError):
                mode = 0
            if stat.S_ISLNK(mode):
                raise KbError(f"{self.out}/{rel}: a symbolic link inside the site; kb writes nothing through one: "
                              f"remove it and build again")
            there = stat.S_ISDIR(mode) if folder else stat.S_ISREG(mode)
        self._looked[rel] = there
        return there

    def keep(self, rel: str) -> bool:
        """Keep the previous build's ``rel``; False when it is not there (or not a regular file): write it anew."""
        if not self.has(rel):
            return False
        self._kept.append(rel)
        return True

    def write(self, rel: str, data: str | bytes) -> None:
        if self._existing is None and os.path.dirname(rel):  # unscanned: never written through a symbolic link
            self._there(os.path.dirname(rel), folder=True)
        with open(f"{self.staging}/{len(self._written)}", "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
        self._written.append(rel)

    def commit(self, deleted: list[str], *, in_place: bool, keyed: KeyedRecords | None = None) -> None:
        """Put the build in place: apply the written files, delete ``deleted`` and apply ``keyed`` (``in_place``,
        when ``out`` is there), else make the whole new folder (kept files hard-linked, else copied; new ones moved
        in; the keyed file copied, then changed) and swap it with ``out``."""
        if not (in_place and self.out.is_dir()):
            tree = self.staging / "site"
            made: set[str] = set()
            for rel in self._kept:
                new = f"{tree}/{rel}"
                _folder_of(new, made)
                try:
                    os.link(f"{self.out}/{rel}", new)
                except FileNotFoundError:
                    raise KbError(f"{self.out / rel}: removed during the build; build again") from None
                except OSError:
                    shutil.copyfile(f"{self.out}/{rel}", new)
            for n, rel in enumerate(self._written):
                new = f"{tree}/{rel}"
                _folder_of(new, made)
                os.replace(f"{self.staging}/{n}", new)
            tree.mkdir(exist_ok=True)  # an empty site
            if keyed is not None:
                now = tree / keyed.rel
                if not keyed.fresh:  # the changes are from the file the build read: copied, then changed
                    _folder_of(str(now), made)
                    try:
                        shutil.copyfile(self.out / keyed.rel, now)
                    except FileNotFoundError:
                        raise KbError(f"{self.out / keyed.rel}: removed during the build; build again") from None
                apply_changes(now, keyed.tag, keyed.changes, fresh=keyed.fresh)
            _swap(tree, self.out)
            shutil.rmtree(self.staging, ignore_errors=True)
            return
        if self._existing is None:  # unscanned: nothing deleted through a symbolic link either
            for rel in deleted:
                self.has(rel)
        staged = [[str(n), rel] for n, rel in enumerate(self._written)]
        journal = {"written": sorted(staged, key=lambda pair: pair[1].startswith(RECORDS)), "deleted": deleted,
                   "keyed": None if keyed is None else [keyed.rel, keyed.tag, keyed.changes, keyed.fresh]}
        tmp = self.staging / f"{JOURNAL}.tmp"
        tmp.write_bytes(marshal.dumps(journal))
        os.replace(tmp, self.staging / JOURNAL)  # from here on the build is decided: a later build completes it
        self._decided = True
        _apply(self.staging, self.out, journal)

    def abort(self) -> None:
        """Drop the staging folder — unless the build was decided (its journal written): the next build completes it."""
        if not self._decided:
            shutil.rmtree(self.staging, ignore_errors=True)


def _folder_of(path: str, made: set[str]) -> None:
    folder = os.path.dirname(path)
    if folder not in made:
        os.makedirs(folder, exist_ok=True)
        made.add(folder)


def regular_files(out: Path) -> set[str]:
    """Every regular file under ``out``, by relative path: one scan of its folders (cheaper than a stat per kept file).
    A symbolic link inside the site is refused (KbError): a build writes, keeps and deletes nothing through one."""
    found: set[str] = set()
    folders = [("", str(out))]
    while folders:
        prefix, folder = folders.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_symlink():
                    raise KbError(f"{entry.path}: a symbolic link inside the site; kb writes nothing through one: "
                                  f"remove it and build again")
                if entry.is_dir(follow_symlinks=False):
                    folders.append((f"{prefix}{entry.name}/", entry.path))
                elif entry.is_file(follow_symlinks=False):
                    found.add(prefix + entry.name)
    return found


def _apply(staging: Path, out: Path, journal: dict) -> None:
    made: set[str] = set()
    for name, rel in journal["written"]:
        source, target = f"{staging}/{name}", f"{out}/{rel}"
        if not os.path.exists(source):  # moved already (a build completing a killed one)
            continue
        folder = os.path.dirname(target)
        if folder not in made:
            os.makedirs(folder, exist_ok=True)
            made.add(folder)
        os.replace(source, target)
    for rel in journal["deleted"]:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{out}/{rel}")
    if journal["keyed"] is not None:  # (applied again by a build completing a killed one: the same file)
        rel, tag, changes, fresh = journal["keyed"]
        apply_changes(out / rel, tag, changes, fresh=fresh)
    shutil.rmtree(staging, ignore_errors=True)


def recover(out: Path) -> None:
    """Complete the journal of an in-place build of ``out`` that stopped while applying it (killed, or failed in this
    process); remove the staging and old folders of other killed builds (their process is gone). A site left aside
    by a build killed between the two renames of :func:`_swap` is put back first."""
    for folder in sorted(out.parent.glob(f".{out.name}.*-*")):
        kind, _, pid = folder.name[len(out.name) + 2:].rpartition("-")
        if kind not in ("staging", "old") or not pid.isdigit():
            continue
        journal = folder / JOURNAL
        if kind == "staging" and journal.is_file() and out.is_dir() and (int(pid) == os.getpid() or not _alive(int(pid))):
            _apply(folder, out, marshal.loads(journal.read_bytes()))
        elif _alive(int(pid)):
            continue
        elif kind == "old" and not out.exists():
            os.replace(folder, out)
        else:
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def _swap(staging: Path, out: Path) -> None:
    """Put the new site in place in one step where the system can (Linux: the two folders exchanged atomically,
    so a reader always finds a whole site), else in two renames."""
    if out.exists() and _exchange(staging, out):
        shutil.rmtree(staging, ignore_errors=True)  # now the previous site
        return
    old = out.parent / f".{out.name}.old-{os.getpid()}"
    if out.exists():
        os.replace(out, old)
    try:
        os.replace(staging, out)
    except OSError:
        if old.exists():
            os.replace(old, out)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """Exchange two paths atomically (Linux ``renameat2(RENAME_EXCHANGE)``); False where the system cannot."""
    import ctypes
    import errno

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):  # no such call, or not on this file system
        return False
    raise OSError(code, os.strerror(code), str(b))
