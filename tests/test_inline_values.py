"""The run's values in the prose: inline expressions in every prose format, and glue."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest

from tests.conftest import MYST_FRONT_MATTER, copy_of, run_cli, shared_folder, write_demo
from tests.page_reader import page

HOUSE = '''
"""loss.py — train and quote the loss over {eval}`len(losses)` steps.

Purpose
-------
The loss falls from {eval}`losses[0]:.2f` to {eval}`losses[-1]:.3f` over {eval}`len(losses)` steps;
{eval}`undefined_name + 1` raises.

Blocks
------
[B-train]  Train; before it, {eval}`"losses" in globals()` that losses exist.
[B-report]  Report, after {eval}`len(losses)` steps.

Export
------
final, steps_2
"""
import math

# %% B-train
losses = [4.58 * math.exp(-k / 3) for k in range(8)]
steps_2 = len(losses) * 2

# %% [markdown]
# The last loss is {eval}`losses[-1]:.4f`; Quarto's `{python} round(losses[1], 2)`; {eval}`final`
# is not defined yet. Code stays code: `` {eval}`losses` `` and `{eval}`.

# %% B-report
final = losses[-1]


class Alpha:
    def _repr_latex_(self):
        return r"$\\alpha^{2}$"


alpha = Alpha()
# a comment quoting {eval}`final` stays a comment
print(round(final, 3))

# %% [markdown]
# A value with LaTeX: {eval}`alpha`; formatted {eval}`{"a": 1}["a"]:>3d`; a dict {eval}`{"k": 1}`.
'''

# A figure quoted by the prose: mystmd shows {eval} of a figure as the image, and so do we.
CURVE = '''
"""curve.py — a figure the prose quotes.

Purpose
-------
After the run: {eval}`fig`.
"""
import matplotlib.pyplot as plt

# %% B-plot
fig, ax = plt.subplots(figsize=(3, 2))
ax.plot([1, 3, 2])
ax.set_title("A small curve")

# %% [markdown]
# After the block: {eval}`fig`; its title {eval}`ax.get_title()`.
'''

GALLERY = '''
"""
Gallery mean
============

After the run the mean is :eval:`mean:.2f`.
"""
values = [1, 2, 3, 4]
mean = sum(values) / len(values)

# %%
# After the first block there are :eval:`len(values)` values.
print(mean)
'''

NOTEBOOK = MYST_FRONT_MATTER.replace("kernelspec:", "export: [answer]\nkernelspec:") + '''

# Notebook values

Before any cell: {eval}`answer`.

```{code-cell} python
answer = 42
from _glue import glue
glue("half", answer / 2, display=False)
glue("shown", "a <b>string</b>")
glue("formula", Formula(), display=False)
import matplotlib.pyplot as plt
figure, axes = plt.subplots()
axes.plot([1, 3, 2])
glue("curve", figure, display=False)
plt.close(figure)
import pandas as pd
from IPython.display import HTML
glue("table", pd.DataFrame({"loss": [4.58, 0.39]}, index=["first", "last"]), display=False)
glue("evil", HTML('<b onclick="steal()">bold</b><script>alert(1)</script>'), display=False)
```

A table, glued: {glue}`table`; HTML, sanitised: {glue}`evil`.

```{glue} table
```

```{glue:figure} curve
:name: "fig-curve"

The curve, glued.
```

See {numref}`fig-curve`.

```{eval} answer * 2
```

```{eval} figure
```

```{eval:figure} figure
:name: fig-evaluated

The curve, evaluated after {eval}`answer` steps.
```

The answer is {eval}`answer:05d`, Quarto says `{python} answer + 1`; glued {glue:text}`half:.2f`,
{glue}`shown`, math {glue:math}`formula`, unknown {glue:text}`nowhere`.

```{glue:figure} table
:name: tbl-losses

The losses, glued as a figure.
```
'''

# A stand-in for MyST-NB's glue(), publishing exactly what it publishes (its own code is not ours
# to copy): the value's display bundle, with glue's metadata, hidden by a MIME prefix when display=False.
GLUE = '''
from IPython.core.formatters import format_display_data
from IPython.display import display


def glue(name, variable, display_it=True, display=None):
    shown = display_it if display is None else display
    bundle, metadata = format_display_data(variable)
    prefix = "" if shown else "application/papermill.record/"
    metadata["scrapbook"] = dict(name=name, mime_prefix=prefix)
    _display({prefix + k: v for k, v in bundle.items()}, raw=True, metadata=metadata)


_display = display
'''

SECOND = MYST_FRONT_MATTER + '''

# Second notebook

From the first: {glue:text}`values_nb.md::half:.1f`, and its curve {glue}`values_nb.md::curve`.

```{glue:figure} curve
:doc: values_nb.md
:name: other-curve

The first notebook's curve, here.
```

```{code-cell} python
x = 1
```
'''

QUARTO = '''---
title: "Quarto values"
jupyter: python3
---

Opening: `{python} steps` steps.

```{python}
steps = 3
rate_2 = 0.125
```

After it: `{python} steps * 2` and `{python} f"{rate_2:.2f}"`; {eval}`rate_2:.1%`; escaped: ``{python} steps``.
'''


def build_project(project: Path) -> None:
    """This module's shared project, built in ``project``."""
    write_demo(project, "loss", HOUSE)
    write_demo(project, "gallery_mean", GALLERY)
    write_demo(project, "curve", CURVE)
    (project / "demos" / "values_nb.md").write_text(NOTEBOOK.replace(
        "answer = 42\n", "answer = 42\nclass Formula:\n    def _repr_latex_(self):\n"
        "        return '$E = mc^2$'\n\n"), encoding="utf-8")
    (project / "demos" / "second_nb.md").write_text(SECOND, encoding="utf-8")
    (project / "demos" / "_glue.py").write_text(GLUE, encoding="utf-8")
    (project / "demos" / "quarto_values.qmd").write_text(QUARTO, encoding="utf-8")
    result = run_cli("build", cwd=project)
    assert result.returncode == 0, result.stderr
    (project / "stderr.txt").write_text(result.stderr)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_folder(tmp_path_factory, "inline-values", build_project)


