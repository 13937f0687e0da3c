"""Issue 26, item 2: one line means one line.

Whatever a notebook's metadata or a file's name holds, the builder's output (stderr, the
GitHub annotations, progress, ``--junit``, the failed page) shows it escaped, one line per
message, and never as a workflow command the Actions runner would obey.
"""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from site_builder.errors import one_line
from tests.conftest import run_cli, write_demo

# A kernel's display name as an attacker writes it: lines the runner would read as commands,
# a terminal title (OSC), a screen clear (CSI) and a NUL.
HOSTILE_NAME = "R\n::add-mask::secret\n::stop-commands::tok\u001b]0;title\u0007\u001b[2J\u0000"
RAISES = '"""A demo that raises."""\n# %% B-one\nraise ValueError("boom")\n'
# Workflow commands the builder means: error and warning annotations (GITHUB_ACTIONS=true).
MEANT = re.compile(r"::(error|warning)( [^:]*)?::")


def _notebook(kernelspec: dict[str, str]) -> str:
    return json.dumps({
        "nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": kernelspec},
        "cells": [{"cell_type": "code", "id": "a", "metadata": {}, "source": "print(1)",
                   "outputs": [], "execution_count": None}],
    })


@pytest.fixture(scope="module")
def hostile_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    """A project whose notebook's kernel and whose file names carry control characters, built
    with --junit under GITHUB_ACTIONS=true."""
    project = tmp_path_factory.mktemp("hostile")
    write_demo(project, "good", '"""good \u2014 prints."""\n# %% B-one\nprint("[B-one] fine")\n')
    demos = project / "demos"
    (demos / "kernel.ipynb").write_text(_notebook({"name": "ir", "language": "R", "display_name": HOSTILE_NAME}),
                                        encoding="utf-8")
    for name in ("newline\n::warning::evil", "escape\x1b]0;title\x07", "::add-mask::colon"):
        (demos / f"{name}.py").write_text(RAISES, encoding="utf-8")
    (demos / os.fsdecode(b"undecodable\xff.py")).write_text(RAISES, encoding="utf-8")
    done = run_cli("build", "--junit", "report.xml", cwd=project, env={"GITHUB_ACTIONS": "true"})
    return project, done


def test_one_line_escapes_what_would_act_and_keeps_the_rest() -> None:
    assert one_line("plain text: a, b; 100% \u00e9\u4e2d\t!") == "plain text: a, b; 100% \u00e9\u4e2d\t!"
    assert one_line(HOSTILE_NAME) == "R\\n::add-mask::secret\\n::stop-commands::tok\\x1b]0;title\\x07\\x1b[2J\\x00"
    assert one_line("a\r\n\x85b\u2028c\u202ed") == "a\\r\\n\\x85b\\u2028c\\u202ed"
    assert one_line(os.fsdecode(b"x\xffy")) == "x\\xffy"  # a file name's undecodable byte
    assert one_line("\ud800") == "\\ud800"  # a lone surrogate from JSON
    assert one_line("::error::x") == "\\x3a:error::x" and one_line("  ::x::y") == "  \\x3a:x::y"
    assert one_line("a ##[add-mask]b") == "a #\\x23[add-mask]b"  # the runner's older form, anywhere
    for text in (HOSTILE_NAME, "::a::b", "##[x]"):
        assert one_line(one_line(text)) == one_line(text)


def test_no_line_of_the_output_is_a_command_the_builder_did_not_mean(hostile_build: tuple[Path, object]) -> None:
    _, done = hostile_build
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    for stream in (done.stdout, done.stderr):
        assert not re.search("[\x00\x07\x1b\x9b]", stream), stream
        assert "##[" not in stream
        for line in stream.splitlines():
            if line.lstrip().startswith("::"):
                assert MEANT.match(line), line
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::")]
    assert len(annotations) == 5  # one per failed entry, each on its line


def test_each_error_is_one_line_naming_the_entry_with_its_text_escaped(hostile_build: tuple[Path, object]) -> None:
    _, done = hostile_build
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 5, done.stderr
    kernel = next(line for line in errors if line.startswith("error: kernel: "))
    assert "is a R\\n::add-mask::secret\\n::stop-commands::tok\\x1b]0;title\\x07\\x1b[2J\\x00 notebook" in kernel
    assert "demos/newline\\n::warning::evil.py:3: boom" in done.stderr
    assert "demos/escape\\x1b]0;title\\x07.py:3" in done.stderr
    assert "demos/undecodable\\xff.py:3" in done.stderr


def test_the_junit_report_is_well_formed_xml(hostile_build: tuple[Path, object]) -> None:
    project, _ = hostile_build
    data = (project / "report.xml").read_bytes()
    root = ET.fromstring(data)
    files = {case.get("file") for case in root.iter("testcase")}
    assert "demos/escape\\x1b]0;title\\x07.py" in files and "demos/undecodable\\xff.py" in files
    lxml = pytest.importorskip("lxml.etree")  # libxml2: another parser, strict (no recovery)
    lxml.fromstring(data, lxml.XMLParser(recover=False, resolve_entities=False))
    assert not re.search(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]|\xc2[\x80-\x9f]", data)


def test_the_failed_page_shows_the_text_escaped(hostile_build: tuple[Path, object]) -> None:
    project, _ = hostile_build
    failed = project / "build.failed"
    page = (failed / "kernel" / "index.html").read_text(encoding="utf-8")
    assert "is a R\\n::add-mask::secret\\n::stop-commands::tok\\x1b]0;title\\x07\\x1b[2J\\x00 notebook" in page
    for path in failed.rglob("*.html"):
        assert not re.search("[\x00\x07\x1b]", path.read_text(encoding="utf-8")), path
    assert (failed / "undecodable" / "index.html").is_file()  # its page, not a crash
