"""Quarto documents (.qmd) are entries: their front matter, ```{python} cells with #| options over
the document's execute: defaults, Pandoc's divs (callouts, tabsets), spans and listings, the
downloads (the .qmd byte for byte, a notebook, a script). One shared build (module scope)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from site_builder.errors import ParseError
from site_builder.source.blocks import parse
from tests.conftest import build_keeping_warnings, run_cli
from tests.page_reader import article_text as visible

DOCUMENT = '''---
title: "Gradient descent, by hand"
subtitle: A worked example
author:
  - name: Ada Lovelace
    affiliation: Analytical Engines
  - name: {given: Alan, family: Turing}
  - Grace Hopper
date: 2024-03-05
description: Steps down a parabola.
abstract: |
  We walk **down** a parabola.
execute:
  echo: false
  warning: false
jupyter: python3
---

## Setup {#sec-setup}

We start in @sec-setup and plot @fig-path.

```{python}
#| echo: true
import warnings
x = 3.0
warnings.warn("a warning the document hides")
print(f"start at {x}")
```

```{python}
#| label: fig-path
#| fig-cap: "The path down"
#| fig-width: 4
#| fig-height: 2
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
fig = plt.figure()
print([float(v) for v in fig.get_size_inches()])
plt.plot([3, 1.8, 1.08])
plt.show()
```

```{python}
#| fig-cap: "Both sides"
#| fig-subcap:
#|   - "Left"
#|   - "Right"
#| layout-ncol: 2
for side in (1, -1):
    plt.figure()
    plt.plot([0, side])
    plt.show()
```

```{python}
#| include: false
print("never on the page")
```

```{python}
#| eval: false
raise SystemExit("never run")
```

```{.python}
print("a listing, not a cell")
```

```bash
echo "a listing too"
```

::: {.callout-note}
A plain note.
:::

::: {.callout-tip collapse="true"}
## A folded tip

Folded text.
:::

::: {.callout-warning title="Careful" collapse="false" appearance="minimal"}
Open text.
:::

::: {.panel-tabset group="language"}
## Python

Python panel.

## Julia

Julia panel.
:::

::: {#a-div .keep-me style="color: red"}
A div with [small caps]{.smallcaps style="color: red"} inside.
:::
'''

OTHER = '''---
title: Other
execute:
  echo: false
---

```{python}
print("code hidden by the document")
```

```{python}
#| echo: true
print("code shown by the cell")
```
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("quarto")
    (project / "demos").mkdir()
    (project / "demos" / "descent.qmd").write_bytes(DOCUMENT.encode("utf-8"))
    (project / "demos" / "other.qmd").write_text(OTHER, encoding="utf-8")
    return build_keeping_warnings(project)


def page(project: Path, name: str) -> str:
    return (project / "build" / name / "index.html").read_text(encoding="utf-8")


def test_the_front_matter_is_the_title_block(project: Path) -> None:
    html = page(project, "descent")
    text = visible(html)
    assert "<h1" in html and "Gradient descent, by hand" in text and "A worked example" in text
    assert "Ada Lovelace, Alan Turing and Grace Hopper" in text and "March 5, 2024" in text
    assert "<strong>down</strong>" in html  # the abstract, as Markdown
    assert 'content="Steps down a parabola."' in html  # the description
    assert "title:" not in text and "execute:" not in text  # no front matter shown


def test_cells_follow_the_document_defaults_unless_they_say_otherwise(project: Path) -> None:
    html = page(project, "descent")
    text = visible(html)
    assert "start at 3.0" in text and "x = 3.0" in text  # echo: true on the cell
    assert "UserWarning" not in text  # warning: false
    assert "plt.plot" not in text  # echo: false from the document
    assert "never on the page" not in text  # include: false
    assert "Not run (#| eval: false)" in text and 'raise SystemExit("never run")' not in text
    other = visible(page(project, "other"))
    assert 'print ( "code shown' in other  # the code, highlighted
    assert 'print("code hidden' not in other and "code hidden by the document" in other


def test_figures_sized_captioned_and_side_by_side(project: Path) -> None:
    html = page(project, "descent")
    assert "[4.0, 2.0]" in visible(html)  # fig-width, fig-height
    assert 'id="fig-path"' in html and "Figure 1:</span> The path down" in html
    assert 'href="#fig-path"' in html  # @fig-path
    assert "figure-layout figure-columns-2" in html
    assert "(a) Left" in html and "(b) Right" in html and "Figure 2:</span> Both sides" in html


def test_listings_are_highlighted_and_not_run(project: Path) -> None:
    html = page(project, "descent")
    assert "a listing, not a cell" in visible(html) and 'class="highlight"' in html
    assert "{.python}" not in visible(html) and "```" not in visible(html)


def test_callouts_folds_tabsets_divs_and_spans(project: Path) -> None:
    html = page(project, "descent")
    text = visible(html)
    assert '<aside class="admonition callout note callout-note' in html and "Note" in text
    assert '<details class="admonition callout tip callout-tip' in html
    assert '<summary class="admonition-title">A folded tip</summary>' in html
    assert "callout-appearance-minimal callout-fold\" open=\"\">" in html and "Careful" in text
    assert "tabset-group-language" in html and "Python panel." in text and "Julia panel." in text
    assert '<span class="smallcaps">small caps</span>' in html and "keep-me" in html
    assert "style=" not in html.split("<article", 1)[1]
    for raw in (":::", "{.callout", "{.smallcaps", "panel-tabset", "#| label", "{python}"):
        assert raw not in text, raw


def test_downloads_are_the_document_a_notebook_and_a_script(project: Path) -> None:
    folder = project / "build" / "descent"
    assert (folder / "descent.qmd").read_bytes() == DOCUMENT.encode("utf-8")
    notebook = json.loads((folder / "descent.ipynb").read_text(encoding="utf-8"))
    code = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]
    assert any("#| label: fig-path" in c for c in code) and any(c.get("outputs") for c in notebook["cells"])
    script = (folder / "descent.py").read_text(encoding="utf-8")
    assert "# %%" in script and "#| echo: true" in script
    assert 'href="descent.qmd" download' in page(project, "descent")


def test_the_index_and_search_list_documents(project: Path) -> None:
    index = (project / "build" / "index.html").read_text(encoding="utf-8")
    assert "Gradient descent, by hand" in index and 'href="descent/index.html"' in index


def test_no_warnings_for_what_quarto_accepts(project: Path) -> None:
    assert (project / "warnings.txt").read_text() == ""


@pytest.mark.parametrize("language", ["r", "julia", "ojs"])
def test_a_cell_of_another_language_is_an_error_naming_the_line(language: str) -> None:
    source = f"---\ntitle: T\n---\n\nText.\n\n```{{{language}}}\n1 + 1\n```\n"
    with pytest.raises(ParseError, match=rf"doc: demos/doc.qmd:7: a \{{{language}\}} cell"):
        parse(source, "demos/doc.qmd", "doc")


def test_knitr_and_other_kernels_are_errors() -> None:
    with pytest.raises(ParseError, match="engine: knitr"):
        parse("---\nengine: knitr\n---\n\nText.\n", "demos/doc.qmd", "doc")
    with pytest.raises(ParseError, match="julia-1.9"):
        parse("---\njupyter: julia-1.9\n---\n\nText.\n", "demos/doc.qmd", "doc")


def test_document_options_are_each_cells_and_lines_are_the_files() -> None:
    source = textwrap.dedent('''\
        ---
        execute:
          eval: false
          output: false
        format:
          html:
            code-fold: true
        ---

        ```{python}
        #| eval: true
        x = 1
        ```
        ''')
    script = parse(source, "demos/doc.qmd", "doc")
    (cell,) = script.code_cells
    assert cell.first_line == 12 and cell.marker_line == 10 and cell.text == "x = 1"
    assert dict(cell.options) == {"code-fold": "true", "eval": "true", "output": "false"}
    assert script.title == "Doc"


def test_a_failed_build_names_the_document_and_line(tmp_path: Path) -> None:
    (tmp_path / "demos").mkdir()
    (tmp_path / "demos" / "bad.qmd").write_text("# Bad\n\n```{r}\n1\n```\n", encoding="utf-8")
    done = run_cli("build", cwd=tmp_path)
    assert done.returncode != 0
    assert "bad: demos/bad.qmd:3: a {r} cell" in done.stderr
