"""Notebooks as entries (.ipynb, MyST .md), cell options in every format, run_pattern / ignore_pattern.

One shared build (module scope) of a project holding one fixture per format; the unit tests
around it parse without building.
"""

from __future__ import annotations

import json
import re
import textwrap
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from site_builder.errors import ParseError, UsageError
from site_builder.source.blocks import parse
from site_builder.source.cell_options import display_of, split_options
from site_builder.source.syntax.ipython import as_python
from tests.conftest import MYST_FRONT_MATTER, copy_of, run_cli, shared_folder, write_demo
from tests.page_reader import cell, markup_text as text, page, printed

NOTEBOOK_FILE = "01.02 Stored Outputs.ipynb"  # named as real notebooks are: dots, spaces, capitals
NOTEBOOK = "01-02-stored-outputs"

MYST = MYST_FRONT_MATTER + """
# A MyST notebook

Some prose.

```{code-cell} ipython3
:tags: [hide-output]

print("myst out")
```

```{code-cell} ipython3
#| fig-cap: Loss going down
#| fig-alt: A falling line
#| label: fig-loss
import matplotlib.pyplot as plt
plt.plot([3, 2, 1])
```

```{code-cell} ipython3
#| echo: false
print("echo off")
```

```{code-cell} ipython3
#| output: false
print("output off")
```

```{code-cell} ipython3
#| eval: false
raise SystemExit("eval false ran")
```

```{code-cell} ipython3
#| code-fold: true
#| code-summary: Show the setup
answer = 42
```

```{code-cell} ipython3
#| include: false
print("include off")
```

```{code-cell} ipython3
:tags: [raises-exception]
#| bogus-option: 1
{}["missing"]
```
"""

PERCENT = '''
"""Options in a percent script."""
import sys

# %% B-folded tags=["hide-input"]
print("percent folded")

# %% B-quiet
#| echo: false
#| output: false
print("percent quiet")

# %% B-cell tags=["hide-cell"]
print("percent hide-cell")

# %% B-streams tags=["remove-stdout"]
print("percent stdout")
print("percent stderr", file=sys.stderr)

# %% B-typo tags=["hide_inptu"]
print("typo")
'''


def stored_output_notebook() -> nbformat.NotebookNode:
    """A notebook whose stored outputs carry a script and text that must never be shown."""
    code = nbformat.v4.new_code_cell
    first = code("%matplotlib inline\nimport matplotlib.pyplot as plt\nprint('first cell ran')")
    first.outputs = [
        nbformat.v4.new_output("display_data", data={"text/html": "<script>alert('stored')</script>"}),
        nbformat.v4.new_output("stream", name="stdout", text="STORED-OUTPUT-TEXT\n"),
    ]
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Stored outputs\n\nA notebook."),
        first,
        code("%timeit -n 1 -r 1 sum(range(10))"),
        code("%%time\ntotal = sum(range(5))"),
        code("!echo the shell says hi\nprint('after the shell', total)"),
        code("1 / 0", metadata={"tags": ["raises-exception"]}),
        code("print('no error here')", metadata={"tags": ["raises-exception"]}),
        code("print('hidden input')", metadata={"tags": ["hide-input"]}),
        code("print('removed cell')", metadata={"tags": ["remove-cell"]}),
        code("open('ran-skip.txt', 'w').write('x')", metadata={"tags": ["skip-execution"]}),
        code("import sys\nprint('to stdout')\nprint('to stderr', file=sys.stderr)",
             metadata={"tags": ["hide-output", "remove-stderr"]}),
        code("%%writefile note.txt\nwritten by a cell magic"),
        code("print(open('note.txt').read().strip())"),
    ])
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    return nb


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The project (built once per test run, for every worker; its tests only read it) and the build's stderr."""

    def make(project: Path) -> None:
        demos = project / "demos"
        (demos / "ui").mkdir(parents=True)
        nbformat.write(stored_output_notebook(), demos / NOTEBOOK_FILE)
        (demos / "book.md").write_text(MYST, encoding="utf-8")
        (demos / "notes.md").write_text("# Notes\n\nNot a notebook: no front matter.\n", encoding="utf-8")
        write_demo(project, "opts", PERCENT)
        write_demo(project, "ui/window_sgskip", "open('SHOWN-ONLY-RAN', 'w').write('x')\nprint('never')\n")
        write_demo(project, "ui/draft_ignored", "print('ignored')\n")
        (project / "pyproject.toml").write_text(
            '[tool.site_builder]\nrun_pattern = "^((?!sgskip).)*$"\nignore_pattern = "_ignored\\\\.py$"\n')
        result = run_cli("build", cwd=project, timeout=170)
        assert result.returncode == 0, result.stderr
        (project.parent / f"{project.name}.stderr").write_text(result.stderr, encoding="utf-8")

    project = shared_folder(tmp_path_factory, "notebooks", make)
    return project, (project.parent / f"{project.name}.stderr").read_text(encoding="utf-8")


