"""Issue 26: no control character reaches a page, whatever string brings it.

A notebook's title, summary, cell names and metadata, a script's docstring and block names, a
file's name, and a demo's printed value can all carry terminal escapes (ESC/OSC/CSI), NUL, BEL
and other C0/C1 controls. Every page the site writes shows their text without them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from markupsafe import Markup

from site_builder.site.safety.text import finalize, page_text
from tests.conftest import build_site, run_cli, write_demo

CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _notebook(title: str) -> str:
    return json.dumps({
        "nbformat": 4, "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "language": "python", "display_name": "Py\x1b]0;T\x07"},
                     "title": "Meta\x1b[2J"},
        "cells": [
            {"cell_type": "markdown", "id": "m", "metadata": {},
             "source": f"# {title}\n\nSummary \x07bell \x01 here \x9b.\n\n```\ncode\x1b[2J\n```\n"},
            {"cell_type": "code", "id": "a", "metadata": {"name": "cell\x1bname", "tags": ["t\x1b"]},
             "source": "print('out\\x1b[31mred\\x1b[0m\\x00')\n'v\\x1b]0;a\\x07'", "outputs": [],
             "execution_count": None},
        ],
    })


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("controls")
    write_demo(project, "script", '"""Title \x1b]0;x\x07 with esc.\n\nPurpose \x1b[31mhere\x1b[0m.\n"""\n'
               '# %% B-one \x1b[2J\nprint("a\\x1b[2Jb\\x07")\n')
    demos = project / "demos"
    (demos / "notebook.ipynb").write_text(_notebook("Title \x1b[31mred\x1b[0m\x00 x"), encoding="utf-8")
    (demos / "named\x1b[1m.ipynb").write_text(_notebook("Other"), encoding="utf-8")
    return build_site(project)


def test_no_page_carries_a_control_character(site: Path) -> None:
    pages = [p for p in site.rglob("*") if p.suffix in {".html", ".xml", ".css", ".json"} and "pagefind" not in p.parts]
    assert len([p for p in pages if p.name == "index.html"]) >= 4
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert not CONTROLS.search(text), (page, CONTROLS.findall(text))


def test_the_text_around_the_controls_still_shows(site: Path) -> None:
    page = (site / "notebook" / "index.html").read_text(encoding="utf-8")
    assert "<h1" in page and ">Title red" in page  # a colour sequence goes as a whole
    assert "Summary bell  here ." in page
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "Title  with esc." in index  # a terminal-title sequence goes as a whole


def test_page_text_removes_controls_without_reshaping_markup() -> None:
    assert page_text("plain \u00e9\u4e2d\t\n\r!") == "plain \u00e9\u4e2d\t\n\r!"
    assert page_text("a\x1b[1;31mb\x1b]0;t\x07c\x00d\x85e\x7f") == "abcde"
    assert page_text("x\ud800") == "x\ufffd"  # a lone surrogate UTF-8 cannot carry
    # An OSC "sequence" running across markup is removed a character at a time, never as a whole.
    html = Markup('<a href="\x1b]">x</a><img alt="\x07javascript:1">')
    assert finalize(html) == Markup('<a href="]">x</a><img alt="javascript:1">')
    assert isinstance(finalize(html), Markup) and finalize(3) == 3


def test_a_failed_page_carries_no_control_character(tmp_path: Path) -> None:
    write_demo(tmp_path, "bad\x1b]0;t\x07", '"""Fails \x1b[2J."""\n# %% B-one\nraise ValueError("\\x1b[2Jboom\\x00")\n')
    done = run_cli("build", cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    pages = list((tmp_path / "build.failed").rglob("*.html"))
    assert pages
    for page in pages:
        assert not CONTROLS.search(page.read_text(encoding="utf-8")), page
