"""Issue 27: notebooks run as Jupyter runs them (cells in IPython, errors at their turn),
on_failure = "publish", and their downloads.

One module-scoped project holds our fixture notebooks (tests/notebook_fixtures.py), each as an
``.ipynb`` and as a MyST ``.md``, and a percent script, built once with on_failure = "publish"
(the ``broken`` fixture fails on purpose); the tests read its pages and run records. Jupyter
itself (nbclient) runs the same fixtures: the same cells must succeed and fail, and print the
same text.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jupytext
import pytest

from tests.conftest import REPO, copy_of, run_cli, shared_folder, write_demo
from tests.test_notebooks import cell as block, page
from tests.notebook_fixtures import (
    BROKEN, ERRORS, FIXTURES, MAGICS, Outcome, normalised, our_outcomes, write_fixtures)

SCRIPT = '''
"""plain: a percent script beside the notebooks' folder: it must not run in IPython."""
import builtins
import sys

# %% B-plain
print("get_ipython" in dir(builtins), "__file__" in globals(), sys.path[0].endswith("scripts"))
try:
    input()
except EOFError:
    print("input: EOF, as under python demos/scripts/plain.py")
'''
ENTRIES = [*FIXTURES, *(f"myst/{name}" for name in FIXTURES)]


def _build_fixtures(folder: Path) -> None:
    project = folder / "project"
    write_fixtures(project / "demos")
    # in a folder of its own: a notebook runs in its folder, which Jupyter's run holds nothing else of
    write_demo(project, "scripts/plain", SCRIPT)
    (project / "pyproject.toml").write_text('[tool.site_builder]\non_failure = "publish"\n', encoding="utf-8")
    done = run_cli("build", "-j", "2", cwd=project, timeout=240)
    (folder / "build.json").write_text(json.dumps([done.args, done.returncode, done.stdout, done.stderr]))


def _build_beside_jupyter(folder: Path) -> None:
    """Our build, and Jupyter's run of the same fixtures in a process of its own at the same time:
    that run mostly waits for its kernels to start and answer."""
    jupyter = subprocess.Popen([sys.executable, "-m", "tests.notebook_fixtures", str(folder)], cwd=REPO,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _build_fixtures(folder)
        _, stderr = jupyter.communicate(timeout=240)
    finally:
        if jupyter.poll() is None:
            jupyter.kill()
            jupyter.communicate()
    assert jupyter.returncode == 0, stderr


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """The project built once per test run (both xdist workers read it); the build's outcome."""
    folder = shared_folder(tmp_path_factory, "ipython-cells", _build_beside_jupyter)
    return folder / "project", subprocess.CompletedProcess(*json.loads((folder / "build.json").read_text()))


@pytest.fixture(scope="module")
def jupyter(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Outcome]]:
    """Each fixture as Jupyter runs it (once per test run, beside the build)."""
    folder = shared_folder(tmp_path_factory, "ipython-cells", _build_beside_jupyter)
    return {name: [Outcome(**o) for o in outcomes]
            for name, outcomes in json.loads((folder / "outcomes.json").read_text()).items()}


def cell(html: str, number: int) -> str:
    """The <section> of block-NUMBER on a page."""
    return block(html, f"block-{number}")


def shown(html: str) -> str:
    """The text of a page's (or a cell's) outputs, values and tracebacks, unescaped."""
    import html as html_module

    boxes = re.findall(r'<pre class="(?:output|traceback)[^"]*"[^>]*>(.*?)</pre>', html, re.S)
    return html_module.unescape(re.sub(r"<[^>]+>", "", "".join(boxes)))


# ---------------------------------------------------------------- as Jupyter runs them


@pytest.mark.parametrize("name", list(FIXTURES))
def test_the_same_cells_succeed_fail_and_print_as_in_jupyter(built, jupyter, name: str) -> None:
    project, _ = built
    for entry in (name, f"myst/{name}"):
        ours = our_outcomes(project, entry)
        theirs = jupyter[name]
        assert [o.status for o in ours] == [o.status for o in theirs], entry
        assert [o.images for o in ours] == [o.images for o in theirs], entry  # every figure, once each
        for index, (fixture, mine, jupyters) in enumerate(zip(FIXTURES[name], ours, theirs), start=1):
            if fixture.compare:
                continue
            where = f"{entry} block-{index}: {fixture.source!r}"
            assert normalised(mine.printed) == normalised(jupyters.printed), where
            assert mine.value == jupyters.value, where


def test_magics_run_and_what_they_print_is_shown(built) -> None:
    project, _ = built
    for entry in ("magics", "myst/magics"):
        html = page(project, entry)
        assert "0.333" in shown(cell(html, 1))  # %precision, through the displayhook
        assert "Writing mathfoo.py" in shown(cell(html, 3)) and "42" in shown(cell(html, 4))  # %%writefile, import
        assert "ran as __main__\n42" in shown(cell(html, 6))  # %run of a file the notebook wrote
        assert "'.'" in shown(cell(html, 9)) and "sub" in shown(cell(html, 10))  # %pwd, %cd: relative
        assert "env: GREETING=hello\nhello" in shown(cell(html, 12))
        assert "Wall time" in shown(cell(html, 13)) and "per loop" in shown(cell(html, 13))
        assert "CAPTURED, NOT SHOWN" in shown(cell(html, 16)) and "captured, not shown" not in shown(html)
        help_text = shown(cell(html, 17))
        assert "Signature: len(obj, /)" in help_text and "Return the number of items" in help_text
        source = shown(cell(html, 18))
        assert '"""Twice x."""' in source and "File:      mathfoo.py" in source  # relative to the run folder
        assert "from the shell" in shown(cell(html, 19)) and "from bash" in shown(cell(html, 23))
        assert "<b>bold from a cell magic</b>" in cell(html, 24) and "<em>shown</em>" in cell(html, 25)
        assert "0.7" in shown(cell(html, 28))
        assert "3 items from 3\n0" in shown(cell(html, 30))  # !cmd expands {n} and $n, sets _exit_code


def test_a_figure_given_as_the_value_shows_as_the_figure(built) -> None:
    project, _ = built
    for entry in ("magics", "myst/magics"):
        redrawn = cell(page(project, entry), 27)
        assert re.search(r'<img [^>]*src="_site_builder/block-27-figure-1\.png"', redrawn)
        assert "&lt;Figure size" not in redrawn and "<Figure size" not in redrawn
        once = cell(page(project, entry), 26)  # pyplot's figure: shown once, under its cell
        assert len(re.findall(r"<img ", once)) == 1
        shown_twice = cell(page(project, entry), 29)  # plt.show() in the middle: two figures, as in Jupyter
        assert len(re.findall(r'<img [^>]*src="_site_builder/block-29-figure-[12]\.png"', shown_twice)) == 2


def test_errors_are_the_cells_and_nobody_answers(built) -> None:
    project, _ = built
    for entry in ("errors", "myst/errors"):
        html = page(project, entry)
        syntax = cell(html, 1)
        assert 'data-status="expected-error"' in syntax and "SyntaxError" in syntax and "def f:" in shown(syntax)
        assert "after the syntax error" in shown(cell(html, 2))  # the next cells run
        for number in (3, 4, 6):  # input(), getpass, %debug: at once, with a clear message
            raised = cell(html, number)
            assert 'data-status="expected-error"' in raised and "StdinNotImplementedError" in raised
            assert "nobody answers a notebook the site builder runs" in raised
        assert "%pdb is on" in shown(cell(html, 8)) and "KeyError" in cell(html, 8)
        assert "ValueError: allowed by an option" in shown(cell(html, 10))  # #| error: true
        failing = shown(cell(html, 12))  # %run of a failing file: shown, the cell goes on
        assert 'File "failing.py", line 2, in fail' in failing and "after the failing run" in failing
        assert "ZeroDivisionError" in shown(cell(html, 13))
        assert "SystemExit: 0" in shown(cell(html, 14)) and "UsageError" in shown(cell(html, 15))
        assert 'data-status="ok"' in cell(html, 16)


def test_an_untagged_cell_that_does_not_compile_stops_the_notebook_at_its_turn(built) -> None:
    project, done = built
    line = 4  # the .ipynb's code cells counted one after the other: "x = (" on line 3
    md_line = (project / "demos" / "myst" / "broken.md").read_text(encoding="utf-8").split("\n").index(
        "print('in the broken cell')") + 1
    assert f"error: broken: block block-2 raised SyntaxError at demos/broken.ipynb:{line}" in done.stderr
    assert f"error: myst/broken: block block-2 raised SyntaxError at demos/myst/broken.md:{md_line}" in done.stderr
    html = page(project, "broken")
    assert "before the broken cell" in shown(cell(html, 1))
    assert 'data-status="error"' in cell(html, 2) and 'data-status="not-run"' in cell(html, 3)
    assert "never printed" not in shown(html)


def test_on_failure_publish_writes_the_site_with_the_failed_pages(built, tmp_path: Path) -> None:
    project, done = built
    assert done.returncode == 1
    assert "the site was written to build (on_failure = \"publish\")" in done.stderr
    assert not (project / "build.failed").exists()
    index = (project / "build" / "index.html").read_text(encoding="utf-8")
    marked = re.findall(r'<a href="([^"]+)/index.html">[^<]*</a> <span class="badge badge-failed">', index)
    assert sorted(marked) == ["broken", "myst/broken"]
    project = copy_of(project, tmp_path)  # rebuilt: the other tests read the original
    again = run_cli("build", cwd=project, timeout=120)  # never taken for an unchanged, good site
    assert again.returncode == 1 and "site unchanged" not in again.stderr


def test_no_path_of_the_building_machine_or_of_ipython_reaches_a_page(built) -> None:
    project, _ = built
    for entry in ENTRIES:
        html = page(project, entry)
        for leak in (str(project), str(Path.home()), "ipykernel_", "<ipython-input", "site-packages"):
            assert leak not in html, (entry, leak)


def test_percent_scripts_do_not_run_in_ipython(built) -> None:
    project, _ = built
    assert "False True True\ninput: EOF, as under python demos/scripts/plain.py" in shown(page(project, "scripts/plain"))


def test_downloads_keep_ipython_syntax_and_the_script_is_jupytexts(built) -> None:
    project, _ = built
    folder = project / "build" / "magics"
    notebook = json.loads((folder / "magics.ipynb").read_text(encoding="utf-8"))
    sources = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]
    assert sources == [c.source.rstrip("\n") for c in MAGICS]  # magics and help syntax as written
    source = (project / "demos" / "magics.ipynb").read_text(encoding="utf-8")
    expected = jupytext.writes(jupytext.reads(source, fmt="ipynb"), fmt="py:percent")
    assert (folder / "magics.py").read_text(encoding="utf-8") == expected
    assert "# %%writefile mathfoo.py" in expected and "# len?" in expected


def test_fixtures_are_what_the_tests_count_on() -> None:
    assert len(MAGICS) == 30 and len(ERRORS) == 16 and len(BROKEN) == 3


def test_a_comment_of_a_cell_magic_is_part_of_the_run_and_a_scripts_comment_is_not() -> None:
    from site_builder.run.records.inputs import code_fingerprint
    from site_builder.source.blocks import parse
    from tests.notebook_fixtures import FixtureCell, as_ipynb

    def notebook(comment: str) -> str:
        return as_ipynb([FixtureCell(f"%%writefile helper.py\n# {comment}\nX = 1")], "N")

    first, second = (code_fingerprint(parse(notebook(c), "demos/n.ipynb", "n"), notebook=True)
                     for c in ("one?", "two?"))
    assert first != second  # the file it writes differs: the notebook runs again
    script = "# %% B-a\n# Does it converge{}?\nx = 1\n"
    assert len({code_fingerprint(parse(script.format(c), "demos/s.py", "s")) for c in ("", " yet")}) == 1
