"""Discovering entries: names, reserved names, helpers skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from site_builder.names import check_entry_name
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


def test_bad_name_message_names_the_file(tmp_path: Path) -> None:
    demos = tmp_path / "demos"
    demos.mkdir()
    (demos / "My Demo.py").write_text("print(1)\n")
    with pytest.raises(EntryError, match=r"demos/My Demo\.py: 'My Demo' is not a clean URL segment"):
        discover(demos, tmp_path)


def test_missing_demos_folder(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="demos folder not found: nope"):
        discover(tmp_path / "nope", tmp_path)
