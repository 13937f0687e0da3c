"""Search index and downloads in a real build: Pagefind runs on the staged site before the swap."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli, write_demo

DEMO = '''
"""tiny: one block.

Purpose
-------
Check that the site builds.
"""
# %% B-only
print("quaternion")
'''


def test_real_site_has_search_index_and_notebooks(built_site: Path) -> None:
    assert (built_site / "pagefind" / "pagefind.js").is_file()
    entry = json.loads((built_site / "pagefind" / "pagefind-entry.json").read_text())
    assert entry["languages"]["en"]["page_count"] == len(list((REPO / "demos").glob("*.py")))
    notebook = json.loads((built_site / "attention" / "attention.ipynb").read_text())
    code_cells = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert len(code_cells) == 9  # setup and the eight B- blocks


def test_build_without_pagefind_warns_and_still_publishes(tmp_path: Path) -> None:
    write_demo(tmp_path, "tiny", DEMO)
    fake = tmp_path / "fake"  # a pagefind_bin without its binary, as on an unsupported platform
    (fake / "pagefind_bin").mkdir(parents=True)
    (fake / "pagefind_bin" / "__init__.py").write_text(
        "def get_executable():\n    raise FileNotFoundError('no binary')\n")
    result = run_cli("build", cwd=tmp_path, env={"PYTHONPATH": f"{fake}:{REPO}"})
    assert result.returncode == 0, result.stderr
    assert "search index not built" in result.stderr and "Pagefind" in result.stderr
    site = tmp_path / "build"
    assert (site / "tiny" / "index.html").is_file() and not (site / "pagefind").exists()
    assert 'id="search-input"' in (site / "tiny" / "index.html").read_text()
    # Pagefind runs while the site is described: nothing changed, its warning is said again
    again = run_cli("build", cwd=tmp_path, env={"PYTHONPATH": f"{fake}:{REPO}"})
    assert again.returncode == 0 and "site unchanged" in again.stderr, again.stderr
    warned = [line for line in result.stderr.splitlines() if line.startswith("search index not built")]
    assert warned and again.stderr.splitlines()[:-1] == warned  # then the "site unchanged" line


def test_the_published_index_files_are_grouped_by_part_as_each_part_claims_them():
    from site_builder.site.publish.search_shards import files_by_shard, in_shard

    rels = ["pagefind/pagefind.js", "pagefind/shard-1/index/a.pf_index", "pagefind/shard-10/fragment/b",
            "pagefind/shard-1", "pagefind/shard-2/pagefind-entry.json", "other/page.html", "pagefind/index/c",
            "pagefind/shard-1/fragment/d"]
    grouped = files_by_shard(rels)
    for folder in ("pagefind", "pagefind/shard-1", "pagefind/shard-2", "pagefind/shard-10", "pagefind/shard-3"):
        assert grouped.get(folder, []) == [rel for rel in rels if in_shard(rel, folder)]
    assert set(grouped) == {"pagefind", "pagefind/shard-1", "pagefind/shard-2", "pagefind/shard-10"}


def test_a_large_sites_index_is_signed_by_its_stat_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pagefind runs while the site is described; when describing took the racy window already (a
    large site), the builder waits until the index's files are no longer racily clean, so the state
    signs them by their stat alone and the next no-change build only stats them."""
    from site_builder.fs import racy
    from site_builder.site.publish import search_shards

    index_file = tmp_path / "pagefind" / "pagefind.js"

    def index_late(site_dir: Path, plan: search_shards.SearchPlan, stop: object = None) -> None:
        time.sleep(0.15)  # ends after the site was described for a tenth of a second
        index_file.parent.mkdir()
        index_file.write_text("index")

    monkeypatch.setattr(search_shards, "index_shards", index_late)
    indexing = search_shards.IndexInBackground(tmp_path, search_shards.SearchPlan({"pagefind": ["a.html"]},
                                                                                  {"pagefind"}), tmp_path, tmp_path)
    time.sleep(0.12)  # describing a large site
    indexing.wait([], signed=True)
    changed = index_file.stat()
    assert not racy(max(changed.st_mtime_ns, changed.st_ctime_ns), time.time_ns())
