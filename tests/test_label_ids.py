"""Ids are the page's: labels from prose and cell options never take the id of the page's own
elements or of each other, a {ref} finds its own page's label first, and every problem is a
warning naming the entry and the places.

One shared build (module scope) of three pages; the second carries every colliding label.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from site_builder.site.prose.label_ids import LABEL_PREFIX, QUARTO_PREFIXES, PageIds
from site_builder.site.sitefiles import TEMPLATES_DIR
from tests.conftest import run_cli, shared_folder, write_demo
from tests.page_reader import page as page_of, parts

FIRST = '''
"""First entry."""

# %% B-one
print("one")

# %% [markdown]
# (shared)=
# ## Shared on the first page
#
# Its own: {ref}`first to shared <shared>`.
'''

SECOND = '''
"""Second entry: every label takes an id of the page."""

# %% B-one
print("one")

# %% [markdown]
# (main)=
# ## Targeted as main
#
# ```{note}
# :name: search
# A note named search.
# ```
#
# (search-input)=
# A paragraph targeted as the search input.
#
# (theme-toggle)=
# (api-used-heading)=
# ## Targeted twice
#
# (setup)=
# ## Targeted as the setup block
#
# (shared)=
# ## Shared on the second page
#
# (dup)=
# ## First dup
#
# (dup)=
# ## Second dup
#
# (bad "label")=
# ## Bad label
#
# ```{math}
# :label: has space
# x = 1
# ```
#
# $$
# E = mc^2
# $$ (eq-energy)
#
# Links: {ref}`to main <main>`, {ref}`to search <search>`, {ref}`to input <search-input>`,
# {ref}`to setup <setup>`, {ref}`to shared <shared>`, {ref}`to dup <dup>`, {eq}`eq-energy`,
# {ref}`to figure <B-one>`, {ref}`to clash <fig-clash>`, {ref}`to bad <bad "label">`.

# %% B-two
#| label: B-one
#| fig-cap: The figure labelled as a block
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.plot([1, 2])

# %% fig-clash
#| label: fig-clash
#| fig-cap: A figure whose label is its block's name
plt.figure()
plt.plot([2, 1])
'''

THIRD = '''
"""Third entry."""

# %% B-one
print("one")

# %% [markdown]
# From elsewhere: {ref}`third to shared <shared>`, {ref}`third to main <main>`.
'''

GALLERY = '''
"""
Gallery entry
=============

.. _main:

Main
----

.. note::
   :name: search

   A reST note named search.
"""

# %%
# .. _theme-toggle:
#
# Search
# ------
#
# Text of the second cell.

print("gallery ran")
'''


@dataclass
class Ids:
    """A page's elements with an id attribute, (tag, id), and its links by their text (the first link of each text)."""

    ids: list[tuple[str, str]]
    links: dict[str, str]


def parsed(site: Path, entry: str) -> Ids:
    read = parts(page_of(site, entry))
    links: dict[str, str] = {}
    for href, text in read.links:
        links.setdefault(text, href)
    return Ids([(e.tag, e.id) for e in read.ids], links)


def build_project(folder: Path) -> None:
    """The project of this module, built, in ``folder/project``; the build's stderr in ``folder/stderr.txt``."""
    project = folder / "project"
    write_demo(project, "a_first", FIRST)
    write_demo(project, "b_second", SECOND)
    write_demo(project, "c_third", THIRD)
    write_demo(project, "e_gallery", GALLERY)  # reST prose: docutils' ids, prefixed per cell
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# A notebook\n\n(twice)=\n## Once"),
        nbformat.v4.new_code_cell("print('notebook ran')"),
        nbformat.v4.new_markdown_cell("Text.\n\n(twice)=\n## Again\n\n{ref}`notebook to twice <twice>`"),
    ])
    notebook.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    nbformat.write(notebook, project / "demos" / "d_notebook.ipynb")
    result = run_cli("build", cwd=project, timeout=170)
    assert result.returncode == 0, result.stderr
    (folder / "stderr.txt").write_text(result.stderr, encoding="utf-8")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = shared_folder(tmp_path_factory, "label-ids", build_project)
    return folder / "project" / "build", (folder / "stderr.txt").read_text(encoding="utf-8")


def test_every_id_on_the_page_is_unique_and_the_page_keeps_its_own(built: tuple[Path, str]) -> None:
    site, _ = built
    page = parsed(site, "b_second")
    counts = Counter(anchor for _, anchor in page.ids)
    assert [anchor for anchor, n in counts.items() if n > 1] == []
    ids = dict((anchor, tag) for tag, anchor in page.ids)
    assert ids["main"] == "main" and ids["search"] == "form" and ids["search-input"] == "input"
    assert ids["theme-toggle"] == "button"
    assert ids["setup"] == ids["B-one"] == ids["B-two"] == ids["fig-clash"] == "section"