# ---------------------------------------------------------------- notebooks


def test_notebooks_are_entries_named_by_the_url_rule(built: tuple[Path, str]) -> None:
    project, _ = built
    site = project / "build"
    assert (site / NOTEBOOK / "index.html").is_file()
    assert (site / "book" / "index.html").is_file()
    assert not (site / "notes").exists()  # Markdown without a notebook front matter
    assert not (site / "ui" / "draft_ignored").exists()  # ignore_pattern
    assert f'href="{NOTEBOOK}/index.html"' in (site / "index.html").read_text(encoding="utf-8")


def test_stored_outputs_are_never_shown_and_cells_run(built: tuple[Path, str]) -> None:
    project, _ = built
    html = page(project, NOTEBOOK)
    assert "alert('stored')" not in html and "STORED-OUTPUT-TEXT" not in html
    assert "first cell ran" in text(cell(html, "block-1"))
    for name in ("index.html", f"{NOTEBOOK}.ipynb", f"{NOTEBOOK}.py"):
        data = (project / "build" / NOTEBOOK / name).read_text(encoding="utf-8")
        assert "alert" not in data and "STORED-OUTPUT-TEXT" not in data, name


def test_ipython_syntax_runs_in_ipython(built: tuple[Path, str]) -> None:
    project, _ = built
    html = page(project, NOTEBOOK)
    assert "per loop" in text(cell(html, "block-2"))  # %timeit
    assert "Wall time" in text(cell(html, "block-3"))  # %%time, and `total` defined for later cells
    shell = printed(cell(html, "block-4"))
    assert "the shell says hi" in shell and "after the shell 10" in shell  # !cmd, its output captured
    assert "%matplotlib inline" in text(cell(html, "block-1"))  # shown as written
    assert "written by a cell magic" in printed(cell(html, "block-12"))  # %%writefile, in the run folder


def test_raises_exception_in_a_notebook_allows_the_error_and_goes_on(built: tuple[Path, str]) -> None:
    project, stderr = built
    html = page(project, NOTEBOOK)
    raised = cell(html, "block-5")
    assert 'data-status="expected-error"' in raised and "ZeroDivisionError" in raised
    calm = cell(html, "block-6")  # tagged, does not raise: fine in a notebook
    assert 'data-status="ok"' in calm and "Expected to raise" not in calm
    assert "no error here" in text(calm)


def test_notebook_tags_fold_remove_and_skip(built: tuple[Path, str]) -> None:
    project, _ = built
    html = page(project, NOTEBOOK)
    hidden = cell(html, "block-7")
    assert re.search(r'<details class="cell-fold fold-code">\s*<summary>Show code</summary>', hidden)
    assert "hidden input" in text(hidden)
    assert 'id="block-8"' not in html and "removed cell" not in html  # remove-cell
    skipped = cell(html, "block-9")
    assert "Not run (tagged skip-execution)." in text(skipped)
    assert not list(project.rglob("ran-skip.txt"))
    streams = cell(html, "block-10")
    assert re.search(r'<details class="cell-fold fold-output">\s*<summary>Show output</summary>', streams)
    assert "to stdout" in printed(streams) and "to stderr" not in printed(streams)


