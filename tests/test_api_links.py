"""Code linked to its API documentation, the API index and api_usage.json, built as a user would."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import copy_of, run_cli, shared_folder, write_demo
from tests.page_reader import cell
from tests.inventory_support import write_inventory

NUMPY = "https://numpy.test/doc/"
MPL = "https://mpl.test/stable/"
PLOTS = '''
"""plots.py — a line and its sine.

Purpose
-------
Plot a sine.
"""
import numpy as np
import matplotlib.pyplot as plt

# %% B-data
x = np.linspace(0, 2 * np.pi, 50)
fig, ax = plt.subplots()
ax.plot(x, np.sin(x))
ax.set_xlabel("x")
np.cos(x)

# %% B-again
fig, ax = plt.subplots(1, 2)
ax[0].plot(x, np.cos(x))
'''
ALIASES = '''
"""aliases.py — the same functions under other names.

Purpose
-------
Aliases and a shadowed name.
"""
from numpy import linspace as space
from matplotlib import pyplot

# %% B-alias
values = space(0, 1, 3)
pyplot.figure()

# %% B-shadow
np = "not numpy"
np.upper()

# %% B-helper
def sampled(count, pyplot):
    grid = space(0, 1, count)
    return pyplot, grid.size

def total(values):
    return values.sum()

sampled(3, None)
total(values)
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two entries and local inventories for numpy and matplotlib, built once per test run (both xdist
    workers read it; a test that builds again does so in a copy)."""
    return shared_folder(tmp_path_factory, "api-links", _build_project)


def _build_project(root: Path) -> None:
    write_demo(root, "plots", PLOTS)
    write_demo(root, "aliases", ALIASES)
    write_inventory(root / "inv" / "numpy.inv", [
        ("numpy", "py:module", "index.html#module-$"),
        ("numpy.linspace", "py:function", "gen/$"),
        ("numpy.sin", "py:data", "gen/$"),
        ("numpy.pi", "py:data", "constants.html#$"),
        ("numpy.ndarray", "py:class", "gen/$"),
    ])  # numpy.cos is left out: it must stay plain text
    write_inventory(root / "inv" / "mpl.inv", [
        ("matplotlib.pyplot", "py:module", "pyplot_summary.html#module-$"),
        ("matplotlib.pyplot.subplots", "py:function", "gen/$"),
        ("matplotlib.pyplot.figure", "py:function", "gen/$"),
        ("matplotlib.axes.Axes", "py:class", "axes_api.html#$"),
        ("matplotlib.axes.Axes.plot", "py:method", "gen/$"),
        ("matplotlib.axes.Axes.set_xlabel", "py:method", "gen/$"),
        ("matplotlib.figure.Figure", "py:class", "figure_api.html#$"),
    ])
    (root / "pyproject.toml").write_text(
        "[tool.site_builder.api_docs]\n"
        f'numpy = {{ url = "{NUMPY}", inventory = "inv/numpy.inv" }}\n'
        f'matplotlib = {{ url = "{MPL}", inventory = "inv/mpl.inv" }}\n')
    done = run_cli("build", cwd=root)
    assert done.returncode == 0, done.stderr


def links(page: str) -> list[tuple[str, str, str]]:
    """(title, href, plain text) of every code link of a page, in order."""
    found = re.findall(r'<a class="api-link" href="([^"]*)" title="([^"]*)">(.*?)</a>', page)
    return [(title, href, re.sub(r"<[^>]+>", "", inner)) for href, title, inner in found]


def test_code_links_to_the_documented_objects(project: Path) -> None:
    page = (project / "build" / "plots" / "index.html").read_text()
    data = links(cell(page, "B-data"))
    assert ("matplotlib.pyplot.subplots", f"{MPL}gen/matplotlib.pyplot.subplots",
            "plt.subplots") in data
    assert ("numpy.linspace", f"{NUMPY}gen/numpy.linspace", "np.linspace") in data
    titles = {(title, text) for title, _, text in data}
    # a method on an instance, inherited (set_xlabel is _AxesBase's) and not; a variable by its type
    assert {("matplotlib.axes.Axes.plot", "ax.plot"), ("matplotlib.axes.Axes.set_xlabel", "ax.set_xlabel"),
            ("matplotlib.figure.Figure", "fig"), ("numpy.ndarray", "x"), ("numpy.pi", "np.pi"),
            ("numpy.sin", "np.sin")} <= titles
    # np.cos is not in the inventory: plain text (its `np` still links to the module)
    assert not any(text == "np.cos" for _, _, text in data) and ("numpy", "np") in titles


