"""Prose cells in both dialects (house style Markdown, Sphinx-Gallery reST) and their rendering."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from site_builder.site.prose import html as prose
from site_builder.source.blocks import parse
from site_builder.source.parsed import Script
from site_builder.source.docstring import rst_head
from tests.conftest import run_cli, write_demo
from tests.page_reader import parts

# A Sphinx-Gallery-style script, written for these tests: reST docstring with a label and an
# over/underlined title, "# %%" cells of comment prose, an old-style "#####" separator,
# a prose-only cell and gallery settings.
GALLERY = '''"""
.. _example-waves:

===========
Waves *now*
===========

Plots ``sin`` with :func:`~numpy.sin` and :class:`matplotlib.figure.Figure`.

See :ref:`the intro <intro-label>` and :doc:`/tutorials/basics`.
"""
import math
# sphinx_gallery_thumbnail_number = 2

# %%
# First step
# ----------
#
# Compute *values*::
#
#     values = [math.sin(x) for x in range(3)]

values = [round(math.sin(x), 3) for x in range(3)]
print(values)

###############################################################################
# The old separator still starts a cell.
total = sum(values)
print(total)

# %%
# .. tags:: plot-type: line
#
# .. admonition:: References
#
#    The use of :func:`math.sin` and :py:meth:`list.append` is shown.
'''

HOUSE = '''"""demo.py — a house-style demo.

Purpose
-------
Show *things*.

Blocks
------
[B-one]  first
"""
x = 1
# %% B-one
# a comment that stays in the code
##############################
y = 2
# %% [markdown]
# Some **prose**.
'''


def run(source: str, **kwargs: object) -> Script:
    return parse(source, "demos/demo.py", "demo", **kwargs)  # type: ignore[arg-type]


def visible_text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def urls(html: str) -> list[str]:
    """Every href and src attribute of real tags (not text that looks like a tag), entities decoded."""
    return parts(html).urls


# --- parse: cells -------------------------------------------------------------------


def test_gallery_cells_split_into_prose_and_code() -> None:
    script = run(GALLERY)
    kinds = [(c.kind, c.name) for c in script.cells]
    assert kinds == [("code", "setup"), ("markdown", ""), ("code", "block-1"),
                     ("markdown", ""), ("code", "block-2"), ("markdown", "")]
    first_prose, code = script.cells[1], script.cells[2]
    assert first_prose.text.startswith("First step\n----------\n\nCompute *values*::")
    assert code.text.startswith("values = [round") and code.first_line == 23
    assert script.cells[3].text == "The old separator still starts a cell."
    assert script.cells[4].text == "total = sum(values)\nprint(total)"


def test_prose_only_cell_makes_no_code_cell() -> None:
    script = run(GALLERY)
    assert [c.name for c in script.code_cells] == ["setup", "block-1", "block-2"]
    assert script.cells[-1].kind == "markdown" and script.cells[-1].text.startswith(".. tags::")


def test_docstring_title_intro_and_settings() -> None:
    script = run(GALLERY)
    assert script.prose == "rst"
    assert script.title == "Waves *now*"
    # the label above the title stays, first: it names the page's top (a target, shown as nothing)
    assert script.intro.startswith(".. _example-waves:\n\nPlots ``sin``")
    assert script.summary.startswith("Plots ``sin``")
    assert script.docstring_lines == (1, 11)
    assert script.gallery_settings == {"thumbnail_number": "2"}
    assert script.thumbnail_number == 2


def test_bad_thumbnail_number_is_a_warning() -> None:
    script = run('"""Doc."""\n# sphinx_gallery_thumbnail_number = two\nx = 1\n')
    assert script.thumbnail_number is None
    assert any("sphinx_gallery_thumbnail_number must be a whole number" in w for w in script.warnings)


def test_house_style_keeps_comments_in_named_blocks() -> None:
    script = run(HOUSE)
    assert script.prose == "markdown" and script.title == ""
    assert [c.kind for c in script.cells] == ["code", "code", "markdown"]
    assert script.cells[1].text.startswith("# a comment that stays in the code\n####")
    assert script.cells[2].text == "Some **prose**."


@pytest.mark.parametrize(("source", "expected"), [
    (GALLERY, "rst"),  # a reST title
    (HOUSE, "markdown"),  # named blocks
    ('"""Plain docstring."""\nx = 1\n# %%\n# Some prose\ny = 2\n', "rst"),  # comment prose after "# %%"
    ('"""Plain docstring."""\nx = 1\n# %%\ny = 2\n', "markdown"),  # nothing to go by
])
def test_prose_language_detection(source: str, expected: str) -> None:
    assert run(source).prose == expected


def test_prose_language_override() -> None:
    assert run(GALLERY, prose="markdown").prose == "markdown"
    assert run(HOUSE, prose="rst").prose == "rst"


# --- rendering: reST ----------------------------------------------------------------


def test_rst_roles_degrade_to_code_or_text(capsys: pytest.CaptureFixture[str]) -> None:
    html = prose.render(
        ":func:`~numpy.sin`, :meth:`a.b`, :class:`matplotlib.figure.Figure`, :mod:`os`, "
        ":py:func:`math.cos`, :attr:`x.y`, :mpltype:`color`, `obj`, "
        ":ref:`the intro <intro-label>`, :doc:`/tutorials/basics`, :ref:`bare-label`", "rst")
    assert '<span class="docutils literal">sin()</span>' in html
    assert '<span class="docutils literal">a.b()</span>' in html
    assert '<span class="docutils literal">matplotlib.figure.Figure</span>' in html
    assert '<span class="docutils literal">math.cos()</span>' in html
    assert '<span class="docutils literal">obj</span>' in html
    text = visible_text(html)
    assert "the intro" in text and "basics" in text and "bare-label" in text
    assert ":" + "func:" not in text and "`" not in text and "intro-label" not in text
    assert capsys.readouterr() == ("", "")  # docutils said nothing


def test_sphinx_directives_vanish_or_become_asides(capsys: pytest.CaptureFixture[str]) -> None:
    source = """Before.

