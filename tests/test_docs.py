"""The documentation is true to the repository and to ``kb``: every page of ``docs/`` and the README, rendered with
markdown-it-py as a Markdown viewer would, has only relative links and images that resolve (files, and heading
anchors as GitHub names them); every repository path it names exists; every ``kb …`` command line it writes names a
real command and only options that command has; the command table lists exactly the commands of ``kb --help``; and
every page is reachable from the README or the documentation index."""

from __future__ import annotations

import re
import shlex
from functools import cache
from pathlib import Path
from urllib.parse import unquote, urlsplit

import click
import pytest
from click.testing import CliRunner
from conftest import REPO
from markdown_it import MarkdownIt
from markdown_it.token import Token

from kb.cli import main

# a path of the repository as the docs write it: `kb/site/pages.py`, `tests/golden/site/`, `site_templates/`
_PATH = re.compile(r"`((?:kb|ingest|tests|site_templates|bench|docs|data)/[\w./-]*?)(?:`|:| |\()")
DOCS = sorted((REPO / "docs").rglob("*.md")) + [REPO / "README.md"]
_ids = {"ids": lambda p: str(p.relative_to(REPO))}
_MD = MarkdownIt("commonmark").enable("table")


@cache
def _tokens(doc: Path) -> list[Token]:
    return _MD.parse(doc.read_text(encoding="utf-8"))


def _inline_text(token: Token) -> str:
    return "".join(child.content for child in token.children or [] if child.type in ("text", "code_inline"))


