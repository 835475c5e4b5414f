"""A wheel carries the site's templates (site_templates/ sits outside the Python packages; pyproject.toml installs it
as data files under share/kb/site_templates, where :func:`kb.site.render.templates_folder` finds it)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TEMPLATES = REPO / "site_templates"


@pytest.mark.slow
def test_wheel_contains_every_template(tmp_path):
    for module in ("setuptools", "wheel"):
        pytest.importorskip(module, reason="building a wheel offline needs setuptools and wheel in the environment")
    source = tmp_path / "src"  # a copy, so the build leaves no build/ or *.egg-info in the shared checkout
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copyfile(REPO / name, source / name)
    for folder in ("kb", "ingest", "site_templates"):
        shutil.copytree(REPO / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                           "-w", str(tmp_path / "dist"), str(source)], capture_output=True, text=True, timeout=300)
    if done.returncode != 0 and "No module named" in done.stderr:
        pytest.skip(f"cannot build a wheel here: {done.stderr.strip().splitlines()[-1]}")
    assert done.returncode == 0, done.stdout + done.stderr
    wheel, = (tmp_path / "dist").glob("kb-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    data = next(n.split("/data/")[0] for n in names if ".data/data/" in n) + "/data/share/kb/site_templates/"
    expected = {data + p.relative_to(TEMPLATES).as_posix() for p in TEMPLATES.rglob("*") if p.is_file()}
    assert expected and expected <= names, sorted(expected - names)
    assert "kb/site/render.py" in names


def test_templates_are_found_in_the_checkout():
    from kb.site.render import TEMPLATES as found
    from kb.site.render import templates_folder

    assert found == templates_folder() == TEMPLATES
