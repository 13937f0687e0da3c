"""Sphinx-Gallery leftovers and MyST prose, built as a user builds: ignored lines, string text
blocks, Markdown notebooks, "On this page" headings; a MyST page in a real browser."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from site_builder.source.blocks import parse
from tests.browser_support import DESKTOP, axe_violations, describe_violations, serious_violations, serve_site
from tests.conftest import MYST_FRONT_MATTER, build_site, shared_folder, write_demo
from tests.page_reader import page, visible
from tests.scheme_looks import SchemeLooks
from tests.test_prose_myst import assert_no_raw_syntax

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 32

GALLERY = '''
"""
Old-style example
=================

The intro, with *emphasis* and ``code``.
"""
import math

x = 1
# sphinx_gallery_start_ignore
print("printed by hidden code")
# sphinx_gallery_end_ignore
print("shown", x)

"""
A string text block
-------------------

Prose in a **string**, see `the docs <https://example.org/docs>`_ and :math:`a^2`.

.. note:: An aside in the string.

- first item
- second item
"""

y = math.sqrt(4)
print(y)

# %%
# Second section
# --------------
#
# More text, with a list:
#
# 1. one
# 2. two

z = 3
print(z)
'''

MYST = '''
"""myst.py — MyST prose in house-style markdown cells.

Purpose
-------
MyST constructs in Markdown cells.
"""

# %% [markdown]
# (start)=
# ## Getting started
#
# ```{note}
# A note with $x^2$.
# ```
#
# ```{exercise} Squares
# :label: ex-sq
# What is $3^2$?
# ```
#
# ```{solution} ex-sq
# It is 9.
# ```
#
# ```{figure} plot.png
# :alt: a small plot
# The plot.
# ```
#
# See {ref}`start` and {ref}`ex-sq`.

# %% B-square
print(3 ** 2)

# %% [markdown]
# ## Checking
#
# ```{prf:theorem} Nine
# $3^2 = 9$.
# ```

# %% B-check
assert 3 ** 2 == 9
'''


LECTURE = MYST_FRONT_MATTER + """
(lecture-intro)=
# A *small* lecture on {math}`x^2`

This lecture squares numbers, see {ref}`ex-one`.

```{note}
Notes render as asides.
```

```{code-cell} ipython3
print(3 ** 2)
```

## Exercises

```{exercise}
:label: ex-one
Square 4.
```

```{solution-start} ex-one
:class: dropdown
```

```{code-cell} ipython3
print(4 ** 2)
```

```{solution-end}
```
"""


def build_project(project: Path) -> None:
    """This module's project, built in ``project``."""
    write_demo(project, "gallery", GALLERY)
    write_demo(project, "myst", MYST)
    (project / "demos" / "plot.png").write_bytes(PNG)
    (project / "demos" / "lecture.md").write_text(LECTURE, encoding="utf-8")
    build_site(project, timeout=170)


@pytest.fixture(scope="module")
def leftovers_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_folder(tmp_path_factory, "gallery-leftovers", build_project) / "build"


def test_ignored_lines_run_but_are_not_shown(leftovers_site: Path) -> None:
    html = page(leftovers_site, "gallery")
    assert "printed by hidden code" in html  # its output: the lines ran
    assert "sphinx_gallery_start_ignore" not in html and "sphinx_gallery_end_ignore" not in html
    assert not re.search(r'<span class="nb">print</span><span class="p">\(</span><span class="s2">&quot;printed', html)
    notebook = json.loads((leftovers_site / "gallery" / "gallery.ipynb").read_text())
    code = "".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code")
    assert "sphinx_gallery" not in code and 'print("shown", x)' in code
    assert b"sphinx_gallery_start_ignore" in (leftovers_site / "gallery" / "gallery.py").read_bytes()


def test_unmatched_ignore_marker_is_a_warning() -> None:
    script = parse("# %%\nx = 1\n# sphinx_gallery_start_ignore\ny = 2\n", "demos/x.py", "x")
    assert any("sphinx_gallery_start_ignore" in w and "block-1" in w for w in script.warnings)


def test_string_literal_text_blocks_are_prose(leftovers_site: Path) -> None:
    script = parse(GALLERY.lstrip("\n"), "demos/gallery.py", "gallery")
    kinds = [(c.kind, c.name) for c in script.cells]
    assert kinds == [("code", "setup"), ("markdown", ""), ("code", "block-1"), ("markdown", ""),
                     ("code", "block-2")]
    assert script.cells[1].text.startswith("A string text block\n---")
    assert script.cells[2].text == "y = math.sqrt(4)\nprint(y)" and script.cells[2].first_line == 27
    html = page(leftovers_site, "gallery")
    assert "<strong>string</strong>" in html and '<aside class="admonition note">' in html
    assert "&quot;&quot;&quot;" not in html.split("block-1")[1]


