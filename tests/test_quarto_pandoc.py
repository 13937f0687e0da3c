"""Pandoc's Markdown in Quarto documents: heading attributes, table captions, raw blocks,
shortcodes (include, pagebreak, video, kbd; others a warning naming the line), includes inside the
project only. One shared build (module scope)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import build_keeping_warnings, run_cli
from tests.page_reader import article_text as visible

DOCUMENT = '''---
title: Pandoc's Markdown
bibliography: refs.bib
product: {name: Widget, shot: chart.svg, year: 2024}
---

## Intro {.unnumbered}

## Method {#sec-method .unlisted}

See @sec-method, @tbl-sizes and @eq-energy, as [@knuth1984, p. 3] shows.

{{< include _parts/_shared.qmd >}}

| size | count |
|------|-------|
| 1    | 2     |

: Sizes of things {#tbl-sizes}

| a | b |
|---|---|
| 3 | 4 |

: A caption without a label

Term
: Its definition.

| A line block
|    keeps its indent

A footnote.[^note]

[^note]: The note.

$$
E = mc^2
$$ {#eq-energy}

{{< pagebreak >}}

Press {{< kbd Ctrl-C >}} to copy. {{< video clip.mp4 >}}

{{< lipsum 2 >}}

Made by {{< meta product.name >}} in {{< meta product.year >}} ({{< meta nowhere >}}).
![Shot]({{< meta product.shot >}})

Shown as written: {{{< meta title >}}}. In code too: `{{{< kbd Ctrl-C >}}}`.

```yaml
{{{< include _not-included.qmd >}}}
```

![A chart](chart.svg){.lightbox width=50%}

::: {.panel-tabset}
## One

A tab's footnote.[^tab]

[^tab]: The tab's note.

## Two

Two.
:::

```{=html}
<b class="raw">raw bold</b><script>alert(1)</script>
```

```{=latex}
\\newpage
```

Version {{< var version >}}, run by {{< var engine.jupyter >}}; {{< var nowhere >}}{{< env HOME >}}.
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("pandoc")
    demos = project / "demos"
    (demos / "_parts").mkdir(parents=True)
    (demos / "doc.qmd").write_text(DOCUMENT, encoding="utf-8")
    (demos / "_parts" / "_shared.qmd").write_text(
        "Included **text**.\n\n```{python}\nprint('from the included part')\n```\n\n{{< include /shared.md >}}\n",
        encoding="utf-8")
    (project / "shared.md").write_text("From the root of the project.\n", encoding="utf-8")
    (demos / "refs.bib").write_text("@book{knuth1984, title={Literate Programming}, author={Knuth, Donald}, "
                                    "year=1984}", encoding="utf-8")
    (demos / "chart.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"></svg>',
                                     encoding="utf-8")
    (demos / "_notes" / "1.1").mkdir(parents=True)  # helpers only: no section, whatever its name
    (demos / "_notes" / "1.1" / "_old.qmd").write_text("Old.\n", encoding="utf-8")
    (demos / "v1.0").mkdir()
    (demos / "v1.0" / "_only-a-part.qmd").write_text("A part.\n", encoding="utf-8")
    (demos / "_variables.yml").write_text('version: 1.2\nengine:\n  jupyter: "[Jupyter](https://jupyter.org)"\n',
                                          encoding="utf-8")
    (demos / "clip.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom")
    return build_keeping_warnings(project)


@pytest.fixture(scope="module")
def html(project: Path) -> str:
    return (project / "build" / "doc" / "index.html").read_text(encoding="utf-8")


def test_heading_attributes_leave_the_text(html: str) -> None:
    assert '<h2 class="unnumbered"' in html and ">Intro</h2>" in html
    assert '<h2 class="unlisted" id="sec-method">Method</h2>' in html
    assert 'href="#sec-method"' in html and "{.unnumbered}" not in html


def test_tables_captions_numbered_when_labelled(html: str) -> None:
    assert 'id="tbl-sizes"' in html and "Table 1: Sizes of things" in visible(html)
    assert "<caption>A caption without a label</caption>" in html
    assert 'href="#tbl-sizes"' in html


def test_definition_lists_line_blocks_footnotes_math(html: str) -> None:
    assert "<dt>Term</dt>" in html and "<dd>" in html
    assert "The note." in visible(html) and 'id="eq-energy"' in html
    text = visible(html)
    assert "[^note]" not in text and "{#eq-energy}" not in text


def test_cross_references_and_citations_resolve(html: str) -> None:
    assert 'href="#eq-energy"' in html and "(1)" in visible(html)
    assert ">Knuth, 1984, p. 3</a>" in html and 'id="bib-knuth1984"' in html
    assert "@eq-energy" not in visible(html) and "[@knuth" not in visible(html)


def test_includes_are_read_and_run(project: Path, html: str) -> None:
    assert "Included" in visible(html) and "from the included part" in visible(html)
    assert "From the root of the project." in visible(html)  # "/shared.md": from the project's root
    assert (project / "build" / "doc" / "doc.qmd").read_text(encoding="utf-8") == DOCUMENT


def test_shortcodes_show_or_warn_never_raw(project: Path, html: str) -> None:
    assert '<span class="pagebreak"></span>' in html and "<kbd>Ctrl-C</kbd>" in html
    assert '<video controls="" preload="metadata" src="_images/clip.mp4" aria-label="Video: clip.mp4">' in html
    assert (project / "build" / "doc" / "_images" / "clip.mp4").is_file()
    assert "{{&lt; lipsum" not in html and "{{< pagebreak" not in visible(html) and "{{< video" not in visible(html)
    warnings = (project / "warnings.txt").read_text()
    # line 44 of the file (50 of the document its include makes: the included part is 7 lines)
    assert "demos/doc.qmd:45: the shortcode {{< lipsum 2 >}} is left out: it is not supported here" in warnings
    assert "demos/doc.qmd:47: the shortcode {{< meta nowhere >}} is left out: the front matter has no" in warnings
    # _variables.yml of the demos folder, as Quarto reads it beside _quarto.yml: text and Markdown
    assert 'Version 1.2, run by <a href="https://jupyter.org" rel="noopener noreferrer">Jupyter</a>; .</p>' in html
    assert "demos/doc.qmd:78: the shortcode {{< var nowhere >}} is left out: _variables.yml" in warnings
    assert "demos/doc.qmd:78: the shortcode {{< env HOME >}} is left out: a page never shows the building " \
           "machine's environment" in warnings
    assert str(Path.home()) not in html


def test_escaped_shortcodes_image_attributes_and_footnotes_in_tabs(html: str) -> None:
    text = visible(html)
    assert "Shown as written: {{< meta title >}}." in text
    assert "Made by Widget in 2024 ()." in text  # the front matter's values, as Quarto inserts them
    assert 'alt="Shot"' in html and "meta product" not in text
    assert "<code>{{&lt; kbd Ctrl-C &gt;}}</code>" in html and "{{{" not in text  # as Quarto shows them
    assert "include _not-included.qmd" in text  # an escaped include in a listing is shown, not read
    assert 'width="50%"' in html and "lightbox" in html and "{.lightbox" not in text
    assert "The tab" in text and "note." in text


def test_raw_html_blocks_are_sanitised_other_formats_vanish(html: str) -> None:
    assert '<b class="raw">raw bold</b>' in html and "alert(1)" not in html
    assert "newpage" not in html and "{=html}" not in html


@pytest.mark.parametrize(("target", "why"), [
    ("../../outside.qmd", "it is outside the project"),
    ("_missing.qmd", "it is missing"),
])
def test_an_include_outside_the_project_or_missing_is_refused(tmp_path: Path, target: str, why: str) -> None:
    (tmp_path / "demos").mkdir()
    (tmp_path.parent / "outside.qmd").write_text("secret\n", encoding="utf-8")
    (tmp_path / "demos" / "doc.qmd").write_text(f"# Doc\n\n{{{{< include {target} >}}}}\n", encoding="utf-8")
    done = run_cli("build", cwd=tmp_path)
    assert done.returncode != 0
    assert "demos/doc.qmd:3: cannot include" in done.stderr and why in done.stderr
    assert "secret" not in done.stderr


def test_an_edited_variable_rebuilds_the_pages_using_it_and_a_linked_file_is_refused(tmp_path: Path) -> None:
    demos = tmp_path / "demos"
    demos.mkdir()
    (demos / "doc.qmd").write_text("# Doc\n\nVersion {{< var version >}}.\n", encoding="utf-8")
    (demos / "other.qmd").write_text("# Other\n\nNo variables.\n", encoding="utf-8")
    (demos / "_variables.yml").write_text("version: 1.2\n", encoding="utf-8")
    assert run_cli("build", cwd=tmp_path).returncode == 0
    page = tmp_path / "build" / "doc" / "index.html"
    assert "Version 1.2." in page.read_text(encoding="utf-8")
    (demos / "_variables.yml").write_text("version: 1.3\n", encoding="utf-8")
    assert run_cli("build", cwd=tmp_path).returncode == 0  # the entry's own text did not change
    assert "Version 1.3." in page.read_text(encoding="utf-8")
    (tmp_path / "elsewhere.yml").write_text("version: secret\n", encoding="utf-8")
    (demos / "_variables.yml").unlink()
    (demos / "_variables.yml").symlink_to(tmp_path / "elsewhere.yml")
    done = run_cli("build", cwd=tmp_path)
    assert done.returncode != 0 and "doc: cannot read _variables.yml:" in done.stderr
    assert "secret" not in done.stderr and "Version 1.3." in page.read_text(encoding="utf-8")  # the last good site