def values(html: str) -> list[str]:
    return [unescape(v) for v in re.findall(r'<span class="quoted-value">(.*?)</span>', html)]


def pasted(html: str) -> list[str]:
    """The images pasted in the prose ({eval} of a figure, {glue} of one)."""
    return re.findall(r'<img class="pasted-value" src="([^"]+)"', html)


def errors(html: str) -> list[str]:
    return [(unescape(why), unescape(code))
            for why, code in re.findall(r'<span class="quoted-error" title="([^"]*)"><code>(.*?)</code>', html)]


def test_a_house_style_page_shows_the_values_at_their_places(built: Path) -> None:
    html = page(built, "loss")
    # Purpose (after the run), B-train's description (before any block), the prose cell (after
    # B-train), B-report's description (after B-train), the last prose cell (after B-report)
    assert values(html) == ["4.58", "0.444", "8", "False", "0.4441", "3.28", "8", "  1", "{'k': 1}"]


def test_the_summary_line_quotes_values_after_the_run(built: Path) -> None:
    assert "train and quote the loss over 8 steps." in page(built, "loss")


def test_an_expression_before_its_name_or_raising_shows_an_error_and_warns(built: Path) -> None:
    html = page(built, "loss")
    found = dict((code, why) for why, code in errors(html))
    assert found["undefined_name + 1"] == "NameError: name 'undefined_name' is not defined"
    assert found["final"].startswith("NameError")
    stderr = (built / "stderr.txt").read_text()
    assert "loss: demos/loss.py:6: the expression 'undefined_name + 1' raised NameError" in stderr


def test_code_and_comments_are_never_evaluated(built: Path) -> None:
    html = page(built, "loss")
    assert "a comment quoting {eval}`final` stays a comment" in html.replace("<span class=\"c1\">", "")
    assert "<code>{eval}`losses`</code>" in html


def test_latex_values_show_as_math(built: Path) -> None:
    html = page(built, "loss")
    after = html[html.index("A value with LaTeX"):]
    assert after.index("<math") < after.index("formatted")
    assert "<mi>α</mi>" in after


def test_eval_of_a_figure_shows_the_image(built: Path) -> None:
    html = page(built, "curve")
    images = re.findall(r'<img class="pasted-value" src="([^"]+)" alt="A small curve" width="300" height="200">', html)
    assert len(images) == 2  # the Purpose (after the run) and the prose after the block, inline
    assert values(html) == ["A small curve"]
    png = (built / "build" / "curve" / images[0]).read_bytes()
    assert png.startswith(b"\x89PNG") and int.from_bytes(png[16:20], "big") == 600  # drawn at figure_scale 2
    exported = json.loads((built / "build" / "_downloads" / "values" / "curve.json").read_text())["values"]
    assert [v["name"] for v in exported] == ["ax.get_title()"]  # the figure: an image, no text to quote
    # a notebook's {eval} directive: the figure as a block, as its value would show; MyST-NB's
    # {eval:figure}: a numbered figure, captioned
    html = page(built, "values_nb")
    assert re.search(r'<figure class="value value-image"><img src="_site_builder/[^"]+\.png"', html)
    assert re.search(r'<figure class="myst-figure" id="fig-evaluated">\s*<img src="_site_builder/[^"]+\.png" '
                     r'alt="Figure\(640x480\)" width="640">\s*<figcaption><span class="caption-number">Fig. 2 </span>'
                     r'<p>The curve, evaluated after <span class="quoted-value">42</span> steps.</p>', html)