def test_rest_names_and_targets_keep_out_of_the_page_ids(built: tuple[Path, str]) -> None:
    site, _ = built
    page = parsed(site, "e_gallery")
    counts = Counter(anchor for _, anchor in page.ids)
    assert [anchor for anchor, n in counts.items() if n > 1] == []
    ids = {anchor: tag for tag, anchor in page.ids}
    assert ids["main"] == "main" and ids["search"] == "form" and ids["theme-toggle"] == "button"


def test_each_ref_lands_on_its_label(built: tuple[Path, str]) -> None:
    site, _ = built
    page = parsed(site, "b_second")
    ids = {anchor: tag for tag, anchor in page.ids}
    expected = {"to main": "#label-main", "to search": "#label-search", "to input": "#label-search-input",
                "to setup": "#label-setup", "to shared": "#label-shared", "to dup": "#label-dup",
                "(2)": "#eq-energy",  # the {math} before it is (1): numbered, though its label is refused
                "to figure": "#label-B-one", "to clash": "#label-fig-clash"}
    for text, href in expected.items():
        assert page.links.get(text) == href, (text, page.links.get(text))
        assert href[1:] in ids, href
    assert ids["label-main"] == "h2" and ids["label-search"] == "aside" and ids["label-search-input"] == "p"
    assert ids["label-B-one"] == ids["label-fig-clash"] == "figure"  # the captioned figures
    assert page.links["First dup"] == "#label-dup"  # the first definition has the id ("On this page")
    assert "to bad" not in page.links  # a label that cannot be an id links nowhere: its text
    html = (site / "b_second" / "index.html").read_text(encoding="utf-8")
    assert '(bad "label")=' not in html and "(bad &#34;label&#34;)=" not in html and "(dup)=" not in html


def test_a_ref_prefers_its_own_page_then_the_first_in_the_site(built: tuple[Path, str]) -> None:
    site, _ = built
    assert parsed(site, "a_first").links["first to shared"] == "#label-shared"
    assert parsed(site, "b_second").links["to shared"] == "#label-shared"  # not a_first's
    third = parsed(site, "c_third").links
    assert third["third to shared"] == "../a_first/index.html#label-shared"
    assert third["third to main"] == "../b_second/index.html#label-main"
    assert ("h2", "label-shared") in parsed(site, "a_first").ids
    notebook = parsed(site, "d_notebook")
    assert notebook.links["notebook to twice"] == "#label-twice" and notebook.links["Once"] == "#label-twice"


def _warning(stderr: str, *parts: str) -> str:
    lines = [line for line in stderr.splitlines() if all(p in line for p in parts)]
    assert len(lines) == 1, (parts, stderr)
    return lines[0]


def test_problems_are_warnings_naming_the_entry_and_the_places(built: tuple[Path, str]) -> None:
    _, stderr = built
    line = _warning(stderr, "label shared ")
    assert line.startswith("b_second: ") and "demos/b_second.py:25" in line and "demos/a_first.py:7" in line
    line = _warning(stderr, "label dup ")
    assert line.startswith("b_second: ") and "demos/b_second.py:28" in line and "demos/b_second.py:31" in line
    line = _warning(stderr, "label 'bad \"label\"'")
    assert line.startswith("b_second: ") and "demos/b_second.py:34" in line and "cannot be an id" in line
    line = _warning(stderr, "label 'has space'")
    assert line.startswith("b_second: ") and "demos/b_second.py:37" in line  # its directive
    line = _warning(stderr, "label twice ")  # a notebook's cells have no line numbers in the file
    assert line.startswith("d_notebook: ") and "d_notebook.ipynb, cell 1, line 3" in line
    assert "d_notebook.ipynb, cell 3, line 3" in line
    line = _warning(stderr, "label fig-clash ")
    assert line.startswith("b_second: ") and "block fig-clash" in line and "label-fig-clash" in line
    assert "Traceback" not in stderr


def test_label_ids_never_take_a_fixed_id_of_the_templates() -> None:
    fixed = set()
    for template in TEMPLATES_DIR.glob("*.html"):
        fixed |= set(re.findall(r'\bid="([^"{}]+)"', template.read_text(encoding="utf-8")))
    assert {"main", "search", "search-input", "theme-toggle", "api-used-heading"} <= fixed
    for anchor in fixed:
        assert not anchor.startswith((LABEL_PREFIX, *QUARTO_PREFIXES)), anchor
    ids = PageIds(("B-one", "label-x", "fig-a"))
    assert ids.allocate("main") == ("label-main", None)
    assert ids.allocate("fig-b") == ("fig-b", None)
    assert ids.allocate("x") == ("label-x-2", "block label-x")
    assert ids.allocate("fig-a") == ("label-fig-a", "block fig-a")
    assert ids.allocate("B-one-animation-1")[0] == "label-B-one-animation-1"
