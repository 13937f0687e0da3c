"""MyST Markdown in prose cells: what a reader of a Jupyter Book page expects to see."""

from __future__ import annotations

import logging
import re
import time
from pathlib import Path

import pytest

from site_builder.run.execute import BlockResult, RunResult
from site_builder.site.prose import html as prose
from site_builder.site.prose.markdown.context import PageContext as PageProse
from site_builder.site.prose.markdown.resolve import labels_of as collect_labels
from site_builder.site.pages.render import EntryBuild, SiteInfo, render_site
from site_builder.source.parsed import Cell, Script
from site_builder.source.entries import Entry
from tests.page_reader import visible

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 32


def render(text: str, entry: str = "page") -> str:
    page = PageProse(entry=entry, labels=collect_labels(entry, [text]))
    return prose.render(text, "markdown", id_prefix="p-", page=page)


RAW_SYNTAX = ("{note}", "`{", "}`", "(label)=", ")=", "```", ":::", ":label:", ":class:", ":tags:",
              "{exercise}", "{solution", "prf:", "$$")


def assert_no_raw_syntax(html: str) -> None:
    text = visible(html)
    for raw in RAW_SYNTAX:
        assert raw not in text, f"{raw!r} visible in {text!r}"


def test_admonitions_render_like_rest_asides() -> None:
    kinds = ["note", "tip", "warning", "seealso", "hint", "important", "caution", "danger",
             "attention", "error"]
    text = "\n\n".join(f"```{{{k}}}\n:class: dropdown\nBody of *{k}*.\n```" for k in kinds)
    text += "\n\n```{admonition} Read this first\n:class: tip\nCustom **body**.\n```"
    text += "\n\n:::{note} Text on the opening line.\n:::"
    html = render(text)
    for kind in kinds:
        assert f'<aside class="admonition {kind}">' in html
        assert f"Body of <em>{kind}</em>." in html
    assert '<p class="admonition-title">See also</p>' in html
    assert '<p class="admonition-title">Read this first</p>' in html and "<strong>body</strong>" in html
    assert "Text on the opening line." in html
    assert "dropdown" not in visible(html)
    assert_no_raw_syntax(html)


def test_math_inline_display_and_labelled_equations_with_eq_refs() -> None:
    text = r"""Inline $a^2 + b^2$ and {math}`\alpha`, not math: costs $5 and $10.

$$
E = mc^2
$$ (energy)

```{math}
:label: sum
\sum_i x_i
```

$$x$$

See {eq}`energy` and {eq}`sum`; {eq}`missing` stays text."""
    html = render(text)
    assert html.count("<math") == 5 and "http" not in html  # MathML, nothing loaded
    assert '<math display="block">' in html
    assert 'id="label-energy"' in html and 'id="label-sum"' in html
    assert '<span class="eqno">(1)</span>' in html and '<span class="eqno">(2)</span>' in html
    assert html.count('class="eqno"') == 2  # the unlabelled one is not numbered
    assert '<a class="xref xref-internal" href="#label-energy" rel="noopener noreferrer">(1)</a>' in html
    assert '<a class="xref xref-internal" href="#label-sum" rel="noopener noreferrer">(2)</a>' in html
    assert "costs $5 and $10" in visible(html) and "missing" in visible(html)
    assert_no_raw_syntax(html.replace("$5 and $10", ""))


def test_targets_and_refs_resolve_on_the_page_or_degrade_to_text() -> None:
    text = """(intro-label)=
## Getting started

Text {ref}`intro-label`, {ref}`explicit <intro-label>`, {ref}`nowhere`, {doc}`../other/page`,
{numref}`fig-one`.

```{figure} missing.png
:name: fig-one
A caption.
```
"""
    html = render(text)
    assert '<h2 id="label-intro-label">Getting started</h2>' in html
    assert '<a class="xref xref-internal" href="#label-intro-label" rel="noopener noreferrer">Getting started</a>' in html
    assert '<a class="xref xref-internal" href="#label-intro-label" rel="noopener noreferrer">explicit</a>' in html
    assert '<a class="xref xref-internal" href="#fig-one" rel="noopener noreferrer">Fig. 1</a>' in html
    words = visible(html)
    assert "nowhere" in words and "page" in words
    assert_no_raw_syntax(html)


