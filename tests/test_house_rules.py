"""The house's rules as tests: the import-linter contracts of pyproject.toml ([tool.importlinter]: the stage layers,
independent siblings, pure parsers) hold for kb/ and ingest/, and they do catch an import that points up."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REPO

LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` run on the packages and the pyproject.toml in ``root``."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=root, env=env, capture_output=True, text=True,
                          timeout=120)


def test_the_import_contracts_hold():
    result = lint_imports(REPO)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-1000:]
    assert " 0 broken." in result.stdout


def test_an_import_pointing_up_breaks_the_stages_contract(tmp_path):
    """A copy of the packages where the store imports the site: the layers contract must name that import."""
    for name in ("kb", "ingest"):
        shutil.copytree(REPO / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    lock = tmp_path / "kb" / "store" / "lock.py"
    lock.write_text(lock.read_text(encoding="utf-8") + "\nimport kb.site  # pointing up\n", encoding="utf-8")
    result = lint_imports(tmp_path)
    assert result.returncode == 1
    assert "kb.store is not allowed to import kb.site" in result.stdout
    assert "kb.store.lock -> kb.site" in result.stdout
