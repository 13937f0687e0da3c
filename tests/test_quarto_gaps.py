"""Quarto constructs the first pass left out: one numbering of the prose's and the cells' figures,
tbl-colwidths, local videos as players, labelled display math over several lines, grid tables,
inline raw HTML, image attribute blocks, messages naming the included file's line. One shared
build (module scope)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import build_keeping_warnings, run_cli
from tests.page_reader import article_text as visible

DOCUMENT = '''---
title: Quarto's gaps
---

![The first figure](chart.svg){#fig-prose}

```{python}
#| label: fig-cell
#| fig-cap: The cell figure
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.plot([1, 2])
plt.show()
```

![Another prose figure](chart.svg){#fig-after}

See @fig-prose, @fig-cell and @fig-after.

{{< include _part.qmd >}}

{{< unknown-after-the-include >}}

```{python}
#| label: tbl-own
#| tbl-cap: Its own widths
#| tbl-colwidths: [20, 80]
from IPython.display import Markdown
Markdown("| a | b |\\n|---|---|\\n| 1 | 2 |")
```

| name | what it is |
|------|------------|
| a    | a letter   |

: Widths of a prose table {#tbl-prose tbl-colwidths="[30,70]"}

{{< video clip.mp4 title="A short clip" width=320 >}}

See @eq-sum and @eq-pair.

$$
a + b
  = c
$$ {#eq-sum}

$$
x = 1 \\\\
y = 2
$$ {#eq-pair}

+---------------+----------:+
| Fruit         | Price     |
+===============+===========+
| Bananas       | 1.34      |
| *yellow*      |           |
+---------------+-----------+
| Oranges       | 2.10      |
+---------------+-----------+

: Fruit in a grid {#tbl-grid}

Inline `<b class="raw-inline">bold</b>`{=html} and `\\newline`{=latex} gone.

![](chart.svg){.border fig-alt="A bordered chart" width=50%}

{{< video https://www.youtube.com/embed/wo9vZccmqwc >}}

```{=html}
<video controls src="clip.mp4"></video>
```
'''

PART = '''Included prose.

{{< unknown-in-the-part >}}

```{python}
#| not-an-option: 1
print("from the part")
```
'''

WIDTHS = '''---
title: Widths for every table
format:
  html:
    tbl-colwidths: [40, 60]
---

```{python}
from IPython.display import Markdown
Markdown("| a | b |\\n|---|---|\\n| 1 | 2 |")
```

```{python}
#| tbl-colwidths: auto
Markdown("| c | d |\\n|---|---|\\n| 3 | 4 |")
```

| prose | without caption |
|---|---|
| 5 | 6 |

| prose | with its own |
|---|---|
| 7 | 8 |

: Its own widths {tbl-colwidths="[10,90]"}
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("gaps")
    demos = project / "demos"
    demos.mkdir()
    (demos / "doc.qmd").write_text(DOCUMENT, encoding="utf-8")
    (demos / "widths.qmd").write_text(WIDTHS, encoding="utf-8")
    (demos / "_part.qmd").write_text(PART, encoding="utf-8")
    (demos / "docs" / "download" / "changelog").mkdir(parents=True)  # a Quarto website's depth
    (demos / "docs" / "download" / "changelog" / "deep.qmd").write_text("---\ntitle: Deep\n---\n\nDeep.\n",
                                                                        encoding="utf-8")
    (demos / "clip.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom")
    (demos / "chart.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"></svg>',
                                     encoding="utf-8")
    return build_keeping_warnings(project)


@pytest.fixture(scope="module")
def html(project: Path) -> str:
    return (project / "build" / "doc" / "index.html").read_text(encoding="utf-8")


def test_prose_and_cell_figures_are_one_sequence(html: str) -> None:
    text = visible(html)
    assert "Figure 1: The first figure" in text and "Figure 2: The cell figure" in text
    assert "Figure 3: Another prose figure" in text
    for label, number in (("fig-prose", 1), ("fig-cell", 2), ("fig-after", 3)):
        assert f'href="#{label}" rel="noopener noreferrer">Figure {number}</a>' in html


def test_tbl_colwidths_of_a_cell_a_document_and_a_prose_table(project: Path, html: str) -> None:
    css = (project / "build" / "doc" / "_site_builder" / "values.css").read_text(encoding="utf-8")
    assert ".value-html table tr > :nth-child(2) { width: 80%; }" in css
    assert '<colgroup>\n<col width="30%">\n<col width="70%">\n</colgroup>' in html
    assert "Table 2: Widths of a prose table" in visible(html)  # the cells' tables and the prose's: one sequence
    widths = (project / "build" / "widths" / "_site_builder" / "values.css").read_text(encoding="utf-8")
    assert '[id="block-1"] .value-html table tr > :nth-child(1) { width: 40%; }' in widths
    assert "block-2" not in widths  # auto: the browser's widths
    page = (project / "build" / "widths" / "index.html").read_text(encoding="utf-8")
    assert page.count('<col width="40%">') == 1 and '<col width="10%">\n<col width="90%">' in page  # prose tables too
    assert "'#| tbl-colwidths" not in (project / "warnings.txt").read_text(encoding="utf-8")


def test_a_local_video_is_a_player_a_remote_one_a_link(project: Path, html: str) -> None:
    assert ('<video controls="" preload="metadata" src="_images/clip.mp4" aria-label="Video: A short clip" '
            'width="320"><a href="_images/clip.mp4" rel="noopener noreferrer">Video: A short clip</a></video>') in html
    assert (project / "build" / "doc" / "_images" / "clip.mp4").is_file()
    assert '<a class="video-link" href="https://www.youtube.com/embed/wo9vZccmqwc"' in html
    assert "youtube.com/embed/wo9vZccmqwc\"" not in html.replace('href="https://www.youtube.com/embed/wo9vZccmqwc"', "")
    assert html.count("<video") == 1  # raw HTML's <video> is no player: only the shortcode's is


def test_labelled_display_math_over_several_lines_is_numbered(html: str) -> None:
    assert 'id="eq-sum"' in html and 'id="eq-pair"' in html
    assert 'href="#eq-sum" rel="noopener noreferrer">(1)</a>' in html
    assert 'href="#eq-pair" rel="noopener noreferrer">(2)</a>' in html
    assert "$$" not in visible(html) and "{#eq-" not in visible(html)


def test_a_grid_table_is_a_table(html: str) -> None:
    assert "<th>Fruit</th>" in html and "<td>Bananas\n<em>yellow</em></td>" in html
    assert 'id="tbl-grid"' in html and "Table 3: Fruit in a grid" in visible(html)
    assert "+====" not in html and "+----" not in html


def test_inline_raw_html_renders_sanitised_and_image_attributes_apply(html: str) -> None:
    assert '<b class="raw-inline">bold</b>' in html and "{=html}" not in visible(html)
    assert "newline" not in visible(html) and "{=latex}" not in visible(html)
    assert '<img src="_images/chart.svg" alt="A bordered chart" width="50%" class="border">' in html
    assert "fig-alt" not in html


def test_messages_name_the_included_files_line_and_the_documents_own(project: Path) -> None:
    warnings = (project / "warnings.txt").read_text(encoding="utf-8")
    assert "demos/_part.qmd:3: the shortcode {{< unknown-in-the-part >}}" in warnings
    assert "(demos/_part.qmd:5): unknown cell option '#| not-an-option'" in warnings
    line = DOCUMENT.split("\n").index("{{< unknown-after-the-include >}}") + 1
    assert f"demos/doc.qmd:{line}: the shortcode {{{{< unknown-after-the-include >}}}}" in warnings


def test_an_error_in_an_included_cell_or_expression_names_its_file_and_line(tmp_path: Path) -> None:
    demos = tmp_path / "demos"
    demos.mkdir()
    (demos / "doc.qmd").write_text("---\ntitle: T\n---\n\n{{< include _raising.qmd >}}\n", encoding="utf-8")
    (demos / "_raising.qmd").write_text("Part.\n\n```{python}\nx = 1\nraise ValueError('in the part')\n```\n",
                                        encoding="utf-8")
    (demos / "quoting.qmd").write_text("---\ntitle: Q\n---\n\nAbove.\n\n{{< include _quoted.qmd >}}\n", encoding="utf-8")
    (demos / "_quoted.qmd").write_text("```{python}\nx = 1\n```\n\nIt is `{python} x / 0`.\n", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("[tool.site_builder]\nstrict_expressions = true\n", encoding="utf-8")
    done = run_cli("build", cwd=tmp_path)
    assert done.returncode != 0
    assert "block block-1 raised ValueError at demos/_raising.qmd:5: in the part" in done.stderr
    failed = visible((tmp_path / "build.failed" / "doc" / "index.html").read_text(encoding="utf-8"))
    assert 'File "demos/_raising.qmd", line 5' in failed  # the page's traceback names it too
    assert "quoting: the expression 'x / 0' (demos/_quoted.qmd:5) raised ZeroDivisionError" in done.stderr


def test_sections_nest_as_deep_as_a_quarto_websites_folders(project: Path) -> None:
    page = (project / "build" / "docs" / "download" / "changelog" / "deep" / "index.html").read_text(encoding="utf-8")
    assert 'href="../../../../static/site.css"' in page
    home = (project / "build" / "index.html").read_text(encoding="utf-8")
    assert 'href="docs/download/changelog/deep/index.html">Deep</a>' in home


def test_a_grid_table_docutils_cannot_read_stays_text() -> None:
    from site_builder.site.prose.html import render

    misaligned = ("+------+------+\n| a    | b    |\n+======+======+\n| x    | y     |\n"
                  "|      | z    |\n+------+------+\n| p    | q    |\n+------+------+\n")  # docutils asserts
    html = render(misaligned, "markdown")
    assert "<table" not in html and "a" in html