.. tags:: plot-type: line

.. redirect-from:: /old/page

.. minigallery:: numpy.sin

.. only:: latex

   Only for LaTeX.

.. toctree::

   other

.. plot::

   plt.plot([1, 2])

.. note:: A note with *emphasis*.

.. warning::

   Be careful.

.. seealso:: :func:`numpy.cos`

.. versionadded:: 3.8
   The feature.

.. admonition:: References

   - :func:`math.sin`

.. some-unknown-directive:: arg

   Its content.

After.
"""
    html = prose.render(source, "rst")
    text = visible_text(html)
    for gone in ("tags", "plot-type", "old/page", "minigallery", "Only for LaTeX", "toctree", "plt.plot",
                 "some-unknown-directive", ".."):
        assert gone not in text, gone
    assert text.strip().startswith("Before.") and text.strip().endswith("After.")
    assert '<aside class="admonition note">' in html and "<em>emphasis</em>" in html
    assert '<aside class="admonition warning">' in html
    assert '<aside class="admonition seealso">' in html and "See also" in text and "numpy.cos()" in text
    assert '<aside class="admonition version">' in html and "New in version 3.8" in text
    assert "References" in text and "math.sin()" in text
    assert capsys.readouterr() == ("", "")


def test_rst_texts_rendered_one_after_another_render_as_each_does_alone() -> None:
    # (docutils' state machine is handed from one parse to the next: nothing of a text may follow)
    rich = ("Title\n=====\n\n- a *list*\n- of ``items``\n\n  and a paragraph\n\n.. note::\n\n   A `note`.\n\n"
            "1. one\n2. two\n\nterm\n   definition\n")
    first = prose.render(rich, "rst")
    assert "<ol" in first and "<dl" in first and "admonition note" in first
    assert "<code>x</code>" in prose.render(".. default-role:: code\n\n`x` here", "rst")
    assert "level 599" in prose.render("\n\n".join(" " * (2 * i) + f"level {i}" for i in range(600)), "rst")
    assert prose.render(rich, "rst") == first  # after a text that set a role and one docutils gave up on
    assert "<code>x</code>" not in prose.render("`x` here", "rst")


def test_rst_math_literal_and_code_blocks() -> None:
    html = prose.render("""Inline :math:`a^2 + b^2`.

.. math::

   \\frac{1}{2}

Literal::

    values = [1, 2]

.. code-block:: python
   :caption: A caption
   :linenos:

   import os

>>> 1 + 1
2
""", "rst")
    assert "<math>" in html and "<msup>" in html and "<mfrac>" in html
    assert html.count('<div class="highlight">') == 3  # "::", code-block and the doctest
    assert '<span class="kn">import</span>' in html and '<span class="gp">&gt;&gt;&gt; </span>' in html
    assert "::" not in visible_text(html) and "code-block" not in html


def test_rst_is_data_no_raw_html_no_file_inclusion(tmp_path: object) -> None:
    html = prose.render(""".. raw:: html

   <script>alert(1)</script>

.. include:: /etc/hostname

`click <javascript:alert(1)>`_ and `ok <https://example.org/>`_
""", "rst")
    assert "<script" not in html and "alert(1)</" not in html
    assert "javascript" not in html
    assert 'href="https://example.org/"' in html


def test_rst_images_do_not_load_from_elsewhere() -> None:
    html = prose.render("""Text.

.. image:: https://example.org/logo.png
   :alt: the logo

