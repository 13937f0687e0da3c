"""Issue 5: the downloadable notebook opens and runs in Jupyter, checked with a real IPython kernel.

test_render.py execs the code cells in one namespace; here nbclient starts an ipykernel
and runs the notebook top to bottom, as "Run All" in Jupyter would.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import nbformat
import pytest
from ipykernel.kernelspec import write_kernel_spec
from nbclient import NotebookClient

from site_builder.source.blocks import parse
from site_builder.site.downloads.notebook import make_notebook

REPO = Path(__file__).resolve().parent.parent

FIXTURE = textwrap.dedent('''
    """tiny.py — a tiny demo for the notebook kernel test.

    Purpose
    -------
    Prove that the notebook download runs in a real Jupyter kernel.

    Blocks
    ------
    [B-first]   square a number
    [B-second]  use the first block's result
    """

    import math

    print("setup done")

    # %% B-first
    x = math.sqrt(16)
    print(f"x = {x}")

    # %% B-second
    print(f"x squared = {x ** 2}")
    print("done")
''').lstrip("\n")


@pytest.fixture
def kernel_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A ``python3`` kernelspec that runs this interpreter, found first and without network.

    JUPYTER_PATH comes before the user and system kernel folders, so a ``python3`` spec
    left there by another Python cannot shadow it.
    """
    specs = tmp_path / "jupyter"
    write_kernel_spec(specs / "kernels" / "python3")
    monkeypatch.setenv("JUPYTER_PATH", str(specs))
    return "python3"


def run_notebook(data: bytes, cwd: Path, kernel_name: str) -> nbformat.NotebookNode:
    """Execute the notebook in a fresh kernel; nbclient raises CellExecutionError on any error."""
    nb = nbformat.reads(data.decode("utf-8"), as_version=4)
    assert nb.metadata.kernelspec.name == kernel_name
    cwd.mkdir(exist_ok=True)
    NotebookClient(nb, timeout=60, kernel_name=kernel_name,
                   resources={"metadata": {"path": str(cwd)}}).execute()
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not [o for o in cell.outputs if o.output_type == "error"], cell.source
    return nb


def stdout_of(cell: nbformat.NotebookNode) -> str:
    """The cell's printed text; only stdout stream outputs allowed (no stderr, no errors)."""
    assert all(o.output_type == "stream" and o.name == "stdout" for o in cell.outputs), cell.outputs
    return "".join(o.text for o in cell.outputs)


def test_fixture_notebook_runs_in_a_real_kernel(tmp_path: Path, kernel_name: str) -> None:
    script = parse(FIXTURE, "demos/tiny.py", "tiny")
    assert [c.name for c in script.code_cells] == ["setup", "B-first", "B-second"]
    data = make_notebook("tiny", script, None)
    nb = run_notebook(data, tmp_path / "run", kernel_name)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert [stdout_of(c) for c in code] == [
        "setup done\n",
        "x = 4.0\n",
        "x squared = 16.0\ndone\n",
    ]
    assert [c.execution_count for c in code] == [1, 2, 3]  # every cell ran, in order


def test_real_demo_notebook_runs_in_a_real_kernel(tmp_path: Path, kernel_name: str) -> None:
    path = REPO / "demos" / "bias_variance.py"
    script = parse(path.read_text(encoding="utf-8"), "demos/bias_variance.py", "bias_variance",
                   local_dir=path.parent)
    run = tmp_path / "run"
    nb = run_notebook(make_notebook("bias_variance", script, None), run, kernel_name)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert len(code) == len(script.code_cells)
    for cell, block in zip(code, script.code_cells):
        if block.name != "setup":  # every block prints lines tagged with its name
            assert f"[{block.name}]" in stdout_of(cell), block.name
    assert (run / "bias_variance_by_degree.csv").is_file()  # files land in the notebook's folder
