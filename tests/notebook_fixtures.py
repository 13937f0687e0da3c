"""Our own fixture notebooks for issue 27 (cells run in IPython), in both notebook formats,
and Jupyter's own run of them (nbclient with an ipykernel of this interpreter) to compare with.

Each fixture is a list of cells; a cell says whether its printed text can be compared with
Jupyter's (``compare``) and, when not, why: what the builder shows differently on purpose.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.conftest import MYST_FRONT_MATTER


@dataclass(frozen=True)
class FixtureCell:
    source: str
    tags: tuple[str, ...] = ()
    compare: str = ""  # "" : its printed text and value are Jupyter's; else why they differ


MAGICS = [
    FixtureCell("%matplotlib inline\n%config InlineBackend.figure_format = 'retina'\n%precision 3\n1 / 3"),
    FixtureCell("%load_ext autoreload\n%autoreload 2"),
    FixtureCell('%%writefile mathfoo.py\ndef double(x):\n    """Twice x."""\n    return 2 * x\n'),
    FixtureCell("import mathfoo\nprint(mathfoo.double(21))"),
    FixtureCell("%%file script.py\nprint('ran as', __name__)\nanswer = 6 * 7\n"),
    FixtureCell("%run script.py\nprint(answer)"),
    FixtureCell("%who"),
    FixtureCell("%whos int", compare="absolute paths in Jupyter"),
    FixtureCell("%pwd", compare="absolute path in Jupyter, '.' here"),
    FixtureCell("import os\nos.makedirs('sub', exist_ok=True)\n%cd sub", compare="absolute path in Jupyter"),
    FixtureCell("%cd ..", compare="absolute path in Jupyter"),
    FixtureCell("%env GREETING=hello\nprint(os.environ['GREETING'])"),
    FixtureCell("%time total = sum(range(1000))\n%timeit -n 3 -r 2 sum(range(10))"),
    FixtureCell("%%time\nsquares = [i * i for i in range(100)]\nlen(squares)"),
    FixtureCell("%%capture captured\nprint('captured, not shown')"),
    FixtureCell("print(captured.stdout.strip().upper())"),
    FixtureCell("len?", compare="Jupyter sends help to its pager; here it is the cell's output"),
    FixtureCell("mathfoo.double??", compare="Jupyter sends help to its pager; here it is the cell's output"),
    FixtureCell("!echo from the shell"),
    FixtureCell("files = !ls\nsorted(f for f in files if f.endswith('.py'))"),
    FixtureCell("print(_, __)\nOut[1]"),
    FixtureCell("x = %who_ls\nx"),
    FixtureCell("%%bash\necho from bash"),
    FixtureCell("%%html\n<b>bold from a cell magic</b>"),
    FixtureCell("from IPython.display import Markdown, display\ndisplay(Markdown('*shown*'))\nprint('after display')"),
    FixtureCell("import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nlines = ax.plot([1, 3, 2])"),
    FixtureCell("ax.set_title('redrawn')\nfig", compare="a figure, not text"),
    FixtureCell("get_ipython().run_line_magic('precision', '%.1f')\n2 / 3"),
    FixtureCell("plt.plot([1, 2])\nplt.show()  # shown now: the next plot is a new figure\nplt.plot([2, 1])\nplt.show()"),
    FixtureCell("n = 3\n!echo {n} items from $n\nprint(_exit_code)"),
]

ERRORS = [
    FixtureCell("def f:\n    pass", ("raises-exception",)),
    FixtureCell("print('after the syntax error')"),
    FixtureCell("input('name? ')", ("raises-exception",)),
    FixtureCell("import getpass\ngetpass.getpass()", ("raises-exception",)),
    FixtureCell("1 / 0", ("raises-exception",)),
    FixtureCell("%debug", ("raises-exception",), compare="Jupyter's debugger prints where it stops first"),
    FixtureCell("%pdb on"),
    FixtureCell("{}['missing']", ("raises-exception",), compare="Jupyter's debugger prints where it stops first"),
    FixtureCell("%pdb off"),
    FixtureCell("#| error: true\nraise ValueError('allowed by an option')"),
    FixtureCell("%%writefile failing.py\ndef fail():\n    raise ValueError('from a file the notebook wrote')\n\nfail()\n"),
    FixtureCell("%run failing.py\nprint('after the failing run')", compare="Jupyter shows the error as an error output"),
    FixtureCell("%%capture\nprint('hidden')\n1 / 0", compare="Jupyter shows the error as an error output"),
    FixtureCell("import sys\nsys.exit(0)", ("raises-exception",), compare="Jupyter warns from IPython's own file"),
    FixtureCell("%notamagic", ("raises-exception",), compare="UsageError: an error output in Jupyter"),
    FixtureCell("print('the end')"),
]

BROKEN = [
    FixtureCell("print('before the broken cell')"),
    FixtureCell("x = (\nprint('in the broken cell')"),
    FixtureCell("print('never printed')"),
]

FIXTURES = {"magics": MAGICS, "errors": ERRORS, "broken": BROKEN}
KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


def as_ipynb(cells: list[FixtureCell], title: str) -> str:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"# {title}\n\nA fixture.")] + [
        nbformat.v4.new_code_cell(c.source, metadata={"tags": list(c.tags)} if c.tags else {}) for c in cells])
    nb.metadata["kernelspec"] = KERNELSPEC
    return nbformat.writes(nb)


def as_myst(cells: list[FixtureCell], title: str) -> str:
    parts = [MYST_FRONT_MATTER, f"\n# {title}\n\nA fixture.\n"]
    for cell in cells:
        tags = f":tags: [{', '.join(cell.tags)}]\n\n" if cell.tags else ""
        parts.append(f"\n```{{code-cell}} ipython3\n{tags}{cell.source.rstrip()}\n```\n")
    return "".join(parts)


def write_fixtures(demos: Path) -> None:
    """Each fixture as ``demos/NAME.ipynb`` and ``demos/myst/NAME.md`` (the entry ``myst/NAME``)."""
    (demos / "myst").mkdir(parents=True, exist_ok=True)
    for name, cells in FIXTURES.items():
        (demos / f"{name}.ipynb").write_text(as_ipynb(cells, name.title()), encoding="utf-8")
        (demos / "myst" / f"{name}.md").write_text(as_myst(cells, name.title()), encoding="utf-8")


# ---------------------------------------------------------------- comparing with Jupyter

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_TIMINGS = [
    (re.compile(r"^CPU times: .*$", re.M), "CPU times: ..."),
    (re.compile(r"^Wall time: .*$", re.M), "Wall time: ..."),
    (re.compile(r"^.* per loop \(mean ± std\. dev\. of .*$", re.M), "... per loop"),
    # %timeit's own remark on a noisy machine, in either run
    (re.compile(r"^The slowest run took .* times longer than the fastest\..*\n", re.M), ""),
]


def normalised(text: str) -> str:
    """Printed text as both sides can be compared: no colours, no \\r\\n (Jupyter's ``!cmd``
    runs in a terminal), timings blanked."""
    text = _ANSI.sub("", text).replace("\r\n", "\n")
    for pattern, blank in _TIMINGS:
        text = pattern.sub(blank, text)
    return text


@dataclass(frozen=True)
class Outcome:
    """What one code cell did: "ok", "error" (failed, allowed or not) or "not-run"; its printed
    text (every stream, in order), its value's text/plain and how many images it showed."""

    status: str
    printed: str
    value: str
    images: int = 0


