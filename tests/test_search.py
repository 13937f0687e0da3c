"""Search index and downloads in a real build: Pagefind runs on the staged site before the swap."""

from __future__ import annotations

import json
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


def test_the_search_index_is_signed_by_its_stat_alone(tmp_path: Path) -> None:
    """Pagefind runs while the site is described; its files are signed once they are no longer
    racily clean, so the next no-change build stats them, rather than reading them and saving the
    whole state again."""
    from site_builder.commands.build.options import folders_of
    from site_builder.config import load_config
    from site_builder.site.publish.search import pagefind_binary
    from site_builder.site.rebuild.state import load_state

    if pagefind_binary() is None:
        pytest.skip("the Pagefind binary (pagefind[bin]) is not installed")
    write_demo(tmp_path, "tiny", DEMO)
    result = run_cli("build", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    state = load_state(folders_of(load_config(tmp_path)))
    assert state is not None
    index = {key: signature for key, signature in state.files.items() if key.startswith("out:pagefind/")}
    assert index and all(len(signature) == 3 for signature in index.values()), index