def test_myst_options_and_numbered_figure(built: tuple[Path, str]) -> None:
    project, _ = built
    html = page(project, "book")
    assert '<details class="cell-fold fold-output">' in cell(html, "block-1")
    figure = re.search(r'<figure class="artifact-image" id="fig-loss">.*?</figure>', cell(html, "block-2"), re.S)
    assert figure, "the labelled figure has its anchor"
    assert 'alt="A falling line"' in figure.group(0)
    assert "Figure 1: Loss going down" in text(figure.group(0))
    echo = cell(html, "block-3")
    assert "echo off" in text(echo) and 'class="code"' not in echo
    quiet = cell(html, "block-4")
    assert 'class="code"' in quiet and '<pre class="output">' not in quiet
    assert "Not run (#| eval: false)." in text(cell(html, "block-5"))
    fold = cell(html, "block-6")
    assert re.search(r"<details class=\"cell-fold fold-code\">\s*<summary>Show the setup</summary>", fold)
    assert "include off" not in html and 'id="block-7"' not in html


def test_markdown_notebook_lines_are_the_files_own(built: tuple[Path, str]) -> None:
    project, _ = built
    html = page(project, "book")
    lines = MYST.split("\n")
    line = lines.index('{}["missing"]') + 1
    assert f'demos/book.md&#34;, line {line}' in cell(html, "block-8")


def test_unknown_options_warn_naming_entry_block_and_line(built: tuple[Path, str]) -> None:
    _, stderr = built
    assert "opts: block B-typo (demos/opts.py:19): unknown cell tag 'hide_inptu'" in stderr
    assert "book: block block-8 (demos/book.md:" in stderr and "unknown cell option '#| bogus-option'" in stderr


def test_percent_script_options(built: tuple[Path, str]) -> None:
    project, _ = built
    html = page(project, "opts")
    assert '<details class="cell-fold fold-code">' in cell(html, "B-folded")
    quiet = cell(html, "B-quiet")
    assert 'class="code"' not in quiet and "percent quiet" not in quiet
    both = cell(html, "B-cell")
    assert '<details class="cell-fold fold-code">' in both and '<details class="cell-fold fold-output">' in both
    streams = cell(html, "B-streams")
    assert "percent stderr" in printed(streams) and "percent stdout" not in printed(streams)


def test_downloads_keep_the_options_and_never_the_stored_outputs(built: tuple[Path, str]) -> None:
    project, _ = built
    folder = project / "build" / NOTEBOOK
    script = (folder / f"{NOTEBOOK}.py").read_text(encoding="utf-8")
    assert '# %% tags=["hide-input"]' in script and "# %matplotlib inline" in script
    notebook = json.loads((folder / f"{NOTEBOOK}.ipynb").read_text(encoding="utf-8"))
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert code[6]["metadata"]["tags"] == ["hide-input"]
    assert "first cell ran" in "".join(code[0]["outputs"][0]["text"])  # this build's output
    book = project / "build" / "book"
    assert (book / "book.md").read_text(encoding="utf-8") == MYST
    cells = json.loads((book / "book.ipynb").read_text(encoding="utf-8"))["cells"]
    assert "".join(cells[2]["source"]).startswith("#| fig-cap: Loss going down\n#| fig-alt: A falling line\n")
    percent = json.loads((project / "build" / "opts" / "opts.ipynb").read_text(encoding="utf-8"))["cells"]
    assert any(c.get("metadata", {}).get("tags") == ["hide-input"] for c in percent)
    assert any("".join(c["source"]).startswith("#| echo: false\n#| output: false\n") for c in percent)
    with zipfile.ZipFile(project / "build" / "_downloads" / "scripts.zip") as archive:
        assert archive.read(f"{NOTEBOOK}.py").decode() == script


# ---------------------------------------------------------------- run_pattern


def test_shown_only_entry_has_its_page_and_no_process_or_record(built: tuple[Path, str]) -> None:
    project, _ = built
    html = page(project, "ui/window_sgskip")
    assert "the <code>run_pattern</code> setting leaves it out" in html
    assert "open(" in text(html) and 'data-status="skipped"' in html
    assert (project / "build" / "ui" / "window_sgskip" / "window_sgskip.py").is_file()
    assert not list(project.rglob("SHOWN-ONLY-RAN"))  # no process ran it
    assert not (project / "_freeze" / "ui" / "window_sgskip").exists()  # no record
    assert (project / "_freeze" / "opts").is_dir()


