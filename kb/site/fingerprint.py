"""The identities a build compares with the previous build's: the inputs fingerprint (everything a build reads:
equal, nothing is done), each page's hash (equal, the page is kept) and each page group's (equal, its pages are not
even made). kb's own code enters each of them whole, as :func:`kb.codedigest.code_digest`, with the templates'
digest (:func:`kb.site.render.templates_hash`) — derived from the files, listed by nobody — so any change to any
module that can shape a page makes the next build render it again.
"""

from __future__ import annotations

import hashlib
import marshal
from collections.abc import Callable
from pathlib import Path
from types import CodeType
from typing import TYPE_CHECKING, Any

from kb.codedigest import code_digest
from kb.site.manifest import MANIFEST_FORMAT
from kb.site.page import Page, PageGroup
from kb.site.render import templates_hash
from kb.store import Store

if TYPE_CHECKING:
    from kb.site.pages import Producer


def render_key(template_hash: str, base_url: str | None) -> str:
    """What renders every page: kb's code, the templates (their hash) and the base URL."""
    return f"{code_digest()}|{template_hash}|{base_url or ''}"


def inputs_fingerprint(store: Store, templates: Path, producers: list[Producer], base_url: str | None = None) -> str:
    """A hash of everything a build reads: the store's content (:meth:`kb.store.Store.content_token`: made anew by
    every write of nodes, references or documents), the templates, the page producers, all of kb's code
    (:func:`kb.codedigest.code_digest`: no list of modules to keep), the search analysis and dictionary and the base
    URL. Equal to the previous build's: nothing to do."""
    from kb.search.index import installed_identity  # the static search's code and Sudachi (its user dictionary
    # is made from the store's content, hashed below)

    identity = sorted(installed_identity().items())
    digest = hashlib.sha256(
        f"{MANIFEST_FORMAT}|{code_digest()}|{templates_hash(templates)}|{base_url or ''}|{identity}|".encode())
    for producer in producers:
        digest.update(producer_identity(producer).encode())
    digest.update(store.content_token().encode())  # changed by every write of nodes, documents or references
    return digest.hexdigest()[:32]


def producer_identity(producer: Callable[..., object], depth: int = 0) -> str:
    """What a page producer is, as text that is the same in every process: its name, its code, and the values it
    closes over and its defaults (two lambdas share a name; two producers made by one factory differ only in what
    they close over). kb's own code is in :func:`kb.codedigest.code_digest`; a producer passed by a caller may be
    defined anywhere, so its code is part of its identity."""
    code = getattr(producer, "__code__", None)
    cells: list[object] = []
    for cell in getattr(producer, "__closure__", None) or ():
        try:
            cells.append(cell.cell_contents)
        except ValueError:  # a cell not yet filled
            cells.append(None)
    defaults = (getattr(producer, "__defaults__", None), getattr(producer, "__kwdefaults__", None))
    name = f"{producer.__module__}.{getattr(producer, '__qualname__', type(producer).__name__)}|"
    if depth > 3:  # a function closing over itself
        return name
    return f"{name}{code_identity(code) if code else ''}|{_stable(cells, depth)}|{_stable(defaults, depth)}|"


def code_identity(code: CodeType) -> str:
    """What a code object does, as text that is the same in every process: its bytecode, names and constants, nested
    code objects and sets of constants included (``repr`` of a code object holds its memory address, and a frozenset's
    order follows the per-process string hash)."""
    return f"{code.co_code.hex()}|{code.co_names}|{code.co_varnames}|{_stable(code.co_consts)}"


def _stable(value: object, depth: int = 0) -> str:
    """``repr`` of plain data and code, the same in every process (sets sorted, code objects by what they do,
    functions as :func:`producer_identity`)."""
    if isinstance(value, CodeType):
        return code_identity(value)
    if isinstance(value, (frozenset, set)):
        return "{" + ",".join(sorted(_stable(v, depth) for v in value)) + "}"
    if isinstance(value, (tuple, list)):
        return "(" + ",".join(_stable(v, depth) for v in value) + ")"
    if isinstance(value, dict):
        return "{" + ",".join(f"{_stable(k, depth)}:{_stable(v, depth)}" for k, v in value.items()) + "}"
    if callable(value) and hasattr(value, "__code__"):
        return producer_identity(value, depth + 1)
    return repr(value)


def page_hash(render_key: str, page: Page, answers: str | None = None) -> str:
    """Hash of everything the page is made from: ``render_key`` (kb's code, the templates, the base URL), the page's
    record (marshal format 2: fast, and without back-references, so the bytes depend on the values only) and, for a
    page with a :class:`~kb.site.page.Deferred` part, what that part is made from — its source and ``answers`` (the
    digest of its lookups' answers: :func:`answers_digest`) — instead of the part: computed without making it."""
    deferred = (page.deferred.source, answers) if page.deferred else None
    payload = marshal.dumps((render_key, page.path, page.template, page.title, page.description, page.context,
                             deferred), 2)
    return hashlib.sha256(payload).hexdigest()[:24]


def answers_digest(answers: Any) -> str:
    """The digest of a :class:`~kb.site.page.Deferred` part's lookups' answers (plain data), kept in its page's record:
    a build whose lookup tables are the previous build's hashes the page with it, asking nothing."""
    return hashlib.sha256(marshal.dumps(answers, 2)).hexdigest()[:24]


def group_hash(render_key: str, group: PageGroup) -> str:
    """Hash of what a page group is made from: ``render_key`` (kb's code, the templates, the base URL) and its inputs."""
    payload = marshal.dumps((render_key, group.name, group.inputs), 2)
    return hashlib.sha256(payload).hexdigest()[:24]


