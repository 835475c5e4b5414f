"""The store is the boundary: no module outside ``kb/store/`` speaks SQL or reaches into the store's connection."""

from __future__ import annotations

import re

from conftest import REPO

SQL = re.compile(r"^\s*import sqlite3|^\s*from sqlite3|\.execute(many|script)?\(|\._db\b", re.M)


def test_only_the_store_speaks_sql():
    offenders = []
    for folder in ("kb", "ingest"):
        for path in sorted((REPO / folder).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel.startswith("kb/store/"):
                continue
            offenders += [f"{rel}:{path.read_text(encoding='utf-8')[:m.start()].count(chr(10)) + 1}"
                          for m in SQL.finditer(path.read_text(encoding="utf-8"))]
    assert offenders == []


def test_the_store_module_is_where_sql_lives():
    assert SQL.search((REPO / "kb" / "store" / "__init__.py").read_text(encoding="utf-8"))