def test_code_blocks_are_highlighted_and_raw_html_is_dropped() -> None:
    text = """```{code-block} python
:linenos:
:caption: A function
def f(x):
    return x
```

```{raw} html
<script>alert(1)</script><b>raw bold</b>
```

```python
print("plain fence")
```

```{code} javascript
let x = 1;
```
"""
    html = render(text)
    assert '<span class="k">def</span>' in html and '<span class="nf">f</span>' in html
    assert "A function" in visible(html) and "linenos" not in html
    assert "raw bold" not in html and "script" not in html and "alert" not in html
    assert '<span class="nb">print</span>' in html
    assert '<span class="kd">let</span>' in html
    assert_no_raw_syntax(html)


def test_exercises_solutions_and_proofs_are_numbered_boxes_solutions_folded() -> None:
    text = """```{exercise}
:label: ex-first
First question.
```

```{exercise} Limits
:label: ex-limits
Second question with $x$.
```

```{solution} ex-limits
:class: dropdown
The answer.
```

```{solution-start} ex-first
:class: dropdown
```
Gated answer, with code:
```python
x = 1
```
```{solution-end}
```

```{prf:theorem} Pythagoras
:label: thm-p
$a^2+b^2=c^2$
```

```{prf:example}
An example.
```

```{prf:example} Second
Another.
```

```{prf:proof}
Obvious.
```

See {prf:ref}`thm-p` and {ref}`ex-limits`.
"""
    html = render(text)
    words = visible(html)
    for title in ("Exercise 1", "Exercise 2 (Limits)", "Theorem 1 (Pythagoras)", "Example 1",
                  "Example 2 (Second)", "Proof."):
        assert title in words, title
    assert '<summary class="admonition-title">Solution to Exercise 2</summary>' in html
    assert '<summary class="admonition-title">Solution to Exercise 1</summary>' in html
    # the exercise solved is linked, as sphinx-exercise and mystmd link it (below the summary: no
    # control inside a control)
    assert ('<p class="solution-of">Solves <a class="xref xref-internal" href="#label-ex-limits" '
            'rel="noopener noreferrer">Exercise 2</a>.</p>') in html
    assert html.count("<details") == 2
    gated = html[html.index("Solution to Exercise 1"):]
    assert "Gated answer" in gated.split("</details>")[0] and '<span class="n">x</span>' in gated
    assert '<a class="xref xref-internal" href="#thm-p" rel="noopener noreferrer">Theorem 1</a>' in html
    assert '<a class="xref xref-internal" href="#label-ex-limits" rel="noopener noreferrer">Exercise 2</a>' in html
    assert_no_raw_syntax(html)


def test_unknown_directives_and_roles_show_their_content_never_their_syntax() -> None:
    text = """---
title: front matter of a page
---

```{margin} Aside title
In the margin.
```

````{tab-set}
```{tab-item} First
Tab content.
```
````

```{mystery-directive}
---
key: value
other: 2
---
Mystery content.
```

```{toctree}
:maxdepth: 2
intro
```

Roles: {kbd}`Ctrl+C`, H{sub}`2`O, x{sup}`2`, {abbr}`MyST (Markedly Structured Text)`,
{py:func}`numpy.sum`, {class}`~pkg.mod.Thing`, {term}`gradient`, {cite}`knuth84`,
{mystery-role}`role text`, {code}`x = 1`.

% a MyST comment, not shown
+++ {"meta": 1}
Last paragraph.
"""
    html = render(text)
    words = visible(html)
    for shown in ("In the margin.", "Aside title", "Tab content.", "First", "Mystery content.",
                  "Ctrl+C", "numpy.sum()", "Thing", "gradient", "knuth84", "role text", "x = 1",
                  "Last paragraph."):
        assert shown in words, shown
    assert "<kbd>Ctrl+C</kbd>" in html and "<sub>2</sub>" in html and "<sup>2</sup>" in html
    assert '<abbr title="Markedly Structured Text">MyST</abbr>' in html
    assert "maxdepth" not in words and "intro" not in words.split("Roles")[0].split("Tab content")[1]
    assert "comment" not in words and "key: value" not in words and '"meta"' not in words
    assert_no_raw_syntax(html)


def _build(tmp_path: Path, name: str, cells: tuple[Cell, ...]) -> EntryBuild:
    folder = tmp_path / "demos"
    folder.mkdir(exist_ok=True)
    path = folder / f"{name}.py"
    path.write_text("x = 1\n")
    files = tmp_path / f"run-{name}"
    files.mkdir(exist_ok=True)
    entry = Entry(name, path, f"demos/{name}.py", "x = 1\n", b"x = 1\n")
    script = Script("summary", "", "", cells, ())
    result = RunResult(name, (BlockResult("setup", "ok", 0.01),), None, 1.0, time.time(), files)
    return EntryBuild(entry, script, result)