def test_notebook_markdown_cells_are_markdown_not_rest(leftovers_site: Path) -> None:
    notebook = json.loads((leftovers_site / "gallery" / "gallery.ipynb").read_text())
    prose = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown"]
    text = "\n\n".join(prose)
    assert prose[0].startswith("# Old-style example\n\nThe intro, with *emphasis* and `code`.")
    assert "## A string text block" in text and "## Second section" in text
    assert "[the docs](https://example.org/docs)" in text and "$a^2$" in text
    assert "> **Note**\n>\n> An aside in the string." in text
    assert "- first item\n- second item" in text and "1. one\n2. two" in text
    for rest in ("=====", "-----", ".. note::", ":math:", "``code``", "`_"):
        assert rest not in text, rest


def test_on_this_page_lists_prose_headings_with_their_blocks(leftovers_site: Path) -> None:
    html = page(leftovers_site, "gallery")
    nav = html[html.index('<nav class="toc toc-side"'):]
    nav = nav[:nav.index("</nav>")]
    sections = re.findall(r'<li class="toc-heading[^"]*"><a href="#([^"]+)"><span class="toc-section">([^<]+)<', nav)
    assert [text for _anchor, text in sections] == ["A string text block", "Second section"]
    for anchor, _text in sections:
        assert f'id="{anchor}"' in html
    second = nav[nav.index("Second section"):]
    assert 'href="#block-2"' in second and 'href="#block-1"' not in second
    first = nav[nav.index("A string text block"):nav.index("Second section")]
    assert 'href="#block-1"' in first
    assert nav.index('href="#setup"') < nav.index("A string text block")
    myst = page(leftovers_site, "myst")
    assert '<a href="#label-start"><span class="toc-section">Getting started</span></a>' in myst
    assert '<span class="toc-section">Checking</span>' in myst


def test_myst_page_shows_no_raw_syntax_and_publishes_its_figure(leftovers_site: Path) -> None:
    html = page(leftovers_site, "myst")
    article = html[html.index("<article"):html.index("</article>")]
    prose = "".join(re.findall(r'<div class="prose">(.*?)</div>\n(?=<section|</article)', article, re.DOTALL))
    assert_no_raw_syntax(prose)
    words = visible(article)
    assert "Exercise 1 (Squares)" in words and "Solution to Exercise 1" in words
    assert "Theorem 1 (Nine)" in words
    assert '<img src="_images/plot.png" alt="a small plot">' in html
    assert (leftovers_site / "myst" / "_images" / "plot.png").read_bytes() == PNG


def test_myst_notebook_title_is_its_first_heading_and_summary_its_first_paragraph(leftovers_site: Path) -> None:
    html = page(leftovers_site, "lecture")
    assert "<title>" in html and "A small lecture on x^2</title>" in html
    assert re.search(r"<h1[^>]*>A small lecture on x\^2</h1>", html)
    assert html.count("A small lecture on") == 3  # title, h1, search meta: no second heading in the prose
    assert '<meta name="description" content="This lecture squares numbers, see ex-one.">' in html
    article = html[html.index("<article"):html.index("</article>")]
    assert_no_raw_syntax(article)
    words = visible(article)
    assert "see Exercise 1." in words and "Solution to Exercise 1" in words
    assert '<aside class="admonition note">' in article
    index = (leftovers_site / "index.html").read_text()
    assert "This lecture squares numbers" in index


def test_a_gated_solution_spanning_cells_folds_the_cells_between(leftovers_site: Path) -> None:
    article = page(leftovers_site, "lecture")
    article = article[article.index("<article"):article.index("</article>")]
    folded = re.search(r'<details class="admonition myst-box solution"><summary class="admonition-title">'
                       r'Solution to Exercise 1</summary>(.*?)</details>', article, re.DOTALL)
    assert folded is not None
    assert '<section id="block-2"' in folded.group(1) and "16\n</pre>" in folded.group(1)
    assert '<section id="block-1"' not in folded.group(1)
    assert article.count("<details") == article.count("</details>")


