"""A notebook's page reads as the document it comes from: its real title whatever precedes it,
its prose and cells in order, no script framing, no invented block names, figures without
file-name captions; a script's page keeps its framing. One shared build (module scope)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
import pytest

from site_builder.source.parsed import Cell
from site_builder.source.markdown_head import document_head, readable_name
from tests.conftest import MYST_FRONT_MATTER, build_site, run_cli, write_demo
from tests.page_reader import article_text, page

NAV = "<!--NAVIGATION-->\n< [Previous](01.00-intro.ipynb) | [Contents](index.ipynb) >"
MYST = MYST_FRONT_MATTER + """
```{raw} html
<div class="header"><img src="https://example.org/logo.svg"></div>
```

(lecture-top)=
```{index} single: Matplotlib
```

# {index}`Matplotlib <single: Matplotlib>` -- a "lecture"

The lecture's summary, its first paragraph.

## Plotting

```{code-cell} ipython3
:name: the-answer
answer = 42
print(answer)
```

Text with ~~struck~~ words and https://example.org.
"""
HOUSE = '''"""
house.py — a house-style demo.

Purpose
-------
Checks that "quotes" -- and dashes -- are typeset.

Blocks
------
[B-one]   prints one
"""

# %% B-one
print(1)
'''


def plotting_notebook() -> nbformat.NotebookNode:
    """A notebook in the Python Data Science Handbook's style: navigation cells, a title, figures
    (test_browser_document opens it too)."""
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    figure = "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()"
    captioned = code("plt.plot([1, 4, 9])\nplt.show()")
    captioned.metadata["mystnb"] = {"figure": {"caption": "Squares, growing", "name": "fig-squares"}}
    return nbformat.v4.new_notebook(cells=[
        md(NAV),
        md("![The book's cover](cover.png)"),
        md("# Plotting -- the \"basics\"\n\nThis notebook draws lines.\n\n## A first line\n\n- level one\n"
           "  - level two\n\n1. step\n   * detail"),
        code(figure),
        md("## Captioned\n\n| x | y |\n|:--|--:|\n| 1 | 1 |\n| 2 | 4 |\n\n- [x] drawn"),
        captioned,
    ])


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("document")
    demos = project / "demos"
    demos.mkdir()
    nbformat.write(plotting_notebook(), demos / "03.01-Plotting.ipynb")
    (demos / "lecture.md").write_text(MYST, encoding="utf-8")
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]),
                   demos / "my_first-notebook.ipynb")
    write_demo(project, "house", HOUSE)
    build_site(project)
    return project


# ---------------------------------------------------------------- titles


def _head(*texts: str, code_first: bool = False) -> tuple[str, str]:
    cells = [Cell("code", "block-1", "x = 1", 1, 1)] * code_first + [Cell("markdown", "", t, 0, None) for t in texts]
    head = document_head(cells, "demos/01.02-the_title-here.ipynb")
    return head.title, head.summary


@pytest.mark.parametrize("preamble", [
    "```{raw} html\n<div>header</div>\n```",  # a raw block
    "(a-label)=",  # a target
    "```{index} single: thing\n```",  # an index directive
    "```{note}\nA note first.\n```",  # another directive
    "<!-- a comment -->",  # an HTML comment
    "![logo](logo.png)",  # an image
    "<img src='logo.png'>",  # raw HTML
    "% a MyST comment\n+++",  # MyST comment and break
])
def test_the_title_is_the_first_h1_whatever_precedes_it(preamble: str) -> None:
    assert _head(f"{preamble}\n\n# The *real* title\n\nIts summary.") == ("The real title", "Its summary.")


def test_title_behind_navigation_cells_with_a_role_and_fallbacks() -> None:
    assert _head(NAV, "![cover](c.png)", "# {index}`Matplotlib <single: Matplotlib>` basics\n\nFirst.") == (
        "Matplotlib basics", "First.")
    assert _head("Intro text.\n\n## Only a section") == ("Only a section", "Intro text.")
    assert _head("# Late title\n\nAfter code.", code_first=True) == ("Late title", "After code.")
    assert _head("No heading at all.") == ("01.02 the title here", "No heading at all.")
    assert _head("---\ntitle: From the front matter\n---\n\n# Heading\n\nText.")[0] == "From the front matter"
    assert readable_name("demos/my_first-notebook.ipynb") == "My first notebook"


def test_pages_have_their_real_titles_never_their_path(project: Path) -> None:
    titles = {name: re.search(r"<h1[^>]*>([^<]*)</h1>", page(project, name)).group(1)
              for name in ("03-01-plotting", "lecture", "my_first-notebook")}
    assert titles == {"03-01-plotting": "Plotting – the “basics”", "lecture": "Matplotlib – a “lecture”",
                      "my_first-notebook": "My first notebook"}
    index = (project / "build" / "index.html").read_text(encoding="utf-8")
    assert "The lecture’s summary, its first paragraph." in index


# ---------------------------------------------------------------- the document


def test_a_notebook_page_is_its_document(project: Path) -> None:
    html = page(project, "03-01-plotting")
    text = article_text(html)
    assert "The script, block by block" not in html and "One cell per block" not in html
    assert "block-" not in text  # no invented names, in the cells or "On this page"
    toc = html.split('<nav class="toc toc-side"')[1].split("</nav>")[0]
    assert "block-1" not in toc  # the unnamed cell is not listed; the captioned figure is, by its name
    assert '<a href="#fig-squares"><span class="toc-name">fig-squares</span>' in toc
    # title, then its opening prose, then the cells: how to run it comes at the end
    assert text.index("Plotting – the “basics”") < text.index("This notebook draws lines.") < text.index(
        "A first line") < text.index("Captioned") < text.index("Open 03-01-plotting.ipynb in Jupyter")
    assert text.count("Plotting – the “basics”") == 1  # the heading became the page's <h1>
    assert "Previous" in text and "NAVIGATION" not in text  # the navigation cell's comment vanished
    toc = re.findall(r'<span class="toc-section">([^<]+)</span>', html)
    assert toc == ["A first line", "Captioned"] * 2  # the side list and the top one


def test_figures_carry_their_caption_or_none_with_the_file_as_tooltip(project: Path) -> None:
    html = page(project, "03-01-plotting")
    assert not re.search(r"<figcaption>[^<]*\.png \(", html)  # no "block-1-figure-1.png (12 kB)"
    tooltips = re.findall(r'<a href="([^"]+\.png)" title="([^"]+)"><img', html)
    assert len(tooltips) == 2 and all(re.fullmatch(r"\S+\.png \(\d[\d.]* [kM]?B\)", t) for _h, t in tooltips)
    assert '<span class="figure-number">Figure 1:</span> Squares, growing</figcaption>' in html


def test_a_cell_with_a_name_of_its_own_is_named_and_listed(project: Path) -> None:
    html = page(project, "lecture")
    assert '<section id="label-the-answer" class="cell"' in html  # an id of the labels' own (label_ids)
    assert '<h3><a class="permalink" href="#label-the-answer">the-answer</a></h3>' in html
    assert '<a href="#label-the-answer"><span class="toc-name">the-answer</span>' in html
    assert "header" not in article_text(html) and "lecture-top" not in article_text(html)
    assert "<s>struck</s>" in html and '<a href="https://example.org" rel="noopener noreferrer">' in html


def test_commonmark_lists_tables_and_tasks_on_the_page(project: Path) -> None:
    html = re.sub(r"\s*\n\s*", "", page(project, "03-01-plotting"))
    assert "<ul><li>level one<ul><li>level two</li></ul></li></ul>" in html
    assert "<ol><li>step<ul><li>detail</li></ul></li></ol>" in html
    assert '<th align="left">x</th><th align="right">y</th>' in html
    assert '<span class="task-box task-done" title="done">☑</span> drawn' in html


def test_a_script_page_keeps_its_framing(project: Path) -> None:
    html = page(project, "house")
    assert "<h2>The script, block by block</h2>" in html
    assert '<h3><a class="permalink" href="#B-one">B-one</a></h3>' in html
    assert "Checks that “quotes” – and dashes – are typeset." in html


def test_typography_can_be_turned_off(project: Path, tmp_path: Path) -> None:
    copy = tmp_path / "project"
    shutil.copytree(project, copy, symlinks=True)
    (copy / "pyproject.toml").write_text("[tool.site_builder]\ntypography = false\n", encoding="utf-8")
    done = run_cli("build", cwd=copy)  # the records are reused: nothing runs again
    assert done.returncode == 0, done.stderr
    assert '<h1 data-pagefind-meta="title:Plotting -- the &#34;basics&#34;">' in page(copy, "03-01-plotting")
    assert 'Checks that "quotes" -- and dashes -- are typeset.' in page(copy, "house")
    (copy / "pyproject.toml").write_text('[tool.site_builder]\ntypography = "no"\n', encoding="utf-8")
    refused = run_cli("build", cwd=copy)
    assert refused.returncode != 0 and "typography must be true or false" in refused.stderr