def test_rest_gallery_prose_quotes_values(built: Path) -> None:
    html = page(built, "gallery_mean")
    assert values(html) == ["2.50", "4"]


def test_a_notebook_quotes_values_and_pastes_glue(built: Path) -> None:
    html = page(built, "values_nb")
    shown = values(html)
    assert "00042" in shown and "43" in shown and "21.00" in shown
    assert "'a <b>string</b>'" in shown and "<b>string" not in html  # glue's text, escaped
    assert "<mi>E</mi>" in html  # {glue:math}
    assert [code for _, code in errors(html)] == ["answer", "nowhere"]  # before any cell; never glued
    stderr = (built / "stderr.txt").read_text()
    assert "values_nb: demos/values_nb.md:" in stderr and "glue: no value named 'nowhere'" in stderr
    # display=False hides the glued value from the cell's outputs; display=True shows it there
    assert "21.0" not in html.replace("21.00", "")


def test_quarto_inline_code_shows_values(built: Path) -> None:
    html = page(built, "quarto_values")
    assert values(html) == ["6", "0.12", "12.5%"]
    assert [code for _, code in errors(html)] == ["{python} steps"]  # above every cell
    assert "<code>{python} steps</code>" in html  # in double backticks: Quarto's escape, shown as code


def test_values_are_exported_as_json_and_latex(built: Path) -> None:
    folder = built / "build" / "_downloads" / "values"
    data = json.loads((folder / "loss.json").read_text())
    assert data["format"] == 1 and data["entry"] == "loss"
    by_name = {v["name"]: v for v in data["values"]}
    assert by_name["steps_2"] == {"name": "steps_2", "macro": "\\lossStepsTwo", "value": "16", "type": "int",
                                  "block": "B-report", "origin": "export"}
    assert by_name["losses[-1]:.3f"]["value"] == "0.444"
    assert "undefined_name + 1" not in by_name  # it raised: no value
    tex = (folder / "loss.tex").read_text()
    assert "\\newcommand{\\lossStepsTwo}{16}\n" in tex
    assert "\\newcommand{\\lossFinal}{0.4441316128189752}\n" in tex
    assert "\\newcommand{\\lossAlpha}{\\$\\textbackslash{}alpha\\^{}\\{2\\}\\$}" in tex  # escaped: text
    nb = json.loads((folder / "values_nb.json").read_text())
    assert {v["name"]: v["value"] for v in nb["values"]} == {
        "answer:05d": "00042", "answer + 1": "43", "answer * 2": "84", "answer": "42", "half": "21.0",
        "shown": "a <b>string</b>", "table": "       loss\nfirst  4.58\nlast   0.39"}
    # not the formula, the curve, the HTML: their text is a default repr, <Formula at 0x...>
    assert "\\newcommand{\\valuesNbHalf}{21.0}" in (folder / "values_nb.tex").read_text()


def test_value_files_are_byte_identical_across_builds(built: Path, tmp_path: Path) -> None:
    project = copy_of(built, tmp_path)
    folder = project / "build" / "_downloads" / "values"
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert len(before) == 10  # loss, gallery_mean, values_nb, quarto_values, curve: .json and .tex
    result = run_cli("build", "--force", cwd=project)
    assert result.returncode == 0, result.stderr
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_myst_nb_eval_directive_shows_the_value_as_a_paragraph(built: Path) -> None:
    assert '<p class="quoted-value"><span class="quoted-value">84</span></p>' in page(built, "values_nb")


def test_a_glued_figure_is_a_numbered_captioned_figure(built: Path) -> None:
    html = page(built, "values_nb")
    figure = re.search(r'<figure class="myst-figure" id="fig-curve">\s*<img src="([^"]+)" alt="The curve, glued." width="640">'
                       r'\s*<figcaption><span class="caption-number">Fig. 1 </span>', html)
    assert figure is not None
    assert (built / "build" / "values_nb" / figure.group(1)).read_bytes().startswith(b"\x89PNG")
    assert '<a class="xref xref-internal" href="#fig-curve" rel="noopener noreferrer">Fig. 1</a>' in html


