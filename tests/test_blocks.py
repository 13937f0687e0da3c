"""Tests for the parse stage (site_builder.source.blocks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from site_builder.source.blocks import parse
from site_builder.source.parsed import Script
from site_builder.errors import ParseError

DEMO = Path(__file__).resolve().parent.parent / "demos" / "attention.py"

DOC = '''"""demo.py — do a thing.

Blocks
------
[B-one]  first block,
         continued
[B-two]  second block
"""
'''


def run(source: str, **kwargs: object) -> Script:
    return parse(source, "demos/demo.py", "demo", **kwargs)  # type: ignore[arg-type]


def names(script: Script) -> list[str]:
    return [c.name for c in script.code_cells]


# --- markers -------------------------------------------------------------------------


def test_markers_inside_strings_are_not_markers() -> None:
    src = '"""Doc.\n# %% B-doc\n"""\nx = """\n# %% B-str\n"""\n# %% B-real\ny = 1\n'
    script = run(src)
    assert names(script) == ["setup", "B-real"]
    assert script.cells[1].marker_line == 7


def test_indented_marker_is_not_a_marker() -> None:
    src = "if True:\n    # %% B-in\n    x = 1\n"
    assert names(run(src)) == ["setup"]


def test_no_markers_gives_one_setup_cell() -> None:
    src = "x = 1\nprint(x)\n\n\n"
    (cell,) = run(src).cells
    assert (cell.kind, cell.name, cell.text, cell.first_line, cell.marker_line) == (
        "code", "setup", "x = 1\nprint(x)", 1, None,
    )


def test_empty_script_still_has_setup() -> None:
    (cell,) = run("").cells
    assert (cell.name, cell.text) == ("setup", "")


def test_empty_setup_is_dropped_when_script_starts_with_marker() -> None:
    script = run("\n\n# %% B-a\nx = 1\n")
    assert names(script) == ["B-a"]
    assert script.cells[0].first_line == 4


def test_setup_and_cell_text_and_lines() -> None:
    src = "import os\n\n# %% B-a\n\nx = 1\n\n\n# %% B-b\ny = 2\n"
    setup, a, b = run(src).cells
    assert (setup.text, setup.first_line) == ("import os", 1)
    assert (a.text, a.first_line, a.marker_line) == ("\nx = 1", 4, 3)
    assert (b.text, b.first_line, b.marker_line) == ("y = 2", 9, 8)


def test_crlf_gives_same_cells_and_lines() -> None:
    src = "import os\n\n# %% B-a\nx = 1\n# %% [markdown]\n# Hi\n# %% B-b\ny = '''a\nb'''\n"
    lf, crlf = run(src), run(src.replace("\n", "\r\n"))
    assert lf.cells == crlf.cells
    assert [c.first_line for c in crlf.cells] == [1, 4, 6, 8]
    assert "\r" not in "".join(c.text for c in crlf.cells)


def test_markdown_cells() -> None:
    src = "x = 1\n# %% [markdown]\n# # Title\n#\n# Some *text*.\n#no space\n\n# %% [md]\n# two\n"
    _, md, md2 = run(src).cells
    assert (md.kind, md.name, md.marker_line, md.first_line) == ("markdown", "", 2, 3)
    assert md.text == "# Title\n\nSome *text*.\nno space"
    assert (md2.kind, md2.text) == ("markdown", "two")


def test_markdown_cell_as_string_and_titled_markdown() -> None:
    src = 'x = 1\n# %% B-x [markdown]\n"""\nProse\n  here\n"""\n'
    md = run(src).cells[1]
    assert (md.kind, md.name, md.text) == ("markdown", "", "Prose\n  here")


def test_markdown_cell_with_code_is_an_error() -> None:
    with pytest.raises(ParseError, match=r"demos/demo\.py:2"):
        run("x = 1\n# %% [markdown]\n# prose\nprint(1)\n")


def test_unnamed_markers_get_ordinal_names() -> None:
    src = "x = 1\n# %%\na = 1\n# %% [markdown]\n# text\n#%%\nb = 2\n"
    assert names(run(src)) == ["setup", "block-1", "block-2"]


def test_tags_metadata() -> None:
    src = 'x = 1\n# %% B-overflow tags=["raises-exception", "slow"]\n1 / 0\n# %% B-plain\ny = 2\n'
    script = run(src)
    assert script.cells[1].name == "B-overflow"
    assert script.cells[1].tags == ("raises-exception", "slow")
    assert script.cells[2].tags == ()


def test_json_object_metadata_and_unnamed_with_tags() -> None:
    src = 'x = 1\n# %% B-a {"tags": ["a"]}\ny = 2\n# %% tags=["b"] active="py"\nz = 3\n'
    _, a, b = run(src).cells
    assert (a.name, a.tags) == ("B-a", ("a",))
    assert (b.name, b.tags) == ("block-2", ("b",))


@pytest.mark.parametrize("marker", ['# %% B-a tags=["oops"', '# %% B-a tags="x"', "# %% [raw]"])
def test_bad_metadata_is_a_parse_error(marker: str) -> None:
    with pytest.raises(ParseError, match=r"demos/demo\.py:2"):
        run(f"x = 1\n{marker}\ny = 2\n")


# --- errors --------------------------------------------------------------------------


def test_duplicate_names_name_both_lines() -> None:
    src = "x = 1\n# %% B-a\ny = 1\n# %% B-b\n# %% B-a\nz = 1\n"
    with pytest.raises(ParseError) as info:
        run(src)
    assert str(info.value) == "demo: block B-a is defined twice, at demos/demo.py:2 and :5"