def test_a_name_reassigned_in_a_later_block_links_to_what_it_then_was(project: Path) -> None:
    page = (project / "build" / "plots" / "index.html").read_text()
    first = {text: title for title, _, text in links(cell(page, "B-data"))}
    again = {text: title for title, _, text in links(cell(page, "B-again"))}
    assert first["ax"] == "matplotlib.axes.Axes"
    assert again["ax"] == "numpy.ndarray"  # fig, ax = plt.subplots(1, 2): an array of Axes


def test_aliases_and_a_shadowed_name(project: Path) -> None:
    page = (project / "build" / "aliases" / "index.html").read_text()
    alias = {text: title for title, _, text in links(cell(page, "B-alias"))}
    assert alias["space"] == "numpy.linspace" and alias["pyplot.figure"] == "matplotlib.pyplot.figure"
    assert links(cell(page, "B-shadow")) == []  # np is a str here: Python's docs are not configured
    # In a function body the module's `space` links; a parameter named like a global
    # (pyplot, passed None) and a local (grid) are the function's own: plain.  From Python
    # 3.12 the runner watches the calls: `values`, passed an array, links to its type (in the
    # signature and the body).
    array = ("numpy.ndarray", f"{NUMPY}gen/numpy.ndarray", "values")
    watched = [array, array] if sys.version_info >= (3, 12) else []
    assert links(cell(page, "B-helper")) == [("numpy.linspace", f"{NUMPY}gen/numpy.linspace", "space"),
                                             *watched, array]  # the last: the module's `values`


def test_links_keep_the_highlighting_and_the_code_text(project: Path) -> None:
    page = (project / "build" / "plots" / "index.html").read_text()
    # the link wraps Pygments' own token spans, whose classes give the colours
    assert ('<a class="api-link" href="' + MPL + 'gen/matplotlib.axes.Axes.plot"'
            ' title="matplotlib.axes.Axes.plot"><span class="n">ax</span><span class="o">.</span>'
            '<span class="n">plot</span></a>') in page
    code = re.sub(r"<[^>]+>", "", cell(page, "B-data").split('<div class="code"', 1)[1].split("</div>", 1)[0])
    assert "ax.plot(x, np.sin(x))" in code.replace("&quot;", '"')


def test_each_page_ends_with_the_apis_it_uses(project: Path) -> None:
    page = (project / "build" / "plots" / "index.html").read_text()
    used = page[page.index('<section class="api-used"'):]
    names = re.findall(r"<code>([^<]+)</code>", used.split("</section>", 1)[0])
    assert names == sorted(names, key=str.lower)
    assert {"matplotlib.pyplot.subplots", "matplotlib.axes.Axes.plot", "numpy.linspace"} <= set(names)
    assert "numpy.ndarray" not in names  # only the type of a variable: linked, but not a use
    assert '../api/index.html#api-numpy.linspace' in used


def test_api_index_lists_each_object_with_its_entries_and_blocks(project: Path) -> None:
    site = project / "build"
    page = (site / "api" / "index.html").read_text()
    assert 'href="api/index.html"' in (site / "index.html").read_text()  # reachable from the index
    assert "data-pagefind-body" in page  # found by search
    numpy_at, mpl_at = page.index('id="api-package-numpy"'), page.index('id="api-package-matplotlib"')
    assert mpl_at < numpy_at  # packages A-Z
    linspace = page[page.index('id="api-numpy.linspace"'):]
    linspace = linspace[:linspace.index("</dd>")]
    assert f'href="{NUMPY}gen/numpy.linspace"' in linspace
    assert 'href="../aliases/index.html#B-alias"' in linspace and 'href="../plots/index.html#B-data"' in linspace
    assert 'class="thumbnail"' in linspace  # plots has a figure