def test_glued_html_shows_sanitised_as_a_table(built: Path) -> None:
    html = page(built, "values_nb")
    prose = html[html.index("A table, glued"):]
    inline = prose[:prose.index("HTML, sanitised")]  # {glue} role: the table, a box of the sentence
    scope = re.search(r'<div class="value-scope" id="(value-\d+)"><div>\s*<table[^>]*>.*<th>first</th>', inline, re.S)
    assert scope is not None
    css = (built / "build" / "values_nb" / "_site_builder" / "values.css").read_text()
    assert f"#{scope.group(1)} " in css  # the DataFrame's own CSS, scoped to its box
    assert "<b>bold</b>" in prose and "steal()" not in prose and "alert(1)" not in prose  # sanitised
    assert len(re.findall(r"<th>last</th>", prose)) == 3  # the {glue} directive pastes it again, as a block
    assert "       loss" not in prose  # never its text form
    # {glue:figure} of a table: the table, numbered and captioned as a figure
    assert re.search(r'<figure class="myst-figure figure-box" id="[^"]*tbl-losses">\s*<div class="value value-html">'
                     r'<div class="value-scope" id="value-\d+"><div>\s*<table.*?</table>\s*</div></div></div>\s*'
                     r'<figcaption><span class="caption-number">Fig. 3 </span><p>The losses, glued as a figure.</p>',
                     prose, re.S)


def test_a_figure_glued_in_another_entry_shows_as_a_published_image(built: Path) -> None:
    html = page(built, "second_nb")
    inline = re.search(r'its curve <img class="pasted-value" src="([^"]+)" alt="([^"]*)"', html)
    assert inline is not None and unescape(inline.group(2)) == "<Figure size 640x480 with 1 Axes>"
    figure = re.search(r'<figure class="myst-figure" id="[^"]*other-curve">\s*<img src="([^"]+)" alt="The first '
                       r"notebook's curve, here.\"", html)
    assert figure is not None and figure.group(1) == inline.group(1)
    assert inline.group(1).startswith("_site_builder/glued/values_nb/")
    published = built / "build" / "second_nb" / inline.group(1)
    assert published.read_bytes() == next((built / "_freeze" / "values_nb" / "_site_builder").glob(
        "block-1-display-*.png")).read_bytes()


def test_real_myst_nb_glue_works_unchanged(tmp_path: Path) -> None:
    pytest.importorskip("myst_nb", reason="MyST-NB is not installed: not in the test extra, as it brings Sphinx, "
                                          "which holds docutils back (docs/guide/testing.md)")
    (tmp_path / "demos").mkdir()
    (tmp_path / "demos" / "real_glue.md").write_text(MYST_FRONT_MATTER + '''
# Real glue

```{code-cell} ipython3
from myst_nb import glue
glue("ratio", 2 / 3, display=False)
```

The ratio is {glue:text}`ratio:.3f`.
''', encoding="utf-8")
    result = run_cli("build", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert values(page(tmp_path, "real_glue")) == ["0.667"]


def test_glue_from_another_entry(built: Path) -> None:
    assert values(page(built, "second_nb")) == ["21.0"]


def test_a_page_pasting_another_entrys_glue_follows_its_change(built: Path, tmp_path: Path) -> None:
    project = copy_of(built, tmp_path)
    demo = project / "demos" / "values_nb.md"
    demo.write_text(demo.read_text().replace('glue("half", answer / 2', 'glue("half", answer / 4'))
    result = run_cli("build", cwd=project)
    assert result.returncode == 0, result.stderr
    assert values(page(project, "second_nb")) == ["10.5"]  # its own run was not redone: its page was


def test_cached_and_frozen_builds_show_the_same_text(built: Path, tmp_path: Path) -> None:
    project = copy_of(built, tmp_path)
    before = {e: page(project, e) for e in ("loss", "values_nb", "gallery_mean", "curve")}
    for args in (("build",), ("build", "--frozen")):
        result = run_cli(*args, cwd=project)
        assert result.returncode == 0, result.stderr
        for entry, html in before.items():
            assert values(page(project, entry)) == values(html), (args, entry)
            assert errors(page(project, entry)) == errors(html)
            assert pasted(page(project, entry)) == pasted(html)
    assert len(pasted(before["curve"])) == 2 and all((project / "build" / "curve" / src).is_file()
                                                     for src in pasted(before["curve"]))


def test_strict_expressions_fail_the_entry(built: Path, tmp_path: Path) -> None:
    project = copy_of(built, tmp_path)
    (project / "pyproject.toml").write_text("[tool.site_builder]\nstrict_expressions = true\n")
    # loss.py alone, the entry an expression of which raises: the setting runs every entry again
    for name in ("values_nb.md", "second_nb.md", "curve.py", "gallery_mean.py", "quarto_values.qmd"):
        (project / "demos" / name).unlink()
    result = run_cli("build", cwd=project)
    assert result.returncode == 1
    assert "the expression 'undefined_name + 1' (demos/loss.py:6) raised NameError" in result.stderr
