"""Values of expressions: a block ending in an expression shows its value, as Jupyter does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from site_builder.run.child.cells import compile_cell
from site_builder.run.child.outputs.values import describe_value
from tests.conftest import copy_of, run_cli, run_main, write_demo

DEMO = '''
"""values.py — blocks that end in an expression.

Purpose
-------
Show values.
"""


class Table:
    """Stands in for a pandas DataFrame: an HTML table, with what a hostile one could add."""

    def _repr_html_(self):
        return ('<table class="dataframe"><tr><th>col</th></tr><tr><td onclick="alert(1)">cell-7</td></tr>'
                '</table><script>alert(2)</script><img src="x" onerror="alert(3)">')

    def __repr__(self):
        return "Table(1 row)"


class Thing:
    pass


# %% B-repr
x = 41
x + 1

# %% B-html
Table()

# %% B-none
print("printed-line")

# %% B-noise
Thing()

# %% B-noise-list
[Thing(), Thing()]

# %% B-hidden tags=["hide-value"]
"hidden-value-123"

# %% B-error tags=["raises-exception"]
y = 1
y / 0
'''


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("values")
    write_demo(project, "values", DEMO)
    result = run_cli("build", cwd=project)
    assert result.returncode == 0, result.stderr
    return project


def cell(page: str, name: str) -> str:
    start = page.index(f'<section id="{name}"')
    return page[start:page.index("</section>", start)]


def test_page_shows_values_below_the_output(built: Path) -> None:
    page = (built / "build" / "values" / "index.html").read_text()
    assert '<pre class="output value" aria-label="Value of B-repr">42</pre>' in cell(page, "B-repr")
    none = cell(page, "B-none")
    assert "printed-line" in none and 'class="output value"' not in none


def test_repr_html_is_sanitised_and_styled(built: Path) -> None:
    html = cell((built / "build" / "values" / "index.html").read_text(), "B-html")
    assert '<div class="value value-html"' in html and "cell-7" in html and '<table class="dataframe">' in html
    assert "<script" not in html and "alert" not in html and "onclick" not in html and "onerror" not in html
    assert "Table(1 row)" not in html  # the HTML replaces the repr


def test_noise_none_and_opted_out_values_are_not_shown(built: Path) -> None:
    page = (built / "build" / "values" / "index.html").read_text()
    for name in ("B-noise", "B-noise-list", "B-hidden"):
        assert 'class="output value"' not in cell(page, name), name
    assert "hidden-value-123" not in cell(page, "B-hidden").split("</code>")[-1]  # only in the code
    error = cell(page, "B-error")
    line = DEMO.lstrip("\n").splitlines().index("y / 0") + 1
    assert "ZeroDivisionError" in error and f"line {line}," in error  # the last expression's own line


def test_notebook_carries_values_as_execute_results(built: Path) -> None:
    notebook = json.loads((built / "build" / "values" / "values.ipynb").read_text())
    results = [o for c in notebook["cells"] if c["cell_type"] == "code" for o in c["outputs"]
               if o["output_type"] == "execute_result"]
    assert ["".join(r["data"]["text/plain"]) for r in results] == ["42", "Table(1 row)"]
    html = "".join(results[1]["data"]["text/html"])
    assert "cell-7" in html and "script" not in html and "onclick" not in html
    record = json.loads((built / "_freeze" / "values" / "_site_builder" / "record.json").read_text())
    assert [b["value"]["data"]["text/plain"] for b in record["blocks"] if b["value"]] == [["42"], ["Table(1 row)"]]


def test_values_setting_turns_them_off_without_running_again(built: Path, tmp_path: Path) -> None:
    project = copy_of(built, tmp_path)
    (project / "pyproject.toml").write_text("[tool.site_builder]\nvalues = false\n")
    result = run_cli("build", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "from the cache" in result.stderr  # no demo ran again
    page = (project / "build" / "values" / "index.html").read_text()
    assert 'class="output value"' not in cell(page, "B-repr")
    notebook = (project / "build" / "values" / "values.ipynb").read_text()
    assert "execute_result" not in notebook


def test_a_style_sheet_that_fails_its_check_is_left_out_and_the_page_says_so(
        built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture) -> None:
    from site_builder.site.outputs import value_html

    # The sanitiser writes only sheets that pass; a sheet that would not (a bug in it) is refused all the same.
    monkeypatch.setattr(value_html, "scope_stylesheet", lambda css, scope, prefix: "body { display: none }")
    project = copy_of(built, tmp_path)
    code, err = run_main(["build"], project, capsys, monkeypatch)
    assert code == 0, err
    html = cell((project / "build" / "values" / "index.html").read_text(), "B-html")
    assert "Value of B-html is shown without its own styles" in html and "cell-7" in html
    assert not list((project / "build" / "values").rglob("values.css"))
    assert "values: a value is shown without its styles" in caplog.text and "not scoped to the value's box" in caplog.text


class _Default:
    pass


# A repr naming a memory address anywhere (hist2d's (counts, xedges, yedges, <QuadMesh at 0x...>))
# differs on every run: shown, it would be drift for `check` in a fully seeded demo.
@pytest.mark.parametrize("value", [None, _Default(), [_Default(), _Default()], (_Default(),), lambda: 0,
                                   [1, _Default()], (1.5, "text", _Default())])
def test_noise_is_recognised(value: object) -> None:
    assert describe_value(value) is None


class _OnlyHtml:
    def _repr_html_(self) -> str:
        return "<b>shown</b>"


@pytest.mark.parametrize("value, text", [(3, "3"), ([], "[]"), ([1, (2, "b")], "[1, (2, 'b')]"), ("a", "'a'"),
                                         (_OnlyHtml(), None)])
def test_values_worth_showing(value: object, text: str | None) -> None:
    shown = describe_value(value)
    assert shown is not None and (text is None or shown["text/plain"] == text)



@pytest.mark.parametrize("source", ['"""The module docstring."""', 'import os\n"a string used as a comment"'])
def test_a_bare_string_is_not_a_value(source: str) -> None:
    # A setup cell that is only its docstring must not show the docstring again as a value.
    assert compile_cell(source, 1, "x.py", 0, True)[1] is None
    assert compile_cell(source + "\n41 + 1", 1, "x.py", 0, True)[1] is not None