def test_site_wide_refs_docs_and_local_figures(tmp_path: Path) -> None:
    (tmp_path / "demos" / "img").mkdir(parents=True)
    (tmp_path / "demos" / "img" / "plot.png").write_bytes(PNG)
    (tmp_path / "outside.png").write_bytes(PNG)
    (tmp_path / "demos" / "img" / "link.png").symlink_to(tmp_path / "outside.png")
    first = _build(tmp_path, "first", (
        Cell("code", "setup", "x = 1", 1, None),
        Cell("markdown", "", "(shared-target)=\n## A section of the first page\n\nText.", 2, 1),
    ))
    second = _build(tmp_path, "second", (
        Cell("code", "setup", "x = 1", 1, None),
        Cell("markdown", "", """See {ref}`shared-target` and {doc}`first`.

```{figure} img/plot.png
:alt: the plot
:width: 300
The caption.
```

```{image} img/link.png
:alt: linked away
```

![markdown image](img/plot.png) and ![escaping](../outside.png)
""", 2, 1),
    ))
    files = {f.path: f for f in render_site([first, second], SiteInfo())}
    page = files["second/index.html"].data.decode()
    assert '<a class="xref xref-entry" href="../first/index.html#label-shared-target" rel="noopener noreferrer">A section of the first page</a>' in page
    assert '<a href="../first/index.html" rel="noopener noreferrer">' in page
    assert '<img src="_images/img/plot.png" alt="the plot" width="300">' in page
    assert "Fig. 1" in page and "The caption." in page
    assert files["second/_images/img/plot.png"].source == tmp_path / "demos" / "img" / "plot.png"
    assert "second/_images/img/link.png" not in files and "linked away" in page  # a link: not read
    assert '<img src="_images/img/plot.png" alt="markdown image">' in page
    assert "escaping" in page and "outside.png" not in page
    assert 'id="label-shared-target"' in files["first/index.html"].data.decode()


def test_an_image_path_with_backslash_escapes_is_read_as_written(tmp_path: Path,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "demos" / "img").mkdir(parents=True)
    (tmp_path / "demos" / "img" / "plot_one.png").write_bytes(PNG)
    build = _build(tmp_path, "escapes", (
        Cell("code", "setup", "x = 1", 1, None),
        Cell("markdown", "", "![one](img/plot\\_one.png) and ![gone](img/gone\\_file.png)", 2, 1),
    ))
    with caplog.at_level(logging.WARNING):
        files = {f.path: f for f in render_site([build], SiteInfo())}
    assert '<img src="_images/img/plot_one.png" alt="one">' in files["escapes/index.html"].data.decode()
    assert "escapes/_images/img/plot_one.png" in files
    # The warning names the path as written, never Python-Markdown's placeholder of an escape.
    assert "escapes: the image img/gone_file.png of its prose is not published" in caplog.text
    assert "\x02" not in caplog.text and "\x03" not in caplog.text


def test_house_style_markdown_cells_keep_rendering_as_before() -> None:
    html = prose.render("Some **prose** with `code`, a [link](https://example.com) and 5 $ signs.",
                        "markdown")
    assert "<strong>prose</strong>" in html and "<code>code</code>" in html
    assert "5 $ signs" in html
    assert re.search(r'<a href="https://example.com"', html)


def test_notebook_title_and_summary_from_the_prose() -> None:
    from site_builder.source.markdown_head import document_head, without_title

    texts = ["(top)=\n% comment\n# The **title** with {math}`x`\n\n```{note}\nnot this\n```\n",
             "A [linked](https://e.org) *first* paragraph\nover two lines.\n\nSecond."]
    cells = [Cell("markdown", "", t, 0, None) for t in texts]
    head = document_head(cells, "demos/page.md")
    assert (head.title, head.summary) == ("The title with x", "A linked first paragraph over two lines.")
    assert head.title_at == (0, 2, 3)
    late = document_head([Cell("markdown", "", "Intro paragraph.\n\n## Late heading", 0, None)], "demos/p.md")
    assert (late.title, late.summary) == ("Late heading", "Intro paragraph.")
    assert without_title(texts[0], 2, 3).split("\n")[:3] == ["(top)=", "% comment", ""]


