"""`new NAME`: a house-style entry that builds cleanly, and clear refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from site_builder.source.blocks import parse
from site_builder.cli import main
from site_builder.commands.new import demo_source
from tests.conftest import run_cli, write_demo


def test_new_entry_builds_without_warnings(project: Path) -> None:
    created = run_cli("new", "k-means", cwd=project)
    assert created.returncode == 0, created.stderr
    assert "demos/k-means.py" in created.stdout
    source = (project / "demos" / "k-means.py").read_text(encoding="utf-8")
    assert source.startswith('"""\nk-means.py — ')

    built = run_cli("build", cwd=project)
    assert built.returncode == 0, built.stderr
    assert "warning" not in built.stderr.lower()
    page = (project / "build" / "k-means" / "index.html").read_text(encoding="utf-8")
    assert "[B-fit] fitted slope = " in page
    assert (project / "build" / "k-means" / "k-means_data.csv").is_file()
    index = (project / "build" / "index.html").read_text(encoding="utf-8")
    assert "one sentence saying what this entry shows" in index


def test_template_follows_the_house_style() -> None:
    script = parse(demo_source("demo"), "demos/demo.py", "demo")
    assert script.warnings == ()
    assert script.summary.startswith("one sentence")
    assert script.purpose
    assert [c.name for c in script.code_cells] == ["setup", "B-data", "B-fit"]
    assert all(c.description for c in script.code_cells[1:])
    assert "default_rng(0)" in script.cells[0].text
    for cell in script.code_cells[1:]:
        assert f'print(f"[{cell.name}] ' in cell.text  # one printed line per check
    assert "assert " in script.code_cells[-1].text
    for section in ("Purpose\n-------", "Blocks\n------", "Outputs\n-------"):
        assert section in script.docstring


def test_new_refuses_an_existing_entry(project: Path) -> None:
    write_demo(project, "mine", "print('keep me')\n")
    result = run_cli("new", "mine", cwd=project)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "error: cannot create entry: demos/mine.py already exists (edit it, or pick another name)"
    )
    assert (project / "demos" / "mine.py").read_text(encoding="utf-8") == "print('keep me')\n"


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("Attention", "not a clean URL segment"),
        ("my demo", "not a clean URL segment"),
        ("../escape", "not a clean URL segment"),
        ("attention.py", "without '.py'"),
        ("static", "reserved for the site's own pages"),
    ],
)
def test_new_refuses_a_bad_name(
    project: Path, name: str, why: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(project)
    assert main(["new", name]) == 2
    stderr = capsys.readouterr().err
    assert len(stderr.strip().splitlines()) == 1
    assert why in stderr
    assert not (project / "demos").exists() or not any((project / "demos").iterdir())


@pytest.mark.parametrize("suffix", [".ipynb", ".md"])
def test_new_notebook_builds_without_warnings(project: Path, suffix: str) -> None:
    created = run_cli("new", f"basics/sampling{suffix}", cwd=project)
    assert created.returncode == 0, created.stderr
    path = project / "demos" / "basics" / f"sampling{suffix}"
    assert path.is_file()
    taken = run_cli("new", "basics/sampling", cwd=project)  # the .py would be the same page
    assert taken.returncode == 2 and "already is that entry" in taken.stderr
    built = run_cli("build", cwd=project, timeout=120)
    assert built.returncode == 0, built.stderr
    assert "warning" not in built.stderr.lower()
    page = (project / "build" / "basics" / "sampling" / "index.html").read_text(encoding="utf-8")
    assert "mean of the sample = " in page