def test_unbalanced_gates_are_closed_at_the_end_of_the_page() -> None:
    from site_builder.site.prose.markdown.context import PageContext as PageProse
    from site_builder.site.prose.labels import Gate, gate_split
    from site_builder.site.prose.labels import Gates

    parts = gate_split("Before.\n\n```{solution-start} ex\n:class: dropdown\n```\n\nInside.")
    assert parts[0] == "Before.\n" and isinstance(parts[1], Gate) and parts[1].args == "ex"
    assert parts[2].strip() == "Inside."
    assert gate_split("```{solution-start} ex\n```\nboth here\n```{solution-end}\n```") == [
        "```{solution-start} ex\n```\nboth here\n```{solution-end}\n```"]
    gates = Gates(PageProse())
    assert gates.view(Gate(False, "solution", "", {})) is None  # an end nothing opened
    assert gates.view(parts[1]).title == "Solution"
    assert [v.element for v in gates.closing()] == ["details"]


def test_rst_to_markdown_writer() -> None:
    from site_builder.site.downloads.rst_markdown import rst_to_markdown

    text = """Heading
=======

A ``literal``, *emphasis*, **strong**, a `link <https://example.org>`_, :func:`numpy.sum`
and 2*3 stars.

term
   its definition

=====  =====
left   right
=====  =====
1      2
=====  =====

.. code-block:: javascript

   let x = 1;

>>> 1 + 1
2

.. math:: e^{i\\pi} = -1

.. warning:: Careful.

.. image:: https://example.org/x.png
   :alt: remote picture

.. raw:: html

   <script>alert(1)</script>
"""
    md = rst_to_markdown(text, 1)
    assert md.startswith("## Heading\n\nA `literal`, *emphasis*, **strong**, a [link](https://example.org), `numpy.sum()`")
    assert "2\\*3 stars" in md
    assert "- **term**: its definition" in md
    assert "| left | right |\n|---|---|\n| 1 | 2 |" in md
    assert "```javascript\nlet x = 1;\n```" in md and "```pycon\n>>> 1 + 1\n2\n```" in md
    assert "$$\ne^{i\\pi} = -1\n$$" in md
    assert "> **Warning**\n>\n> Careful." in md
    assert "![remote picture](https://example.org/x.png)" in md
    assert "<script" not in md and "alert" not in md


# ---------------------------------------------------------------- in a browser


@pytest.fixture(scope="module")
def leftovers_url(browser: Any, leftovers_site: Path) -> Iterator[str]:
    with serve_site(leftovers_site) as url:
        yield url


def _maths_look(tab: Any, scheme: str) -> tuple[int, list[dict[str, Any]]]:
    """How many formulas the page shows, and its serious axe violations."""
    return tab.locator("math").count(), serious_violations(axe_violations(tab))


def _asides_look(tab: Any, scheme: str) -> tuple[int, list[dict[str, Any]]]:
    """How many headings On this page lists, and the page's serious axe violations."""
    return tab.locator("nav.toc-side .toc-heading").count(), serious_violations(axe_violations(tab))


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_solution_folds_with_the_keyboard_and_the_page_is_accessible(scheme_looks: SchemeLooks, leftovers_url: str,
                                                                      scheme: str) -> None:
    def walk(tab: Any, look: Any) -> None:
        tab.goto(leftovers_url + "myst/index.html")
        solution = tab.locator("details.solution")
        answer = solution.get_by_text("It is 9.")
        assert not answer.is_visible()
        solution.locator("summary").focus()
        tab.keyboard.press("Enter")
        answer.wait_for(state="visible")
        assert solution.evaluate("d => d.open")
        tab.keyboard.press("Space")
        answer.wait_for(state="hidden")
        look(_maths_look)
        solution.locator("summary").click()
        look(_maths_look)
        tab.goto(leftovers_url + "gallery/index.html")  # headings in On this page, reST asides
        look(_asides_look)

    # the looks in both schemes from one walk (the keyboard checked once)
    ((maths, folded), (_, unfolded), (toc_headings, asides)), watch = scheme_looks.walked(
        leftovers_url, scheme, walk, viewport=DESKTOP)
    assert maths >= 3
    for serious in (folded, unfolded, asides):
        assert not serious, describe_violations(serious)
    assert toc_headings == 2
    watch.assert_clean()


def test_solution_opens_without_script(browser: Any, leftovers_url: str) -> None:
    context = browser.new_context(java_script_enabled=False)
    tab = context.new_page()
    try:
        tab.goto(leftovers_url + "myst/index.html")
        tab.locator("details.solution summary").click()
        tab.get_by_text("It is 9.").wait_for(state="visible")
    finally:
        context.close()
