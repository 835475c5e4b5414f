"""The documentation names real files: every repository path written in ``docs/*.md`` and the README exists (a file
moved or renamed without its documentation fails here)."""

from __future__ import annotations

import re

import pytest
from conftest import REPO

# a path of the repository as the docs write it: `kb/site/pages.py`, `tests/golden/site/`, `site_templates/`
_PATH = re.compile(r"`((?:kb|ingest|tests|site_templates|bench|docs|data)/[\w./-]*?)(?:`|:| |\()")
DOCS = sorted((REPO / "docs").rglob("*.md")) + [REPO / "README.md"]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_path_the_docs_name_exists(doc):
    named = set(_PATH.findall(doc.read_text(encoding="utf-8")))
    missing = sorted(p for p in named if "<" not in p and "*" not in p and not (REPO / p.rstrip("/")).exists())
    assert missing == [], f"{doc.name} names files that do not exist: {missing}"


def test_the_architecture_names_every_package_of_kb():
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    packages = {p.name for p in (REPO / "kb").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    modules = {p.stem for p in (REPO / "kb").glob("*.py") if p.stem != "__init__"}
    assert [name for name in sorted(packages | modules) if f"kb.{name}" not in text and f"kb/{name}" not in text] == []