def test_api_usage_json(project: Path) -> None:
    data = json.loads((project / "build" / "_downloads" / "api_usage.json").read_text())
    assert data["format"] == "site_builder-api-usage" and data["version"] == 1
    subplots = data["objects"]["matplotlib.pyplot.subplots"]
    assert subplots["docs"] == f"{MPL}gen/matplotlib.pyplot.subplots"
    assert subplots["role"] == "py:function" and subplots["package"] == "matplotlib"
    assert [(e["entry"], e["page"], e["blocks"]) for e in subplots["entries"]] == [
        ("plots", "plots/index.html", ["B-data", "B-again"])]
    assert [e["entry"] for e in data["objects"]["numpy.linspace"]["entries"]] == ["aliases", "plots"]
    assert "numpy.ndarray" not in data["objects"]


def test_cached_frozen_and_forced_builds_link_the_same(project: Path, tmp_path: Path) -> None:
    project = copy_of(project, tmp_path, project.name)  # --force rewrites the records; the name is the site's title
    site = project / "build"
    before = {p: (site / p).read_bytes() for p in ("plots/index.html", "api/index.html", "_downloads/api_usage.json")}
    record = json.loads((project / "_freeze" / "plots" / "_site_builder" / "record.json").read_text())
    assert any(n["names"] == ["matplotlib.pyplot.subplots"] for n in record["blocks"][1]["names"])
    for args, out in ((["--frozen"], "frozen"), ([], "cached"), (["--force"], "forced")):
        done = run_cli("build", "--out", out, *args, cwd=project)
        assert done.returncode == 0, done.stderr
        for rel, data in before.items():
            now = (project / out / rel).read_bytes()
            if out == "forced" and rel.endswith("plots/index.html"):  # ran again: its times differ
                assert links(now.decode()) == links(data.decode())
            else:
                assert now == data, f"{rel} differs in the {out} build"


def test_a_record_with_malformed_names_is_refused(project: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(project, copy, ignore=shutil.ignore_patterns("build*", ".cache"))
    path = copy / "_freeze" / "plots" / "_site_builder" / "record.json"
    record = json.loads(path.read_text())
    record["blocks"][1]["names"] = [{"line": 1, "col": 0, "end_col": 2, "names": "javascript:alert(1)", "explicit": 1}]
    path.write_text(json.dumps(record))
    done = run_cli("build", "--frozen", cwd=copy)
    assert done.returncode == 2, done.stderr
    assert "blocks[1].names[0].names" in done.stderr


def test_rebuilds_keep_the_api_files_and_follow_the_inventories(project: Path, tmp_path: Path) -> None:
    project = copy_of(project, tmp_path)  # the inventory is rewritten below
    site = project / "build"
    assert run_cli("build", cwd=project).returncode == 0  # a copy's first build: it takes the folder as its own
    usage = (site / "_downloads" / "api_usage.json").read_bytes()
    done = run_cli("build", cwd=project)
    assert done.returncode == 0 and "site unchanged" in done.stdout + done.stderr, done.stderr
    assert (site / "_downloads" / "api_usage.json").read_bytes() == usage
    # An inventory without numpy.linspace: the pages follow it, and nothing runs again.
    write_inventory(project / "inv" / "numpy.inv", [("numpy", "py:module", "index.html#module-$"),
                                                     ("numpy.ndarray", "py:class", "gen/$")])
    done = run_cli("build", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "2 from the cache" in done.stdout + done.stderr
    titles = {title for title, _, _ in links((site / "plots" / "index.html").read_text())}
    assert "numpy.ndarray" in titles and "numpy.linspace" not in titles
    assert "numpy.linspace" not in json.loads((site / "_downloads" / "api_usage.json").read_text())["objects"]
    assert 'id="api-numpy.linspace"' not in (site / "api" / "index.html").read_text()
