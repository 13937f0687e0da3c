"""Issue 27: a notebook runs as Jupyter runs it, in its own folder: the files beside it open by
their relative names, ``%pwd`` shows no path of the machine, what it writes anew is published,
and its folder keeps exactly the files it had."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import build_site

CELLS = [
    "import os\nprint(open('data/table.csv').read().strip())\nprint(open('notes.txt').read().strip())",
    "%pwd",
    "with open('written.txt', 'w') as f:\n    f.write('WRITTEN-BY-THE-NOTEBOOK')\nprint(sorted(os.listdir('.')))",
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    project = tmp_path_factory.mktemp("notebook-folder")
    folder = project / "demos" / "part"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "table.csv").write_text("TABLE-BESIDE-IT\n")
    (folder / "notes.txt").write_text("NOTES-BESIDE-IT\n")
    cells = [{"cell_type": "markdown", "id": "m", "metadata": {}, "source": "# Reads its folder"}]
    cells += [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "source": text, "outputs": [],
               "execution_count": None} for i, text in enumerate(CELLS)]
    (folder / "reader.ipynb").write_text(json.dumps({
        "nbformat": 4, "nbformat_minor": 5, "cells": cells,
        "metadata": {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}}}))
    return build_site(project), folder


def test_the_files_beside_a_notebook_open_by_their_names(built: tuple[Path, Path]) -> None:
    site, _ = built
    page = (site / "part" / "reader" / "index.html").read_text(encoding="utf-8")
    assert "TABLE-BESIDE-IT" in page and "NOTES-BESIDE-IT" in page
    assert "[&#39;data&#39;, &#39;notes.txt&#39;, &#39;reader.ipynb&#39;, &#39;written.txt&#39;]" in page
    assert "&#39;.&#39;</pre>" in page  # %pwd: the notebook's folder, no path of this machine


def test_what_it_writes_is_published_and_its_folder_stays_as_it_was(built: tuple[Path, Path]) -> None:
    site, folder = built
    assert (site / "part" / "reader" / "written.txt").read_text() == "WRITTEN-BY-THE-NOTEBOOK"
    assert sorted(p.name for p in folder.iterdir()) == ["data", "notes.txt", "reader.ipynb"]
    assert not (site / "part" / "reader" / "notes.txt").exists()  # its neighbours are not published
    assert not [p for p in site.rglob("*") if p.is_symlink()]