.. figure:: /_static/local.png
   :alt: a local figure

   Its caption.
""", "rst")
    assert "<img" not in html
    assert '<a class="reference external" href="https://example.org/logo.png"' in html
    assert "the logo" in html and "a local figure" in html and "Its caption." in html


def test_each_rst_render_has_its_own_ids() -> None:
    # docutils' settings are made once and copied for each render: nothing of one render leaks
    from site_builder.site.prose.rst import rst_html

    text = "Sub\n---\n\ntext [1]_\n\n.. [1] note\n"
    first, second = rst_html(text, "a-"), rst_html(text, "b-")
    assert first and second and 'id="a-sub"' in first and 'href="#a-1"' in first
    assert second == first.replace('"a-', '"b-').replace('"#a-', '"#b-')


def test_rst_plain_text_title() -> None:
    assert prose.plain("Waves *now* with ``code``", "rst") == "Waves now with code"
    assert prose.plain("Waves *now*", "markdown") == "Waves *now*"


# --- rendering: Markdown and the sanitiser --------------------------------------------


@pytest.mark.parametrize("markdown", [
    "[x](jav&#x61;script:alert(1))",
    "[x](&#106;avascript:alert(1))",
    "[x](java&#09;script:alert(1))",
    "[x](javascript&colon;alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "[x][ref]\n\n[ref]: javascript:alert(1)",
    "![x](javascript:alert(1))",
    "<a href=\"javascript:alert(1)\">x</a>",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
])
def test_markdown_never_leaves_a_script_link(markdown: str) -> None:
    html = prose.render(markdown, "markdown")
    for url in urls(html):  # what the browser gets, entities decoded
        assert re.match(r"(https?:|mailto:|[^:]*$)", url), (markdown, url)
    assert "<script" not in html


def test_remote_image_in_markdown_keeps_its_paragraph() -> None:
    html = prose.render("Our ![logo](https://example.org/logo.png) is **here**, and more.", "markdown")
    assert "<img" not in html
    assert '<a href="https://example.org/logo.png" rel="noopener noreferrer">logo</a>' in html
    assert "is <strong>here</strong>, and more." in html


def test_local_image_in_markdown_is_kept() -> None:
    html = prose.render("![the plot](plot.png)", "markdown")
    assert '<img src="plot.png" alt="the plot">' in html


def test_math_markup_cannot_smuggle_scripts() -> None:
    payload = "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)></style></mglyph></table></mtext></math>"
    from site_builder.site.safety.html import clean_html

    cleaned = clean_html(payload)
    assert "onerror" not in cleaned and "<style" not in cleaned and "<mglyph" not in cleaned


# --- whole builds: the page head, folded docstring, wording -----------------------------


def _build(project: Path, pyproject: str = "") -> str:
    write_demo(project, "waves", GALLERY)
    if pyproject:
        (project / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    result = run_cli("build", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "docutils" not in result.stderr and "ERROR/" not in result.stderr and "WARNING/" not in result.stderr
    return (project / "build" / "waves" / "index.html").read_text(encoding="utf-8")


def test_gallery_script_page_reads_without_raw_rest(project: Path) -> None:
    page = _build(project)
    assert "<title>" + project.name + " · Waves now</title>" in page
    assert '<h1 data-pagefind-meta="title:Waves now">Waves now</h1>' in page
    intro = page[page.index("<h1"):page.index("The script, block by block")]
    assert '<span class="docutils literal">sin()</span>' in intro and "the intro" in intro
    # what shows with the docstring folded (as the page opens)
    text = visible_text(html.unescape(re.sub(r"<details.*?</details>", "", page, flags=re.DOTALL)))
    for raw in ("example-waves", "=====", ":func:", ":ref:", "``", ".. tags", "admonition::", "::",
                "sphinx_gallery_thumbnail_number", "# First step"):
        assert raw not in text, raw
    # prose cells, no empty code cell, the old separator's prose
    assert '<h3>First step</h3>' in page and "The old separator still starts a cell." in page
    assert page.count('class="cell"') == 3  # setup, block-1, block-2
    assert "References" in page and "math.sin()" in text
    index = (project / "build" / "index.html").read_text(encoding="utf-8")
    assert '<a href="waves/index.html">Waves now</a>' in index
    assert "Plots sin with sin() and matplotlib.figure.Figure." in index


def test_setup_cell_folds_the_docstring(project: Path) -> None:
    page = _build(project)
    setup = page[page.index('<section id="setup"'):page.index('<section id="block-1"')]
    assert '<details class="docstring-fold"><summary>docstring, 11 lines: shown above</summary>' in setup
    folded = setup[setup.index("<details"):setup.index("</details>")]
    assert "Waves" in folded and "import" not in folded
    after = setup[setup.index("</details>"):]
    assert '<span class="kn">import</span>' in after and 'linenos">12</span>' in after
    assert "sphinx_gallery" not in setup
    # the notebook and the download still carry the whole script
    assert (project / "build" / "waves" / "waves.py").read_text() == GALLERY


def test_neutral_wording_by_default(project: Path) -> None:
    write_demo(project, "plain", '"""plain.py — prints a number."""\n# %% B-a\nprint(1)\n')
    (project / "pyproject.toml").write_text('[project]\nname = "my-examples"\n', encoding="utf-8")
    result = run_cli("build", cwd=project)
    assert result.returncode == 0, result.stderr
    pages = [(project / "build" / p).read_text(encoding="utf-8") for p in ("index.html", "plain/index.html")]
    for page in pages:
        for word in ("dictionary", "Dictionary", "Python demo", "companion", "one per entry"):
            assert word not in page, word
        assert "<title>my-examples" in page and 'placeholder="Search"' in page
    assert "<h1 data-pagefind-meta=\"title:plain\">plain</h1>" in pages[1]
    assert "1 script. Each page shows a script block by block" in pages[0]


def test_wording_comes_from_the_settings(project: Path) -> None:
    page = _build(project, '''[tool.site_builder]
title = "Glossary"
entry_heading = "{name}: worked example"
entry_intro = "Companion of the entry {entry}, as printed."
entry_url = "https://example.org/glossary/{name}/"
search_placeholder = "Search the glossary"
index_intro = "{count} worked examples."
prose = "markdown"
''')
    assert "<h1 data-pagefind-meta=\"title:waves\">waves: worked example</h1>" not in page  # a reST title wins
    assert 'placeholder="Search the glossary"' in page
    assert ('<p class="summary">Companion of the entry <a href="https://example.org/glossary/waves/">waves</a>, '
            "as printed.</p>") in page
    index = (project / "build" / "index.html").read_text(encoding="utf-8")
    assert "1 worked examples." in index and "<title>Glossary</title>" in index
    # prose = "markdown": the comment prose is read as Markdown (its "::" stays text)
    assert "Compute <em>values</em>::" in page


def test_prose_setting_per_entry_and_bad_values(project: Path) -> None:
    write_demo(project, "waves", GALLERY)
    (project / "pyproject.toml").write_text('[tool.site_builder]\nprose = "restructured"\n', encoding="utf-8")
    result = run_cli("build", cwd=project)
    assert result.returncode == 2 and "prose must be one of 'auto', 'markdown', 'rst'" in result.stderr
    (project / "pyproject.toml").write_text('[tool.site_builder]\nentry_url = "javascript:alert(1)"\n')
    result = run_cli("build", cwd=project)
    assert result.returncode == 2 and "entry_url must be an http(s) URL" in result.stderr
    (project / "pyproject.toml").write_text('[tool.site_builder.entries.waves]\nprose = "markdown"\n')
    result = run_cli("build", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "Compute <em>values</em>::" in (project / "build" / "waves" / "index.html").read_text()


def test_unresolved_rst_markup_shows_as_its_text() -> None:
    html = prose.render("- `Filled markers`_ (a section of another cell), |nosub|, a note [1]_, "
                        "`anonymous`__ and *unclosed emphasis", "rst")
    text = visible_text(html)
    assert "Filled markers" in text and "nosub" in text and "anonymous" in text and "unclosed emphasis" in text
    for raw in ("`", "_ ", "|", "[1]", "*"):
        assert raw not in text, raw


def test_indented_gallery_setting_is_read_and_hidden(tmp_path: Path) -> None:
    source = ('"""\nTwo figures\n===========\n\nThe second one is the thumbnail.\n"""\n'
              "def main():\n    x = 1\n    # sphinx_gallery_thumbnail_number = -1\n\n    return x\n\n\nmain()\n")
    script = run(source)
    assert script.thumbnail_number == -1 and script.gallery_settings == {"thumbnail_number": "-1"}
    write_demo(tmp_path, "two", source)
    result = run_cli("build", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "build" / "two" / "index.html").read_text(encoding="utf-8")
    assert "sphinx_gallery" not in page and 'linenos">11</span>' in page and 'linenos">9</span>' not in page


def test_directives_before_the_title_do_not_hide_it() -> None:
    # Sphinx-Gallery scripts put `.. redirect-from::` and labels above the title.
    doc = ('\n.. redirect-from:: /gallery/old/name\n    /gallery/older/name\n\n.. _new-label:\n\n'
           '==========\nPie charts\n==========\n\nPlot a pie chart.\n')
    head = rst_head(doc)
    assert head is not None and head.title == "Pie charts" and head.summary == "Plot a pie chart."