def test_frozen_and_check_leave_shown_only_entries_alone(built: tuple[Path, str], tmp_path: Path) -> None:
    project = copy_of(built[0], tmp_path, built[0].name)  # the others read the shared one; the name is the site's title
    frozen = run_cli("build", "--frozen", cwd=project, timeout=120)
    assert frozen.returncode == 0, frozen.stderr
    check = run_cli("check", "opts", "book", cwd=project, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    named = run_cli("check", "ui/window_sgskip", cwd=project, timeout=60)
    assert named.returncode == 2 and "never run (the run_pattern setting" in named.stderr


# ---------------------------------------------------------------- without building


def notebook_text(language: str = "python") -> str:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1)")])
    nb.metadata["kernelspec"] = {"name": language, "language": language, "display_name": language.upper()}
    return nbformat.writes(nb)


def test_a_non_python_kernel_is_a_clear_error() -> None:
    with pytest.raises(ParseError, match=r"stats: demos/stats\.ipynb is a R notebook \(kernel language 'R'\)"):
        parse(notebook_text("R"), "demos/stats.ipynb", "stats")


def test_an_unreadable_notebook_is_a_clear_error() -> None:
    with pytest.raises(ParseError, match=r"broken: demos/broken\.ipynb is not a notebook: not JSON \(Expecting property name"):
        parse("{not json", "demos/broken.ipynb", "broken")


def test_ipynb_lines_count_through_its_code_cells() -> None:
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("a = 1\nb = 2"), nbformat.v4.new_markdown_cell("text"),
        nbformat.v4.new_code_cell("#| echo: false\nc = 3")])
    script = parse(nbformat.writes(nb), "demos/n.ipynb", "n")
    assert [(c.name, c.first_line, c.text) for c in script.code_cells] == [("block-1", 1, "a = 1\nb = 2"),
                                                                          ("block-2", 5, "c = 3")]
    assert script.run_source.split("\n")[4] == "c = 3"


def test_a_cell_that_does_not_compile_is_no_parse_error() -> None:
    # As in Jupyter, it fails at its turn (tests/test_ipython_cells.py builds it), not the notebook.
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import json"),
                                         nbformat.v4.new_code_cell("x = (")])
    script = parse(nbformat.writes(nb), "demos/n.ipynb", "n")
    assert [c.text for c in script.code_cells] == ["import json", "x = ("] and script.imports == ("json",)


def test_imports_are_found_in_cells_of_ipython_syntax() -> None:
    assert as_python("import numpy as np\nx = !ls") == "import numpy as np\nx = get_ipython().getoutput('ls')\n"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("%%time\nimport numpy"),
                                         nbformat.v4.new_code_cell("len?\nimport pandas")])
    assert parse(nbformat.writes(nb), "demos/n.ipynb", "n").imports == ("pandas",)  # a cell magic's is a string


@pytest.mark.parametrize(("tags", "options", "expected"), [
    (("hide-input",), (), {"code": "fold"}),
    (("hide_input",), (), {"code": "fold"}),  # Jupyter Book 0.x spelling
    (("hide-cell",), (), {"code": "fold", "output": "fold"}),
    ((), (("code-fold", "show"),), {"code": "open"}),
    (("hide-input",), (("echo", "false"),), {"code": "remove"}),
    ((), (("include", "false"),), {"removed": True}),
    ((), (("eval", "false"),), {"runs": False}),
    (("remove-stdout", "remove-stderr"), (), {"stdout": False, "stderr": False}),
])
def test_display_of_options(tags: tuple[str, ...], options: tuple[tuple[str, str], ...],
                            expected: dict[str, object]) -> None:
    display = display_of(tags, options)
    assert {key: getattr(display, key) for key in expected} == expected


