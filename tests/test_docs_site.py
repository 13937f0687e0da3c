"""The guide in docs/ is a site of Markdown pages: it builds like any project, warnings as errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli

PAGE = "# A page\n\nProse with a [link](other.md) and code that is shown, not run:\n\n```python\nprint('never')\n```\n"


@pytest.fixture(scope="module")
def guide(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """docs/ built once with --strict; returns its site folder (tests only read it)."""
    docs = tmp_path_factory.mktemp("guide") / "docs"
    shutil.copytree(REPO / "docs", docs, ignore=shutil.ignore_patterns("_build", "_freeze", "_build.failed"))
    result = run_cli("build", "--strict", cwd=docs, timeout=300)
    assert result.returncode == 0, result.stderr
    return docs / "_build"


def test_every_markdown_file_of_docs_is_a_page(guide: Path) -> None:
    docs = REPO / "docs"
    pages = {p.relative_to(docs).with_suffix("").as_posix() for p in docs.rglob("*.md")
             if p.name != "README.md" and not p.relative_to(docs).parts[0].startswith("_")}
    assert pages and {"guide/writing-demos", "reference/configuration", "architecture", "security"} <= pages
    for name in pages:
        assert (guide / name / "index.html").is_file(), name


def test_a_page_runs_nothing_and_offers_no_download(guide: Path) -> None:
    folder = guide / "guide" / "writing-demos"
    assert sorted(p.name for p in folder.iterdir() if p.is_file()) == ["index.html"]
    html = (folder / "index.html").read_text(encoding="utf-8")
    assert "The script, block by block" not in html and 'class="how-to-run"' not in html
    assert 'class="ran-with"' not in html and "Not run" not in html


def test_links_between_pages_lead_to_their_pages(guide: Path) -> None:
    html = (guide / "guide" / "writing-demos" / "index.html").read_text(encoding="utf-8")
    assert 'href="../../reference/configuration/index.html"' in html


def test_the_guide_is_searchable_with_sections_by_folder(guide: Path) -> None:
    assert (guide / "pagefind" / "pagefind.js").is_file()
    index = (guide / "index.html").read_text(encoding="utf-8")
    assert index.index("guide/writing-demos/") < index.index("reference/configuration/") < index.index(
        "benchmarks/")


def test_pages_are_left_out_unless_the_setting_asks(project: Path) -> None:
    (project / "demos").mkdir(exist_ok=True)
    (project / "demos" / "page.md").write_text(PAGE, encoding="utf-8")
    (project / "demos" / "other.md").write_text("# Other\n\nBack to [the page](page.md).\n", encoding="utf-8")
    (project / "demos" / "script.py").write_text('"""A script."""\nprint("ran")\n', encoding="utf-8")
    assert run_cli("build", cwd=project).returncode == 0
    assert not (project / "build" / "page").exists()
    (project / "pyproject.toml").write_text("[tool.site_builder]\npages = true\n", encoding="utf-8")
    result = run_cli("build", "--strict", cwd=project)
    assert result.returncode == 0, result.stderr
    html = (project / "build" / "page" / "index.html").read_text(encoding="utf-8")
    assert "print" in html and "never" in html and 'href="../other/index.html"' in html
    assert not (project / "_freeze" / "page").exists()  # nothing ran: no run record
    assert sorted(p.name for p in (project / "build" / "page").iterdir()) == ["index.html"]


def test_strict_makes_a_warning_an_error(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.site_builder]\npages = true\n", encoding="utf-8")
    (project / "demos").mkdir(exist_ok=True)
    (project / "demos" / "page.md").write_text("# A page\n\nA [link](other.md#nowhere).\n", encoding="utf-8")
    (project / "demos" / "other.md").write_text("# Other\n", encoding="utf-8")
    built = run_cli("build", cwd=project)
    assert built.returncode == 0 and "no label 'nowhere' on other" in built.stderr
    strict = run_cli("build", "--strict", cwd=project)
    assert strict.returncode == 1
    assert "--strict makes warnings errors" in strict.stderr


def test_the_demos_folder_may_be_the_project_when_output_and_records_are_private(project: Path) -> None:
    (project / "guide.md").write_text(PAGE, encoding="utf-8")
    (project / "pyproject.toml").write_text(
        '[tool.site_builder]\ndemos = "."\noutput = "_site"\npages = true\n', encoding="utf-8")
    result = run_cli("build", cwd=project)
    assert result.returncode == 0, result.stderr
    assert (project / "_site" / "guide" / "index.html").is_file()
    (project / "pyproject.toml").write_text('[tool.site_builder]\ndemos = "."\npages = true\n', encoding="utf-8")
    refused = run_cli("build", cwd=project)
    assert refused.returncode == 2 and "the output folder (output / --out) is inside the demos folder" in refused.stderr
