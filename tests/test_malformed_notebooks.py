"""Issue 26, item 3: every malformed notebook is a clear error.

A notebook is checked against nbformat's schema (nbformat 3 upgraded to 4, as Jupyter opens
it) before it is parsed: each problem is one line naming the entry, the file, where in the
notebook and what is wrong; the build exits 1 as for a demo that fails to parse, the last
good site stays as it was, and nothing ends in a traceback.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from site_builder.errors import ParseError
from site_builder.source.blocks import parse
from tests.conftest import MYST_FRONT_MATTER, run_cli, write_demo

GOOD = {
    "nbformat": 4, "nbformat_minor": 5,
    "metadata": {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}},
    "cells": [
        {"cell_type": "markdown", "id": "m", "metadata": {}, "source": "# A notebook\n\nIt prints."},
        {"cell_type": "code", "id": "c", "metadata": {}, "source": "print('[c] ran')", "outputs": [],
         "execution_count": None},
    ],
}
# nbformat 3, as the notebooks of 2013-2015 are: worksheets, a heading cell, "input" for source.
NBFORMAT_3 = {
    "nbformat": 3, "nbformat_minor": 0, "metadata": {"name": ""},
    "worksheets": [{"metadata": {}, "cells": [
        {"cell_type": "heading", "level": 1, "metadata": {}, "source": "An old notebook"},
        {"cell_type": "markdown", "metadata": {}, "source": "Written in nbformat 3."},
        {"cell_type": "code", "collapsed": False, "input": "print('[v3] ran in ' + 'nbformat 4')",
         "language": "python", "metadata": {}, "outputs": []},
    ]}],
}


def edited(change: Callable[[dict[str, Any]], None]) -> str:
    notebook = copy.deepcopy(GOOD)
    change(notebook)
    return json.dumps(notebook)


def _set(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(notebook: dict[str, Any]) -> None:
        target = notebook
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


def _drop(path: list[Any]) -> Callable[[dict[str, Any]], None]:
    def change(notebook: dict[str, Any]) -> None:
        target = notebook
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return change


# (file stem, the notebook's text, what the one line says after "<stem>: demos/<stem>.ipynb ")
MALFORMED_IPYNB = [
    ("no-source", edited(_drop(["cells", 1, "source"])), "is not a valid notebook: cell 2: 'source' is missing"),
    ("no-cell-type", edited(_drop(["cells", 1, "cell_type"])),
     "is not a valid notebook: cell 2: 'cell_type' is missing"),
    ("source-42", edited(_set(["cells", 1, "source"], 42)),
     "is not a valid notebook: cell 2: source must be a string or a list of strings, not 42"),
    ("kernelspec-string", edited(_set(["metadata", "kernelspec"], "python3")),
     'is not a valid notebook: metadata.kernelspec must be a mapping, not "python3"'),
    ("markdown-object", edited(_set(["cells", 0, "source"], {"text": "hi"})),
     'is not a valid notebook: cell 1: source must be a string or a list of strings, not {"text": "hi"}'),
    ("bad-tags", edited(_set(["cells", 1, "metadata", "tags"], [1, None, {}])),
     "is not a valid notebook: cell 2: metadata.tags[0] must be a string, not 1"),
    ("language-list", edited(_set(["metadata", "kernelspec", "language"], ["python"])),
     'is not a valid notebook: metadata.kernelspec.language must be a string, not ["python"]'),
    ("cells-mapping", edited(_set(["cells"], {"a": 1})), 'is not a valid notebook: cells must be a list, not {"a": 1}'),
    ("id-number", edited(_set(["cells", 1, "id"], 5)), "is not a valid notebook: cell 2: id must be a string, not 5"),
    ("source-list-number", edited(_set(["cells", 1, "source"], ["print(1)\n", 5])),
     'is not a valid notebook: cell 2: source must be a string or a list of strings, not ["print(1)\\n", 5]'),
    ("attachment-string", edited(_set(["cells", 0, "attachments"], {"a.png": "zz"})),
     'is not a valid notebook: cell 1: attachments.a.png must be a mapping, not "zz"'),
    ("not-json", "{'cells': [", "is not a notebook: not JSON (Expecting property name enclosed in double quotes"),
    ("json-list", "[1, 2, 3]", "is not a notebook: its JSON is a list, not an object"),
    ("empty", "", "is empty: a notebook is a JSON object (nbformat 4)"),
    ("nbformat-five", edited(_set(["nbformat"], 5)), "is not a notebook: 'nbformat' is 5, not 1 to 4"),
]
MYST_BODY = "\n# A MyST notebook\n\n```{code-cell} ipython3\nprint('[myst] ran')\n```\n"
MYST_HEAD = "---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n"
MALFORMED_MARKDOWN = [
    ("front-not-yaml", MYST_HEAD + "kernelspec: [unclosed\n---\n" + MYST_BODY,
     ":6: its front matter is not valid YAML: expected ',' or ']'"),
    ("front-kernelspec-list", MYST_HEAD + "kernelspec: [python3]\n---\n" + MYST_BODY,
     ": its front matter's kernelspec must be a mapping of keys to values, not a list"),
    ("front-jupytext-number", "---\njupytext: 5\nkernelspec:\n  name: python3\n---\n" + MYST_BODY,
     ": its front matter's jupytext must be a mapping of keys to values, not a number"),
    ("front-unclosed", MYST_HEAD + "kernelspec:\n  name: python3\n" + MYST_BODY,
     ":11: its front matter is not valid YAML"),
    ("cell-tags-numbers", MYST_FRONT_MATTER + "\n```{code-cell} ipython3\n:tags: [1, 2]\nprint(1)\n```\n",
     " is not a valid notebook: a cell's metadata.tags[0] must be a string, not 1"),
    ("cell-options-list", MYST_FRONT_MATTER + "\n```{code-cell} ipython3\n---\n- a\n---\nprint(1)\n```\n",
     ' is not a valid notebook: a cell\'s metadata must be a mapping, not ["a"]'),
]


@pytest.mark.parametrize(("stem", "text", "said"), MALFORMED_IPYNB, ids=[c[0] for c in MALFORMED_IPYNB])
def test_a_malformed_ipynb_is_one_line_naming_what_is_wrong(stem: str, text: str, said: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse(text, f"demos/{stem}.ipynb", stem)
    assert str(caught.value).startswith(f"{stem}: demos/{stem}.ipynb {said}"), str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(("stem", "text", "said"), MALFORMED_MARKDOWN, ids=[c[0] for c in MALFORMED_MARKDOWN])
def test_a_markdown_notebook_with_malformed_front_matter_or_options_is_one_line(stem: str, text: str,
                                                                               said: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse(text, f"demos/{stem}.md", stem)
    assert str(caught.value).startswith(f"{stem}: demos/{stem}.md{said}"), str(caught.value)


def test_an_nbformat_3_notebook_is_upgraded_as_jupyter_opens_it() -> None:
    script = parse(json.dumps(NBFORMAT_3), "demos/old.ipynb", "old")
    assert script.title == "An old notebook"
    assert [c.text for c in script.code_cells] == ["print('[v3] ran in ' + 'nbformat 4')"]


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, dict[str, bytes]]:
    """A project built once (a script, a notebook, an nbformat 3 notebook), then again with every
    malformed notebook added."""
    project = tmp_path_factory.mktemp("malformed")
    write_demo(project, "script", '"""A script."""\n# %% B-one\nprint("[B-one] fine")\n')
    (project / "demos" / "good.ipynb").write_text(json.dumps(GOOD), encoding="utf-8")
    (project / "demos" / "old.ipynb").write_text(json.dumps(NBFORMAT_3), encoding="utf-8")
    first = run_cli("build", cwd=project)
    assert first.returncode == 0, first.stderr
    before = {p.relative_to(project / "build").as_posix(): p.read_bytes()
              for p in (project / "build").rglob("*") if p.is_file()}
    for stem, text, _ in MALFORMED_IPYNB:
        (project / "demos" / f"{stem}.ipynb").write_text(text, encoding="utf-8")
    for stem, text, _ in MALFORMED_MARKDOWN:
        (project / "demos" / f"{stem}.md").write_text(text, encoding="utf-8")
    return project, run_cli("build", cwd=project), before


def test_the_nbformat_3_notebook_builds_and_runs(rebuilt: tuple[Path, Any, dict[str, bytes]]) -> None:
    _, _, before = rebuilt
    assert "[v3] ran in nbformat 4" in before["old/index.html"].decode("utf-8")


def test_the_build_fails_with_one_line_per_malformed_notebook_and_the_site_intact(
        rebuilt: tuple[Path, Any, dict[str, bytes]]) -> None:
    project, done, before = rebuilt
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == len(MALFORMED_IPYNB) + len(MALFORMED_MARKDOWN), done.stderr
    for stem, _, said in MALFORMED_IPYNB:
        assert f"error: {stem}: demos/{stem}.ipynb {said}" in done.stderr
    for stem, _, said in MALFORMED_MARKDOWN:
        assert f"error: {stem}: demos/{stem}.md{said}" in done.stderr
    after = {p.relative_to(project / "build").as_posix(): p.read_bytes()
             for p in (project / "build").rglob("*") if p.is_file()}
    assert after == before  # the last good site, untouched
    failed = project / "build.failed"
    assert (failed / "source-42" / "index.html").is_file() and (failed / "good" / "index.html").is_file()