def github_anchor(heading: str) -> str:
    """The id GitHub gives a heading: lower case, punctuation but ``-`` and ``_`` dropped, spaces as ``-``."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@cache
def anchors(doc: Path) -> frozenset[str]:
    tokens = _tokens(doc)
    seen: dict[str, int] = {}
    out = set()
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            base = github_anchor(_inline_text(tokens[i + 1]))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return frozenset(out)


def links(doc: Path) -> list[str]:
    """Every link target and image source of the rendered page."""
    found = []
    for token in _tokens(doc):
        for child in token.children or []:
            if child.type == "link_open":
                found.append(str(child.attrs["href"]))
            elif child.type == "image":
                found.append(str(child.attrs["src"]))
    return found


def broken_links(doc: Path, root: Path = REPO) -> list[str]:
    """The relative links and images of ``doc`` that name no file under ``root``, or no heading of a page."""
    broken = []
    for link in links(doc):
        parts = urlsplit(link)
        if parts.scheme or link.startswith("//"):
            continue
        target = (doc.parent / unquote(parts.path)).resolve() if parts.path else doc
        if not target.exists() or root.resolve() not in (target, *target.parents):
            broken.append(f"{link} (no file)")
        elif parts.fragment and (target.suffix != ".md" or unquote(parts.fragment) not in anchors(target)):
            broken.append(f"{link} (no heading #{parts.fragment} in {target.name})")
    return broken


@pytest.mark.parametrize("doc", DOCS, **_ids)
def test_every_relative_link_and_anchor_resolves(doc):
    assert broken_links(doc) == [], f"{doc.relative_to(REPO)}: broken links"


def test_the_link_check_finds_what_is_broken(tmp_path):
    (tmp_path / "img.png").write_bytes(b"")
    (tmp_path / "other.md").write_text("# Other page\n\n## Terms of use\n", encoding="utf-8")
    doc = tmp_path / "page.md"
    doc.write_text("# Page\n\n[a](other.md#terms-of-use) [b](#page) ![c](img.png) [d](https://example.org/x) "
                   "[e](missing.md) [f](other.md#nope) [g](#nowhere) ![h](img.png#x) [i](../outside.md)\n",
                   encoding="utf-8")
    (tmp_path.parent / "outside.md").write_text("# Outside\n", encoding="utf-8")
    assert broken_links(doc, tmp_path) == ["missing.md (no file)", "other.md#nope (no heading #nope in other.md)",
                                           "#nowhere (no heading #nowhere in page.md)",
                                           "img.png#x (no heading #x in img.png)", "../outside.md (no file)"]
    assert len(links(REPO / "README.md")) >= 10


def test_the_anchor_rule_is_githubs():
    assert github_anchor("Terms of use") == "terms-of-use"
    assert github_anchor("kb versions, kb diff, kb history, kb update") == "kb-versions-kb-diff-kb-history-kb-update"
    assert github_anchor("準備（コマンド 2 つ）") == "準備コマンド-2-つ"


@pytest.mark.parametrize("doc", DOCS, **_ids)
def test_every_path_the_docs_name_exists(doc):
    named = set(_PATH.findall(doc.read_text(encoding="utf-8")))
    missing = sorted(p for p in named if "<" not in p and "*" not in p and not (REPO / p.rstrip("/")).exists())
    assert missing == [], f"{doc.name} names files that do not exist: {missing}"


def test_the_architecture_names_every_package_of_kb():
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    packages = {p.name for p in (REPO / "kb").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    modules = {p.stem for p in (REPO / "kb").glob("*.py") if p.stem != "__init__"}
    assert [name for name in sorted(packages | modules) if f"kb.{name}" not in text and f"kb/{name}" not in text] == []


def help_commands() -> list[str]:
    """The commands ``kb --help`` lists."""
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0, result.output
    listing = result.output.split("Commands:", 1)[1]
    return [line.split()[0] for line in listing.splitlines() if line.startswith("  ") and line.strip()]


def _options(command: click.Command) -> set[str]:
    return {opt for param in command.params for opt in (*param.opts, *param.secondary_opts) if opt.startswith("-")}


def command_table() -> list[str]:
    """The first column of the table under "Every command" in docs/commands.md: ``kb NAME`` → NAME."""
    tokens = _tokens(REPO / "docs" / "commands.md")
    start = next(i for i, t in enumerate(tokens) if t.type == "inline" and t.content == "Every command")
    end = next(i for i in range(start, len(tokens)) if tokens[i].type == "table_close")
    names, column = [], None
    for token in tokens[start:end]:
        if token.type == "tr_open":
            column = 0
        elif token.type in ("td_open", "th_open"):
            column = (column or 0) + 1
        elif token.type == "inline" and column == 1 and token.content.startswith("`kb "):
            names.append(token.content.strip("`").split()[1])
    return names


def test_the_command_table_lists_every_command_of_kb_help():
    table = command_table()
    assert len(table) == len(set(table))
    assert sorted(table) == sorted(help_commands())


# kb's own options (before the command) → whether each takes a value
_GLOBAL = {opt: not getattr(param, "is_flag", False) for param in main.params for opt in param.opts} | {"--help": False}


def command_lines(doc: Path) -> list[str]:
    """Every ``kb …`` command line the page writes: inline code and lines of code blocks (comments cut off, ``&&``
    and pipes split)."""
    pieces = []
    for token in _tokens(doc):
        if token.type in ("fence", "code_block"):
            pieces += [line.split("  #")[0] for line in token.content.splitlines()]
        for child in token.children or []:
            if child.type == "code_inline":
                pieces.append(child.content)
    lines = []
    for piece in pieces:
        for part in re.split(r"&&|\|\||\||;", piece):
            part = part.strip().removeprefix(".venv/bin/")
            if re.match(r"kb( |$)", part):
                lines.append(part)
    return lines


def check_command_line(line: str) -> str | None:
    """What is wrong with a documented command line (None: nothing)."""
    words = shlex.split(line.replace("[", " ").replace("]", " ").replace("…", " "))[1:]
    while words and words[0] in _GLOBAL:
        words = words[2:] if _GLOBAL[words[0]] else words[1:]
    if not words or words[0].isupper():  # `kb COMMAND …`, `kb [--kb-dir DIR] …`: the grammar, not a command
        return None
    if words[0].startswith("-"):
        return f"{line}: kb has no option {words[0]}"
    command = main.commands.get(words[0])
    if command is None:
        return f"{line}: no command {words[0]!r}"
    unknown = [w.split("=")[0] for w in words[1:] if re.match(r"-{1,2}[a-z]", w) and w.split("=")[0] not in
               _options(command) | {"--help"}]
    return f"{line}: {words[0]} has no option {', '.join(unknown)}" if unknown else None


@pytest.mark.parametrize("doc", DOCS, **_ids)
def test_every_documented_command_line_names_a_command_and_its_options(doc):
    lines = command_lines(doc)
    assert [problem for line in lines if (problem := check_command_line(line))] == []


def test_the_command_line_check_finds_mistakes():
    assert check_command_line("kb search 唱えた --json --limit 3") is None
    assert check_command_line("kb --kb-dir .kb build --quiet --out site") is None
    assert check_command_line("kb export [--version V] [--lang ja|en] [-o FILE]") is None
    assert check_command_line("kb --debug") is None
    assert check_command_line("kb remove data/") == "kb remove data/: no command 'remove'"
    assert check_command_line("kb --fast build") == "kb --fast build: kb has no option --fast"
    assert check_command_line("kb build --out site --fast") == "kb build --out site --fast: build has no option --fast"
    assert "kb build --out site" in command_lines(REPO / "README.md")


def test_every_page_is_reachable_from_the_readme_or_the_index():
    linked = set()
    for doc in (REPO / "README.md", REPO / "docs" / "README.md"):
        linked |= {(doc.parent / unquote(urlsplit(link).path)).resolve() for link in links(doc)
                   if not urlsplit(link).scheme and urlsplit(link).path}
    assert [str(p.relative_to(REPO)) for p in DOCS if p.resolve() not in linked and p.name != "README.md"] == []
