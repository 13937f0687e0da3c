"""Citations and cross-references in every prose format, on the prose registry: Pandoc's syntax
as tokens, MyST's links to labels and pages, labelled notebook cells, reST's numbered figures
and equations, brackets mixing works and cross-references, block descriptions.

One project (built once for the module) holds a house-style script, a Sphinx-Gallery script
in reST and a MyST notebook that refer to each other; every page and bibliography is ours.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from conftest import MYST_FRONT_MATTER, build_keeping_warnings, write_demo
from site_builder.commands.build import BuildOptions, build
from site_builder.config import load_config
from site_builder.source.syntax.citations import CitePart, citation_parts, parse_citation
from site_builder.source.syntax.markdown import parse

BIB = r"""
@book{Friedman1956, author = {Friedman, Milton}, title = {A Theory of the Consumption Function}, year = {1956}}
@article{Knuth84, author = {Knuth, Donald}, title = {Literate Programming}, journal = {The Computer Journal},
  year = {1984}}
@misc{Doe2020, author = {Doe, Jane}, title = {Cited in a block's description only}, year = {2020}}
"""
HOUSE = '''\
    """house.py — a house-style script.

    Purpose
    -------
    Mixed: [@Friedman1956; @fig-cell, p. 3], and [see @Knuth84, p. 33; @Friedman1956].
    See [](#sec-house), [the cell](nb/cells.md#cell-plain), [](nb/cells.md) and MyST's legacy [](sec-house).
    Nothing: [](#no-such-label). A link's text [@Knuth84](https://example.org/k) stays its text.

    Blocks
    ------
    [B-a]  computes what [@Knuth84] describes, see {numref}`fig-rst` and @Doe2020
    """

    # %% B-a
    print("[B-a] ok")

    # %% [markdown]
    # (sec-house)=
    # ## The house section
    #
    # As @Friedman1956 says; the equation {eq}`eq-rst` of the gallery.
    #
    # ## Quarto's section {#sec-quarto}
    #
    # $$
    # E = mc^2
    # $$ {#eq-energy}
    #
    # | a | b |
    # |---|---|
    # | 1 | 2 |
    #
    # : Rates {#tbl-rates}
'''
GALLERY = '''\
    """
    A gallery example
    =================

    See :numref:`fig-rst`, :numref:`Figure %s <fig-rst>` and :eq:`eq-rst`; the cell
    :ref:`cell-plain`, the captioned cell :numref:`fig-cell`, :ref:`sec-house` and
    :ref:`sec-rst` below; :cite:p:`Knuth84`; :ref:`no-label-here`.

    .. figure:: missing.png
       :name: fig-zero

       A first figure, unlabelled by any reference.

    .. figure:: missing.png
       :name: fig-rst

       The second figure.

    .. math::
       :label: eq-rst

       a^2 + b^2 = c^2

    .. _sec-rst:

    A section
    ---------

    Its text.
    """
    # %%
    print(1)
'''
NOTEBOOK = MYST_FRONT_MATTER + """
# Cells

The gallery's {numref}`fig-rst` and [](#eq-rst); {ref}`the house <sec-house>`.
Quarto's labels: @sec-quarto, @eq-energy and [see @tbl-rates].
As {cite}`Knuth84` wrote, or two works {cite}`Friedman1956,Knuth84`.

```{code-cell} ipython3
:name: cell-plain
print(2)
```

```{code-cell} ipython3
#| label: fig-cell
#| fig-cap: A cell's figure
print(3)
```
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("syntax")
    (project / "pyproject.toml").write_text('[project]\nname = "s"\n[tool.site_builder]\nbibliography = ["refs.bib"]\n')
    (project / "refs.bib").write_text(BIB)
    write_demo(project, "house", HOUSE)
    write_demo(project, "plot_gallery", GALLERY)
    (project / "demos" / "nb").mkdir(parents=True, exist_ok=True)
    (project / "demos" / "nb" / "cells.md").write_text(NOTEBOOK)
    return build_keeping_warnings(project)


def _page(site: Path, name: str) -> str:
    html = (site / "build" / name / "index.html").read_text()
    return html[html.index("<main"):html.index("</main>")]


# ---------------------------------------------------------------- Pandoc's syntax, parsed


def _citations(text: str) -> list[str]:
    return [c.content for t in parse(text) for c in t.children or () if c.type == "pandoc_cite"]


def test_pandoc_citations_are_tokens_of_their_own_and_nothing_else_is() -> None:
    assert _citations("See [@a; see @b, p. 33], @c [p. 4] and [-@d].") == [
        "[@a; see @b, p. 33]", "@c [p. 4]", "[-@d]"]
    assert _citations("Mail a@b.com, `@code`, $@x$, {cite}`x`, [no key here], \\@x.") == []
    assert citation_parts("see @b, p. 33; -@c") == [CitePart("b", "see", ", p. 33"), CitePart("c", "", "", True)]
    assert citation_parts("@a; no key") is None
    assert parse_citation("@key.") == (False, [CitePart("key")])  # trailing punctuation is no part of a key
    assert parse_citation("@{odd key}") == (False, [])  # braces hold no spaces


# ---------------------------------------------------------------- Markdown prose: links and brackets


def test_a_bracket_mixing_works_and_cross_references_shows_each_in_its_order(site: Path) -> None:
    page = _page(site, "house")
    page = page[page.index('class="purpose"'):page.index('class="how-to-run"')]
    assert ('(<a class="citation-link" href="#bib-Friedman1956" rel="noopener noreferrer">Friedman, 1956</a>)</span>; '
            '<a class="xref xref-entry" href="../nb/cells/index.html#fig-cell" rel="noopener noreferrer">Figure 1</a>, p. 3'
            ) in page
    assert '(see <a class="citation-link" href="#bib-Knuth84" rel="noopener noreferrer">Knuth, 1984, p. 33</a>; ' in page
    assert "[@" not in page and "@fig" not in page
    assert '<a href="https://example.org/k" rel="noopener noreferrer">@Knuth84</a>' in page  # no link in a link


def test_myst_links_to_labels_and_pages_take_their_text(site: Path) -> None:
    page = _page(site, "house")
    section = '<a href="#sec-house" class="xref xref-internal" rel="noopener noreferrer">The house section</a>'
    assert page.count(section) == 2  # [](#sec-house) and the legacy [](sec-house)
    assert ('<a href="../nb/cells/index.html#label-cell-plain" class="xref xref-entry" rel="noopener noreferrer">'
            "the cell</a>") in page
    assert '<a href="../nb/cells/index.html" rel="noopener noreferrer">Cells</a>' in page  # the page's title
    assert '<span class="unresolved" title="Unresolved cross-reference">no-such-label</span>' in page
    assert "house: demos/house.py:7: {ref}`no-such-label`: no label 'no-such-label'" in (site / "warnings.txt").read_text()


def test_block_descriptions_and_comment_prose_cite_and_refer(site: Path) -> None:
    page = _page(site, "house")
    description = page[page.index('<p class="description">'):]
    description = description[:description.index("</p>")]
    assert '<a class="citation-link" href="#bib-Knuth84" rel="noopener noreferrer">Knuth, 1984</a>' in description
    assert 'href="../plot_gallery/index.html#fig-rst" rel="noopener noreferrer">Fig. 2</a>' in description
    assert ">Friedman (1956)</a>" in page  # comment prose: @key
    assert 'href="../plot_gallery/index.html#eq-rst" rel="noopener noreferrer">(1)</a>' in page
    works = (site / "build" / "references" / "index.html").read_text()  # the description's citation counts
    doe = works[works.index('id="work-Doe2020"'):]
    assert 'href="../house/index.html"' in doe[:doe.index("</li>")]
    toc = (site / "build" / "house" / "index.html").read_text()
    assert 'title="computes what (Knuth, 1984) describes, see Fig. 2 and Doe (2020)"' in toc  # On this page: its text


def test_quarto_labels_are_site_wide_targets_of_quarto_references(site: Path) -> None:
    house = _page(site, "house")
    assert '<h2 id="sec-quarto">Quarto’s section</h2>' in house and "{#" not in house.split("how-to-run")[1]
    assert '<div class="math-block" id="eq-energy">' in house and '<span class="eqno">(1)</span>' in house
    assert '<table id="tbl-rates">\n<caption>Table 1: Rates</caption>' in house
    notebook = _page(site, "nb/cells")
    for href, text in (("#sec-quarto", "Quarto’s section"), ("#eq-energy", "(1)"), ("#tbl-rates", "Table 1")):
        assert f'href="../../house/index.html{href}" rel="noopener noreferrer">{text}</a>' in notebook, href
    assert "see <a class=" in notebook
    # MyST's {cite} of one work is narrative, as Jupyter Book 2 (mystmd) shows it; of two, parenthetical
    assert 'citation-t"><a class="citation-link" href="#bib-Knuth84" rel="noopener noreferrer">Knuth (1984)</a>' in notebook
    assert '(<a class="citation-link" href="#bib-Friedman1956" rel="noopener noreferrer">Friedman, 1956</a>; ' in notebook


def test_a_quarto_figure_is_a_numbered_figure() -> None:
    from site_builder.site.prose.html import render

    html = render("![A *caption*](img.png){#fig-plot}\n\nSee @fig-plot.", "markdown")
    assert '<figure class="myst-figure" id="fig-plot">' in html and 'alt="A caption"' in html
    assert '<span class="caption-number">Figure 1: </span><p>A <em>caption</em></p>' in html  # as Quarto names it
    assert '<a class="xref xref-internal" href="#fig-plot" rel="noopener noreferrer">Figure 1</a>' in html


# ---------------------------------------------------------------- notebook cells as labels


def test_labelled_notebook_cells_are_site_wide_targets(site: Path) -> None:
    notebook = _page(site, "nb/cells")
    assert '<section id="label-cell-plain"' in notebook
    gallery = _page(site, "plot_gallery")
    assert 'href="../nb/cells/index.html#label-cell-plain" rel="noopener noreferrer">cell-plain</a>' in gallery
    assert 'href="../nb/cells/index.html#fig-cell" rel="noopener noreferrer">Figure 1</a>' in gallery


# ---------------------------------------------------------------- reST: numbered figures and equations


def test_rest_figures_and_equations_are_numbered_as_their_references_say(site: Path) -> None:
    gallery = _page(site, "plot_gallery")
    assert '<a class="xref xref-internal" href="#fig-rst" rel="noopener noreferrer">Fig. 2</a>' in gallery
    assert '<a class="xref xref-internal" href="#fig-rst" rel="noopener noreferrer">Figure 2</a>' in gallery
    assert '<a class="xref xref-internal" href="#eq-rst" rel="noopener noreferrer">(1)</a>' in gallery
    figure = gallery[gallery.index('<figure id="fig-rst"'):]
    assert re.search(r'<span class="caption-number">Fig\. 2 </span>The second figure', figure[:figure.index("</figure>")])
    assert '<span class="eqno">(1)</span>' in gallery and gallery.count('id="fig-rst"') == 1
    assert 'href="#sec-rst" rel="noopener noreferrer">A section</a>' in gallery
    assert 'href="../house/index.html#sec-house" rel="noopener noreferrer">The house section</a>' in gallery
    assert '<span class="citation citation-p">(<a class="citation-link" href="#bib-Knuth84"' in gallery
    notebook = _page(site, "nb/cells")
    assert 'href="../../plot_gallery/index.html#fig-rst" rel="noopener noreferrer">Fig. 2</a>' in notebook
    assert 'href="../../plot_gallery/index.html#eq-rst" class="xref xref-entry" rel="noopener noreferrer">(1)</a>' in notebook


def test_rest_roles_warn_with_their_line_as_written(site: Path) -> None:
    warnings = (site / "warnings.txt").read_text()
    assert "plot_gallery: demos/plot_gallery.py:7: :ref:`no-label-here`: no label 'no-label-here'" in warnings
    assert '<span class="unresolved" title="Unresolved cross-reference">no-label-here</span>' in _page(site, "plot_gallery")


def test_a_glossary_in_rest_and_myst_defines_terms(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "g"\n')
    write_demo(tmp_path, "plot_terms", '''\
        """
        Terms
        =====

        The :term:`Gradient` and :term:`logit`.

        .. glossary::

           Gradient
              The vector of partial derivatives.
        """
        # %%
        print(1)
        ''')
    (tmp_path / "demos" / "myst.md").write_text(MYST_FRONT_MATTER + textwrap.dedent("""
        # MyST terms

        ```{glossary}
        Logit
          A score before the softmax.
        ```

        The {term}`gradient` of another page.
        """))
    assert build(load_config(tmp_path), BuildOptions()).ok
    rst = _page(tmp_path, "plot_terms")
    assert 'id="term-gradient"' in rst and '<a class="term" href="#term-gradient"' in rst
    assert '<a class="term" href="../myst/index.html#term-logit"' in rst
    myst = _page(tmp_path, "myst")
    assert '<dt id="term-logit">Logit</dt>' in myst
    assert '<a class="term" href="../plot_terms/index.html#term-gradient"' in myst
    glossary = (tmp_path / "build" / "glossary" / "index.html").read_text()
    assert "The vector of partial derivatives." in glossary and "A score before the softmax." in glossary


def test_a_renumbered_rest_figure_re_renders_the_pages_citing_its_number(
        tmp_path: Path, rendered_pages: list[str]) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "r"\n')
    figures = '''\
        """
        Figures
        =======

        .. figure:: missing.png

           First.

        .. figure:: missing.png
           :name: fig-b

           Second.
        """
        # %%
        print(1)
        '''
    write_demo(tmp_path, "plot_figures", figures)
    (tmp_path / "demos" / "refers.md").write_text(MYST_FRONT_MATTER + "\n# Refers\n\nSee {numref}`fig-b`.\n")
    write_demo(tmp_path, "plain", '"""plain.py — nothing.\n\nPurpose\n-------\nNothing.\n"""\n# %% B-a\nprint(1)\n')
    config = load_config(tmp_path)
    assert build(config, BuildOptions()).ok
    assert ">Fig. 2</a>" in _page(tmp_path, "refers")
    source = tmp_path / "demos" / "plot_figures.py"
    source.write_text(source.read_text().replace(".. figure:: missing.png\n\n   First.\n\n", ""))
    rendered_pages.clear()
    report = build(config, BuildOptions())
    assert report.ok and report.from_cache >= {"refers", "plain"}
    assert sorted(p for p in rendered_pages if not p.endswith((".html", ".xml"))) == ["plot_figures", "refers"]
    assert ">Fig. 1</a>" in _page(tmp_path, "refers")


def test_a_notebooks_unresolved_reference_warns_with_its_cell_and_line(tmp_path: Path) -> None:
    import nbformat

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "n"\n')
    (tmp_path / "demos").mkdir()
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("# A notebook\n\nIntro.\n\nSee {ref}`nowhere` and [@nokey]."),
                      nbformat.v4.new_code_cell("print(1)")]
    nbformat.write(notebook, str(tmp_path / "demos" / "nb.ipynb"))
    warnings = (build_keeping_warnings(tmp_path) / "warnings.txt").read_text()
    assert "nb: demos/nb.ipynb, cell 1, line 5: {ref}`nowhere`: no label 'nowhere' in the site" in warnings
    assert "nb: demos/nb.ipynb, cell 1, line 5: the citation key 'nokey' is in no bibliography" in warnings
