"""Shared fixtures: run the CLI as a user would, and build the repository's real demos once."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def run_cli(*args: str, cwd: Path, timeout: float = 120, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m site_builder ARGS`` in ``cwd`` and capture what a user would see."""
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "site_builder", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def write_demo(project: Path, name: str, source: str) -> Path:
    """Write ``demos/NAME.py`` under ``project`` with dedented ``source``."""
    demos = project / "demos"
    demos.mkdir(parents=True, exist_ok=True)
    path = demos / f"{name}.py"
    path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project folder (no pyproject.toml: all defaults)."""
    return tmp_path


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's demos built once per test session; returns the site folder."""
    project = tmp_path_factory.mktemp("real-site")
    shutil.copytree(REPO / "demos", project / "demos")
    shutil.copy(REPO / "pyproject.toml", project / "pyproject.toml")  # the site's own wording
    result = run_cli("build", cwd=project, timeout=170)
    assert result.returncode == 0, result.stderr
    return project / "build"