def jupyter_outcomes(cells: list[FixtureCell], workdir: Path) -> list[Outcome]:
    """Run the fixture in Jupyter (nbclient, stopping at an untagged error as Jupyter Book does)."""
    from ipykernel.kernelspec import write_kernel_spec
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    specs = workdir / "jupyter"
    write_kernel_spec(specs / "kernels" / "python3")
    run = workdir / "run"
    run.mkdir(parents=True)
    # nbclient knows tags only: Quarto's `#| error: true` is its raises-exception
    tagged = [FixtureCell(c.source, c.tags + ("raises-exception",) * ("#| error: true" in c.source))
              for c in cells]
    nb = nbformat.reads(as_ipynb(tagged, "Jupyter"), as_version=4)
    replies: dict[int, str] = {}

    def executed(cell: Any, cell_index: int, execute_reply: Any) -> None:
        replies[cell_index] = execute_reply["content"]["status"]

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JUPYTER_PATH", str(specs))  # this interpreter's kernel, found first
        client = NotebookClient(nb, timeout=120, kernel_name="python3", on_cell_executed=executed,
                                resources={"metadata": {"path": str(run)}})
        try:
            client.execute()
        except CellExecutionError:
            pass  # an untagged error: the later cells do not run
    outcomes = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if index not in replies:
            outcomes.append(Outcome("not-run", "", ""))
            continue
        printed = "".join(o.text for o in cell.outputs if o.output_type == "stream")
        values = [o.data.get("text/plain", "") for o in cell.outputs if o.output_type == "execute_result"]
        images = sum(1 for o in cell.outputs if any(m.startswith("image/") for m in o.get("data", {})))
        outcomes.append(Outcome("error" if replies[index] == "error" else "ok", printed, "".join(values), images))
    return outcomes


def our_outcomes(project: Path, entry: str) -> list[Outcome]:
    """What the build ran, from the entry's run record."""
    record = json.loads((project / "_freeze" / entry / "_site_builder" / "record.json").read_text(encoding="utf-8"))
    outcomes = []
    for block in record["blocks"]:
        status = {"expected-error": "error"}.get(block["status"], block["status"])
        printed = "".join("".join(chunk["lines"]) for chunk in block["output"] if chunk["stream"] != "display")
        value = block.get("value") or {}
        text = "".join(value.get("data", {}).get("text/plain", []))
        bundles = [chunk for chunk in block["output"] if chunk["stream"] == "display"] + [value]
        images = sum(1 for a in block["artifacts"] if a["kind"] == "figure")
        images += sum(1 for b in bundles if any(m.startswith("image/") for m in b.get("files", {})))
        outcomes.append(Outcome(status, printed, text, images))
    return outcomes


def write_jupyter_outcomes(folder: Path) -> None:
    """Each fixture as Jupyter runs it, in ``folder/outcomes.json`` (each run in ``folder/NAME``)."""
    outcomes = {name: [dataclasses.asdict(o) for o in jupyter_outcomes(cells, folder / name)]
                for name, cells in FIXTURES.items()}
    (folder / "outcomes.json").write_text(json.dumps(outcomes), encoding="utf-8")


if __name__ == "__main__":  # python -m tests.notebook_fixtures FOLDER: Jupyter's run beside a build
    write_jupyter_outcomes(Path(sys.argv[1]))