def test_a_notebooks_title_and_summary_read_as_a_reader_sees_them(tmp_path: Path) -> None:
    import nbformat

    from site_builder.source.notebooks import parse_notebook

    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Fish &amp; chips <b>and</b> `<peas>` &lt;ok&gt;\n\n"
                                      "Read [js](javascript:alert(1)) or [the docs](https://e.org/a_(b)) first."),
        nbformat.v4.new_code_cell("x = 1")])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    source = nbformat.writes(notebook)
    script = parse_notebook(source, "demos/fish.ipynb", "fish")
    assert (script.title, script.summary) == ("Fish & chips and <peas> <ok>", "Read js or the docs first.")
    path = tmp_path / "demos" / "fish.ipynb"
    path.parent.mkdir()
    path.write_text(source)
    files_dir = tmp_path / "run"
    files_dir.mkdir()
    build = EntryBuild(Entry("fish", path, "demos/fish.ipynb", source, source.encode()), script,
                       RunResult("fish", (BlockResult("setup", "ok", 0.01),), None, 1.0, time.time(), files_dir))
    files = {f.path: f.data.decode() for f in render_site([build], SiteInfo(title="Site")) if f.data}
    page, index = files["fish/index.html"], files["index.html"]
    assert re.search(r"<h1[^>]*>Fish &amp; chips and &lt;peas&gt; &lt;ok&gt;</h1>", page)  # "&" shown once
    assert "<title>Site · Fish &amp; chips and &lt;peas&gt; &lt;ok&gt;</title>" in page
    assert "Read js or the docs first." in index and "js)" not in index and "&amp;amp;" not in page + index


def test_tex_the_converter_misses_is_rewritten_or_shown_as_code() -> None:
    from site_builder.site.prose.mathml import math_html

    for tex in (r"\begin{equation} a = b \end{equation}", r"\begin{array}{cc} a & b \cr c & d \end{array}",
                r"{\bf x} \dots y", r"x \label{eq:x}"):
        assert math_html(tex, True).startswith("<math"), tex
    fallback = math_html(r"\unknowncommand{<b>}", False)
    assert fallback == '<code class="math-tex">\\unknowncommand{&lt;b&gt;}</code>'


def test_table_directives_are_numbered_captioned_tables_that_references_name() -> None:
    text = ("Rates are in {numref}`rates`.\n\n"
            "```{table} Learning *rates*\n:name: rates\n:widths: 30 70\n\n"
            "| Optimiser | Rate |\n|:--|--:|\n| Adam | `1e-3` |\n```\n\n"
            ":::{table}\nNo table, only words.\n:::\n")
    page = PageProse(entry="page", labels=collect_labels("page", [text]))
    html = prose.render(text, "markdown", id_prefix="p-", page=page)
    table = re.search(r'<table class="myst-table" id="label-rates">(.*?)</table>', html, re.S)
    assert table, html
    caption = re.search(r"<caption>(.*)</caption>", table.group(1), re.S)
    assert caption and visible(caption.group(1)) == "Table 1 Learning rates" and "<em>rates</em>" in caption.group(1)
    assert '<col width="30%"><col width="70%">' in table.group(1)  # no style attribute: the CSP runs none
    assert '<th align="left">Optimiser</th>' in table.group(1) and '<td align="right"><code>1e-3</code></td>' in table.group(1)
    assert '<a class="xref xref-internal" href="#label-rates"' in html and "in Table 1." in visible(html)
    # A {table} without a table shows its content, and the page says why.
    assert "No table, only words." in visible(html) and "{table}" not in visible(html)
    assert [w.message for w in page.warnings] == ["{table} holds no Markdown table: its content is shown as it is"]


def test_list_tables_are_tables_with_their_header_rows() -> None:
    html = prose.render(
        "```{list-table} Learning rates\n:header-rows: 1\n:name: rates\n\n"
        "* - Optimiser\n  - Rate\n* - Adam *default*\n  - `1e-3`\n* - SGD\n  - 0.1\n```\n", "markdown")
    assert '<table class="myst-list-table" id="label-rates">' in html and "<caption>Learning rates</caption>" in html
    header = re.search(r"<thead>(.*)</thead>", html, re.S)
    assert header and "Optimiser" in header.group(1) and "Rate" in header.group(1)
    assert len(re.findall(r"<tr>", html)) == 3 and len(re.findall(r"<td>", html)) == 4
    assert "<em>default</em>" in html and "<code>1e-3</code>" in html
    assert "list-table" not in visible(html) and "header-rows" not in visible(html)
