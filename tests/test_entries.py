"""Discovering entries: names, reserved names, helpers skipped."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from site_builder.names import check_entry_name, url_segment
from site_builder.source.entries import discover
from site_builder.errors import EntryError, UsageError


def test_discovers_sorted_entries(tmp_path: Path) -> None:
    demos = tmp_path / "demos"
    demos.mkdir()
    for name in ["beta", "alpha", "_helpers"]:
        (demos / f"{name}.py").write_text("print(1)\n")
    entries = discover(demos, tmp_path)
    assert [e.name for e in entries] == ["alpha", "beta"]
    assert entries[0].rel_path == "demos/alpha.py"
    assert entries[0].source_bytes == b"print(1)\n"


@pytest.mark.parametrize("name", ["Attention", "has space", "dots.in.name", "-dash", "404", "static", "ü"])
def test_bad_names_are_refused(name: str) -> None:
    assert check_entry_name(name) is not None


@pytest.mark.parametrize("name", ["attention", "k-means", "layer_norm", "word2vec"])
def test_good_names(name: str) -> None:
    assert check_entry_name(name) is None


def test_any_file_name_becomes_an_entry_by_the_url_rule(tmp_path: Path) -> None:
    demos = tmp_path / "demos"
    demos.mkdir()
    for name in ["My Demo.py", "02.01-Understanding-Data-Types.py", "Über Plot.py"]:
        (demos / name).write_text("print(1)\n")
    entries = discover(demos, tmp_path)
    assert [e.name for e in entries] == ["02-01-understanding-data-types", "my-demo", "uber-plot"]
    assert entries[1].rel_path == "demos/My Demo.py"


@pytest.mark.parametrize(("stem", "segment"), [
    ("02.01-Understanding-Data-Types", "02-01-understanding-data-types"), ("  Spaces  and tabs\t", "spaces-and-tabs"),
    ("café_crème", "cafe_creme"), ("__private_like--", "private_like"), ("日本", ""),
])
def test_url_segment_rule(stem: str, segment: str) -> None:
    assert url_segment(stem) == segment


def test_names_without_a_letter_or_a_reserved_result_are_refused(tmp_path: Path) -> None:
    demos = tmp_path / "demos"
    demos.mkdir()
    (demos / "日本.py").write_text("print(1)\n")
    (demos / "Static.py").write_text("print(1)\n")
    with pytest.raises(EntryError) as caught:
        discover(demos, tmp_path)
    assert "demos/日本.py: '日本' has no letter or digit to name its page by" in str(caught.value)
    assert "demos/Static.py: 'static' is reserved" in str(caught.value)


def test_two_files_sharing_a_url_are_an_error_naming_both(tmp_path: Path) -> None:
    demos = tmp_path / "demos"
    demos.mkdir()
    (demos / "plot.py").write_text("print(1)\n")
    (demos / "Plot.ipynb").write_text("{}")
    (demos / "other.py").write_text("print(1)\n")
    problems: list[str] = []
    entries = discover(demos, tmp_path, problems=problems)
    assert [e.name for e in entries] == ["other"]
    assert problems == ["demos/Plot.ipynb and demos/plot.py would both be the page plot/ (file names "
                        "that differ only in case, punctuation or suffix): rename one"]


def test_markdown_is_an_entry_only_with_a_notebook_front_matter(tmp_path: Path) -> None:
    demos = tmp_path / "demos"
    (demos / "part").mkdir(parents=True)
    (demos / "notes.md").write_text("# Notes\n\n---\nkernelspec: no, not front matter\n")
    (demos / "book.md").write_text("---\njupytext:\n  formats: md:myst\nkernelspec:\n  name: python3\n---\n# B\n")
    (demos / "part" / "README.md").write_text("# Part\n")
    (demos / "part" / "nb.ipynb").write_text("{}")
    entries = discover(demos, tmp_path)
    assert [(e.name, e.format, e.demos_path) for e in entries] == [
        ("book", "md", "book.md"), ("part/nb", "ipynb", "part/nb.ipynb")]


def test_ignore_pattern_leaves_files_out(tmp_path: Path) -> None:
    demos = tmp_path / "demos"
    (demos / "ui").mkdir(parents=True)
    for rel in ["plot_a.py", "ui/embed_sgskip.py", "ui/plot_b.py"]:
        (demos / rel).write_text("print(1)\n")
    entries = discover(demos, tmp_path, ignore=re.compile(r"ui/.*sgskip"))
    assert [e.name for e in entries] == ["plot_a", "ui/plot_b"]


def test_missing_demos_folder(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="demos folder not found: nope"):
        discover(tmp_path / "nope", tmp_path)