def test_marker_named_setup_clashes_with_setup() -> None:
    with pytest.raises(ParseError, match=r"block setup is defined twice"):
        run("x = 1\n# %% setup\ny = 2\n")


def test_syntax_error_names_block_and_line() -> None:
    src = "x = 1\n# %% B-ok\ny = 2\n# %% B-bad\nz = 3\nif z\n    pass\n"
    with pytest.raises(ParseError) as info:
        run(src)
    message = str(info.value)
    assert message.startswith("demo: block B-bad raised SyntaxError at demos/demo.py:6: ")


def test_untokenizable_source_is_a_parse_error_with_line() -> None:
    src = 'x = 1\n# %% B-a\ny = """never closed\n# %% B-b\nz = 1\n'
    with pytest.raises(ParseError, match=r"demo: block B-a .*demos/demo\.py:3"):
        run(src)


def test_bad_indentation_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match=r"demos/demo\.py:3"):
        run("if True:\n        x = 1\n    y = 2\n")


def test_future_import_does_not_leak_from_parser() -> None:
    # blocks.py uses "from __future__ import annotations"; a demo must not inherit it,
    # and a late __future__ import is only an error for the whole script.
    with pytest.raises(ParseError, match=r"block B-a raised SyntaxError at demos/demo\.py:3"):
        run("x = 1\n# %% B-a\nfrom __future__ import annotations\n")


# --- docstring -----------------------------------------------------------------------


def test_blocks_section_descriptions() -> None:
    script = run(DOC + "# %% B-one\nx = 1\n# %% B-two\ny = 2\n")
    assert script.warnings == ()
    assert [c.description for c in script.code_cells] == ["", "first block, continued", "second block"]
    assert script.summary == "do a thing."


def test_blocks_section_mismatch_warns_both_ways() -> None:
    script = run(DOC + "# %% B-one\nx = 1\n# %% B-extra\ny = 2\n")
    assert script.warnings == (
        "demo: block B-extra (demos/demo.py:11) is not described in the docstring's Blocks section",
        "demo: the docstring's Blocks section lists B-two, but the script has no such block",
    )


def test_no_blocks_section_no_warnings() -> None:
    script = run('"""Just a summary\nover two lines.\n\nMore text.\n"""\n# %% B-a\nx = 1\n')
    assert script.warnings == ()
    assert script.summary == "Just a summary over two lines."
    assert script.purpose == ""
    assert all(c.description == "" for c in script.cells)


def test_no_docstring() -> None:
    script = run("x = 1\n")
    assert (script.summary, script.purpose, script.docstring) == ("", "", "")


# --- requirements --------------------------------------------------------------------


def test_requirements(tmp_path: Path) -> None:
    (tmp_path / "helper.py").write_text("")
    (tmp_path / "pkg").mkdir()
    src = (
        "import os, numpy as np\nimport scipy.stats\nfrom sklearn import svm\nimport helper\n"
        "from pkg import thing\nfrom . import rel\nimport numpy\nimport yaml\n"
        "def f():\n    import torch\n"
    )
    # Relative import would fail at run time, but parse only reads the imports.
    script = run(src, local_dir=tmp_path)
    assert script.requirements == ("NumPy", "SciPy", "scikit-learn", "yaml")
    assert "helper" in run(src).requirements


# --- the real demo -------------------------------------------------------------------


@pytest.fixture(scope="module")
def attention() -> Script:
    return parse(DEMO.read_text(encoding="utf-8"), "demos/attention.py", "attention", local_dir=DEMO.parent)


def test_attention_cells(attention: Script) -> None:
    assert names(attention) == [
        "setup", "B-corpus", "B-tokens", "B-model", "B-forward",
        "B-train", "B-display", "B-csv", "B-preview",
    ]
    assert attention.cells == attention.code_cells
    assert attention.warnings == ()
    corpus = attention.code_cells[1]
    assert corpus.description == (
        "the excerpted sentences of the Universal Declaration of Human Rights, "
        "stored verbatim so the demo needs no network"
    )


def test_attention_docstring_parts(attention: Script) -> None:
    assert attention.requirements == ("NumPy", "Matplotlib")
    assert attention.summary == (
        "train a single self-attention layer on sentences from the "
        "Universal Declaration of Human Rights."
    )
    assert attention.purpose.startswith("Illustrate attention as a learned *associative memory*.")
    assert attention.purpose.endswith("reconstructed from the tokens it is associated with.")
    assert "\n\n" not in attention.purpose and "-----" not in attention.purpose
    assert attention.docstring.startswith("attention.py — train")


def test_attention_cells_reproduce_the_file(attention: Script) -> None:
    lines = DEMO.read_text(encoding="utf-8").split("\n")
    rebuilt: list[str | None] = [None] * len(lines)
    for cell in attention.cells:
        if cell.marker_line is not None:
            rebuilt[cell.marker_line - 1] = lines[cell.marker_line - 1]
            assert lines[cell.marker_line - 1].startswith("# %% ")
        for offset, text in enumerate(cell.text.split("\n")):
            rebuilt[cell.first_line - 1 + offset] = text
    # Every line is a marker or a cell line, except the blank lines cells dropped at their end.
    assert [r if r is not None else l for r, l in zip(rebuilt, lines)] == lines
    assert all(not l.strip() for r, l in zip(rebuilt, lines) if r is None)