def test_option_lines_are_read_only_at_the_top_of_a_cell() -> None:
    options, taken = split_options(['#| fig-cap: "A title"', "#|label: fig-a", "x = 1", "#| echo: false"])
    assert (options, taken) == ((("fig-cap", "A title"), ("label", "fig-a")), 2)


def test_invalid_patterns_are_config_errors(tmp_path: Path) -> None:
    from site_builder.config import load_config

    (tmp_path / "pyproject.toml").write_text('[tool.site_builder]\nrun_pattern = "(unclosed"\n')
    with pytest.raises(UsageError, match=r"run_pattern is not a valid regular expression"):
        load_config(tmp_path)


def test_percent_options_and_tags_parse() -> None:
    source = textwrap.dedent('''\
        # %% B-a tags=["hide-output"]
        #| fig-cap: A curve
        x = 1
    ''')
    (cell,) = parse(source, "demos/a.py", "a").code_cells
    assert (cell.tags, cell.options, cell.text, cell.first_line) == (
        ("hide-output",), (("fig-cap", "A curve"),), "x = 1", 3)


# ---------------------------------------------------------------- in a browser

@pytest.fixture(scope="module")
def site_url(browser: object, built: tuple[Path, str]) -> Iterator[str]:
    from tests.browser_support import serve_site

    with serve_site(built[0] / "build") as url:
        yield url


@pytest.mark.parametrize("script", [True, False], ids=["with-js", "without-js"])
def test_folded_code_and_output_open_with_the_keyboard(open_watched_page: Any, site_url: str, script: bool) -> None:
    page, watch = open_watched_page(site_url, java_script_enabled=script)
    page.goto(site_url + "opts/index.html")
    for block, fold in (("B-folded", "fold-code"), ("B-cell", "fold-output")):
        summary = page.locator(f"#{block} details.{fold} > summary")
        inside = page.locator(f"#{block} details.{fold} > :not(summary)").first
        assert not inside.is_visible()
        summary.focus()
        page.keyboard.press("Enter")
        assert inside.is_visible(), f"{block}: Enter opens the {fold}"
        page.keyboard.press("Space")
        assert not inside.is_visible(), f"{block}: Space closes it again"
    if script:  # printed open, closed again after (site.js)
        page.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")
        assert page.locator("details.cell-fold:not([open])").count() == 0
        page.evaluate("() => window.dispatchEvent(new Event('afterprint'))")
        assert page.locator("details.cell-fold[open]").count() == 0
    watch.assert_clean()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_notebook_pages_are_accessible(scheme_looks: Any, site_url: str, scheme: str) -> None:
    from tests.browser_support import DESKTOP, describe_violations, serious_look

    for name in (NOTEBOOK, "book", "opts", "ui/window_sgskip"):
        serious, watch = scheme_looks.seen(site_url, site_url + f"{name}/index.html", scheme, serious_look,
                                           prepare=_open_every_fold, viewport=DESKTOP)
        assert not serious, f"{name}: " + describe_violations(serious)
        watch.assert_clean()


def _open_every_fold(page: Any) -> None:
    page.evaluate("() => document.querySelectorAll('details.cell-fold').forEach(d => d.open = true)")


def test_a_kernel_named_for_another_language_is_refused_without_a_language() -> None:
    text = "---\nkernelspec:\n  name: coconut\n---\n\n```{code-cell}\nx = 1\n```\n"
    with pytest.raises(ParseError, match=r"c: demos/c\.md is a coconut notebook \(kernel language 'coconut'\)"):
        parse(text, "demos/c.md", "c")


def test_a_myst_kernelspec_with_a_name_only_reads_with_its_lines() -> None:
    # MyST-NB writes "kernelspec: {name: python3}"; nbformat's schema wants a display_name too.
    text = textwrap.dedent("""\
        ---
        file_format: mystnb
        kernelspec:
          name: python3
        ---

        ````md
        ```{code-cell} ipython3
        shown as an example, not a cell
        ```
        ````

        ```{code-cell} ipython3
        y = 2
        ```
    """)
    (cell,) = parse(text, "demos/k.md", "k").code_cells
    assert (cell.text, cell.first_line) == ("y = 2", text.split("\n").index("y = 2") + 1)
