"""Tests of the execute stage: each fixture demo is tiny and runs in a real child process."""

from __future__ import annotations

import logging
import re
import struct
from pathlib import Path

import pytest

from site_builder.source.parsed import Cell, Script
from site_builder.source.entries import Entry
from site_builder.run.child.files import BUILDER_DIR
from site_builder.run.execute import RunOptions, RunResult, path_scrubber, run_demo
from tests.conftest import REPO


def make_demo(root: Path, blocks: list[tuple[str, str] | tuple[str, str, tuple[str, ...]]],
              name: str = "demo") -> tuple[Entry, Script]:
    """Write demos/<name>.py with one ``# %% NAME`` cell per block; build Entry and Script by hand."""
    lines = ['"""A fixture demo."""', ""]
    cells = []
    for block in blocks:
        block_name, code = block[0], block[1]
        tags = block[2] if len(block) > 2 else ()  # type: ignore[misc]
        if block_name != "setup":
            lines.append(f"# %% {block_name}")
        first = len(lines) + 1
        lines += code.splitlines()
        lines.append("")
        marker = None if block_name == "setup" else first - 1
        cells.append(Cell("code", block_name, code, first, marker, tags=tuple(tags)))
    source = "\n".join(lines)
    path = root / "demos" / f"{name}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    entry = Entry(name, path.resolve(), f"demos/{name}.py", source, source.encode())
    return entry, Script("A fixture demo.", "", source, tuple(cells), ())


def run(tmp_path: Path, blocks: list, timeout: float = 20.0, output_limit: int = 200_000,
        events: list | None = None) -> RunResult:
    root = tmp_path / "project"
    entry, script = make_demo(root, blocks)
    options = RunOptions(timeout=timeout, output_limit=output_limit, project_root=root)
    callback = (lambda e: events.append((e.entry, e.block, e.kind))) if events is not None else None
    return run_demo(entry, script, tmp_path / "files", options, callback)


def texts(result: RunResult, i: int) -> list[tuple[str, str]]:
    return [(c.stream, c.text) for c in result.blocks[i].output]


def test_captures_every_kind_of_output_in_order(tmp_path: Path) -> None:
    events: list = []
    r = run(tmp_path, [
        ("setup", "import os, subprocess, sys, warnings"),
        ("B-out", "print('a')\n"
                  "print('b', file=sys.stderr)\n"
                  "os.write(1, b'raw\\n')\n"
                  "subprocess.run(['echo', 'from child'])\n"
                  "subprocess.run(['sh', '-c', 'echo child-err >&2'])\n"
                  "warnings.warn('careful')\n"
                  "print('c')"),
    ], events=events)
    assert r.ok, r.failure
    assert texts(r, 1) == [
        ("stdout", "a\n"),
        ("stderr", "b\n"),
        ("stdout", "raw\nfrom child\n"),
        ("stderr", "child-err\ndemos/demo.py:11: UserWarning: careful\n  warnings.warn('careful')\n"),
        ("stdout", "c\n"),
    ]
    assert events == [("demo", "setup", "start"), ("demo", "setup", "end"),
                      ("demo", "B-out", "start"), ("demo", "B-out", "end")]


def test_c_level_output_is_flushed_into_its_block(tmp_path: Path) -> None:
    r = run(tmp_path, [
        ("setup", "import ctypes\nlibc = ctypes.CDLL(None)\nlibc.printf(b'from C\\n')"),
        ("B-next", "print('next')"),
    ])
    assert texts(r, 0) == [("stdout", "from C\n")]
    assert texts(r, 1) == [("stdout", "next\n")]


def test_shared_namespace_main_module_and_paths(tmp_path: Path) -> None:
    r = run(tmp_path, [
        ("setup", "import sys, pickle, dataclasses\n"
                  "@dataclasses.dataclass\nclass P:\n    x: int\n"
                  "value = 41"),
        ("B-use", "value += 1\n"
                  "print(value, __name__, __file__.endswith('demos/demo.py'))\n"
                  "print(sys.path[0].endswith('demos'), pickle.loads(pickle.dumps(P(3))))\n"
                  "from pathlib import Path\nprint(Path('x.csv').resolve())"),
    ])
    assert r.ok, r.failure
    assert texts(r, 1) == [("stdout", "42 __main__ True\nTrue P(x=3)\nx.csv\n")]


# the names the child-side modules would have if they leaked (not unittest.runner, a stdlib module
# a preloaded package may import)
BUILDER_CHILD_NAMES = ("runner", "child", *sorted(p.stem for p in (REPO / "site_builder" / "run" / "child").rglob("*.py")))


@pytest.mark.parametrize("fork_server", ["1", "0"])
def test_demo_sees_the_modules_and_path_of_a_plain_python_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fork_server: str
) -> None:
    # The builder's child-side modules (runner.py, run/child/) are loaded by path and never
    # left where a demo's imports could find them; sys.path is what `python demos/x.py` gives.
    monkeypatch.setenv("SITE_BUILDER_FORK_SERVER", fork_server)
    r = run(tmp_path, [
        ("setup", "import json, os, subprocess, sys\n"
                  "if os.environ.get('PLAIN_RUN'):\n"
                  "    print(json.dumps(sys.path))\n"
                  "    raise SystemExit"),
        ("B-probe", "plain = subprocess.run([sys.executable, __file__], capture_output=True, text=True,\n"
                    "                       env={**os.environ, 'PLAIN_RUN': '1'}).stdout\n"
                    "print('path', sys.path == json.loads(plain))\n"
                    "print('modules', sorted(n for n, m in list(sys.modules.items())\n"
                    f"      if 'site_builder' in n or n.split('.')[0] in {BUILDER_CHILD_NAMES!r}\n"
                    "      or '/site_builder/' in str(getattr(m, '__file__', '')).replace(os.sep, '/')))"),
    ])
    assert r.ok, r.failure
    assert texts(r, 1) == [("stdout", "path True\nmodules []\n")]


def test_error_stops_later_blocks_with_script_only_traceback(tmp_path: Path) -> None:
    r = run(tmp_path, [
        ("setup", "def check(v):\n    raise ValueError(f'bad value {v}\\nsecond line')"),
        ("B-ok", "print('fine')"),
        ("B-train", "x = 1\ncheck(x)"),
        ("B-after", "print('never')"),
    ])
    assert [b.status for b in r.blocks] == ["ok", "ok", "error", "not-run"]
    err = r.blocks[2].error
    assert err is not None and err.type == "ValueError" and err.message == "bad value 1"
    assert err.line == 4  # innermost script line: inside check()
    assert r.failure == "demo: block B-train raised ValueError at demos/demo.py:4: bad value 1"
    assert "runner.py" not in err.traceback
    assert 'File "demos/demo.py", line 11, in <module>\n    check(x)' in err.traceback
    assert "    raise ValueError(f'bad value {v}\\nsecond line')" in err.traceback


def test_syntax_error_names_its_line(tmp_path: Path) -> None:
    r = run(tmp_path, [("setup", "x = 1"), ("B-bad", "y = (\n")])
    assert r.blocks[1].status == "error"
    assert r.blocks[1].error.type == "SyntaxError"  # type: ignore[union-attr]
    assert r.failure and r.failure.startswith("demo: block B-bad raised SyntaxError at demos/demo.py:6: ")


def test_expected_error_tag_both_ways(tmp_path: Path) -> None:
    r = run(tmp_path, [
        ("setup", "x = 0"),
        ("B-raises", "1 / x", ("raises-exception",)),
        ("B-after", "print('still runs')"),
    ])
    assert [b.status for b in r.blocks] == ["ok", "expected-error", "ok"]
    assert r.ok
    assert "ZeroDivisionError: division by zero" in r.blocks[1].error.traceback  # type: ignore[union-attr]

    r = run(tmp_path, [("setup", "x = 1"), ("B-x", "1 / x", ("raises-exception",))])
    assert r.blocks[1].status == "ok"
    assert r.failure == ('demo: block B-x was expected to raise (tags=["raises-exception"]) '
                         "but did not")


def test_sys_exit_zero_ends_cleanly_and_nonzero_fails(tmp_path: Path) -> None:
    r = run(tmp_path, [("setup", "import sys\nsys.exit(0)"), ("B-after", "print(1)")])
    assert [b.status for b in r.blocks] == ["ok", "not-run"]
    assert r.ok

    r = run(tmp_path, [("setup", "import sys"), ("B-quit", "sys.exit(3)"), ("B-after", "1")])
    assert [b.status for b in r.blocks] == ["ok", "exited", "not-run"]
    assert r.failure == "demo: block B-quit exited (exit status 3) at demos/demo.py:6"


def test_timeout_kills_the_demo(tmp_path: Path) -> None:
    # The limit counts from the start of the run: have the fork server up first (on a busy
    # machine its start-up alone can take half the second the demo is given).
    run(tmp_path / "warm", [("setup", "1")])
    r = run(tmp_path, [
        ("setup", "import time\nprint('before', flush=True)"),
        ("B-train", "print('training')\ntime.sleep(30)"),
        ("B-after", "1"),
    ], timeout=1)
    assert [b.status for b in r.blocks] == ["ok", "timeout", "not-run"]
    assert texts(r, 1) == [("stdout", "training\n")]
    assert 0.5 < r.blocks[1].duration < 30  # killed at its limit, not when its 30 s sleep ended
    assert r.failure is not None
    assert r.failure.startswith("demo: block B-train timed out after ")
    assert "(the demo's limit of 1 s was reached after " in r.failure


def test_a_timed_out_block_keeps_its_print_loop_fd_writes_and_childrens_output(tmp_path: Path) -> None:
    # What a print loop batches and what reaches fd 1 outside Python reach the page while the
    # block still runs: a block killed at its limit shows all it wrote before hanging.
    run(tmp_path / "warm", [("setup", "1")])
    r = run(tmp_path, [
        ("setup", "import os, subprocess, time"),
        ("B-hang", "for i in range(300):\n    print('epoch', i)\n"
                   "os.write(1, b'from fd 1\\n')\n"
                   "subprocess.run(['echo', 'from a child'])\n"
                   "time.sleep(30)"),
    ], timeout=2)
    assert [b.status for b in r.blocks] == ["ok", "timeout"]
    epochs = "".join(f"epoch {i}\n" for i in range(300))
    assert {stream for stream, _ in texts(r, 1)} == {"stdout"}
    assert "".join(text for _, text in texts(r, 1)) == epochs + "from fd 1\nfrom a child\n"
    assert r.blocks[1].duration < 30


def test_input_gets_eof_and_show_and_grandchildren_do_not_hang(tmp_path: Path) -> None:
    r = run(tmp_path, [
        ("setup", "import subprocess\nsubprocess.Popen(['sleep', '1000'])"),
        ("B-read", "try:\n    input('name? ')\nexcept EOFError:\n    print('eof')"),
    ], timeout=20)
    assert r.ok, r.failure  # a hang (input, the grandchild) would have been a timeout
    assert r.duration < 20
    assert texts(r, 1) == [("stdout", "name? eof\n")]


def test_segfault_is_attributed_to_its_block(tmp_path: Path) -> None:
    r = run(tmp_path, [
        ("setup", "import ctypes\nprint('setup ran')"),
        ("B-crash", "print('about to crash')\nctypes.string_at(0)"),
        ("B-after", "1"),
    ])
    assert [b.status for b in r.blocks] == ["ok", "crashed", "not-run"]
    assert texts(r, 0) == [("stdout", "setup ran\n")]
    assert texts(r, 1) == [("stdout", "about to crash\n")]  # streamed before the crash
    err = r.blocks[1].error
    assert err is not None and err.type == "Crash"
    assert err.message == "the process died with signal SIGSEGV"
    assert err.line == 8
    assert r.failure == "demo: block B-crash crashed (signal SIGSEGV) at demos/demo.py:8"


def test_os_exit_is_a_crash_with_its_line(tmp_path: Path) -> None:
    r = run(tmp_path, [("setup", "import os\nprint('kept')"), ("B-x", "print('x')\nos._exit(3)")])
    assert [b.status for b in r.blocks] == ["ok", "crashed"]
    assert texts(r, 0) == [("stdout", "kept\n")]
    assert texts(r, 1) == [("stdout", "x\n")]
    assert r.blocks[1].error.message == "os._exit(3)"  # type: ignore[union-attr]
    assert r.failure == "demo: block B-x crashed (os._exit(3)) at demos/demo.py:8"


def test_huge_output_is_truncated_with_the_full_file_written(tmp_path: Path) -> None:
    r = run(tmp_path, [
        ("setup", "import os, sys\nfor i in range(100_000):\n    print(f'line {i}')\n"
                  "os.write(1, b''.join(b'fd line %d\\n' % i for i in range(300_000)))\n"
                  "print('tail end', file=sys.stderr)"),
    ], output_limit=10_000)
    block = r.blocks[0]
    assert r.ok, r.failure
    assert block.omitted_at is not None
    head, tail = block.output[: block.omitted_at], block.output[block.omitted_at:]
    assert head[0].text.startswith("line 0\nline 1\n")
    assert sum(len(c.text) for c in block.output) <= 10_000
    assert [c.stream for c in tail] == ["stdout", "stderr"]
    assert tail[0].text.endswith("fd line 299999\n") and tail[1].text == "tail end\n"
    kept_lines = sum(c.text.count("\n") for c in block.output)
    assert block.omitted_lines == 400_001 - kept_lines
    assert block.omitted_bytes > 4_000_000
    assert block.full_output == f"{BUILDER_DIR}/output-setup.txt"
    full = (r.files_dir / block.full_output).read_text()
    assert full.count("\n") == 400_001
    assert full.startswith("line 0\n") and full.endswith("fd line 299999\ntail end\n")


def test_invalid_utf8_is_replaced(tmp_path: Path) -> None:
    r = run(tmp_path, [("setup", "import os, sys\nos.write(1, b'a\\xff\\xfeb\\n')\n"
                                 "sys.stdout.buffer.write(b'c\\xffd\\n')")])
    assert texts(r, 0) == [("stdout", "a\ufffd\ufffdb\nc\ufffdd\n")]


def test_written_file_is_an_artifact_of_its_block(tmp_path: Path) -> None:
    png = ("import struct, zlib\n"
           "def png(w, h):\n"
           "    raw = b''.join(b'\\x00' + b'\\x00' * 3 * w for _ in range(h))\n"
           "    chunk = lambda t, d: struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))\n"
           "    return (b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0))\n"
           "            + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))")
    r = run(tmp_path, [
        ("setup", png),
        ("B-csv", "import os\nos.makedirs('out', exist_ok=True)\nopen('out/data.csv', 'w').write('a,b\\n')"),
        ("B-img", "open('pic.png', 'wb').write(png(4, 3))"),
        ("B-none", "x = 1"),
    ])
    assert r.ok, r.failure
    assert [(a.path, a.kind, a.size) for a in r.blocks[1].artifacts] == [("out/data.csv", "file", 4)]
    (img,) = r.blocks[2].artifacts
    assert (img.path, img.kind, img.width, img.height) == ("pic.png", "image", 4, 3)
    assert r.blocks[3].artifacts == ()


def test_open_figure_is_saved(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    r = run(tmp_path, [
        ("setup", "import matplotlib.pyplot as plt"),
        ("B-plot", "fig, ax = plt.subplots(figsize=(2, 1), dpi=50)\nax.plot([1, 2])\n"
                   "ax.set_title('Loss')\nax.set_xlabel('iteration')\nfig.suptitle('Training')"),
        ("B-after", "print(len(plt.get_fignums()))"),
    ])
    assert r.ok, r.failure
    (fig,) = r.blocks[1].artifacts
    assert fig.kind == "figure" and fig.path == f"{BUILDER_DIR}/B-plot-figure-1.png"
    assert fig.alt == "Training; Loss; iteration"
    assert (fig.width, fig.height) == (100, 50)
    assert (r.files_dir / fig.path).read_bytes()[:4] == b"\x89PNG"
    assert texts(r, 2) == [("stdout", "0\n")]
    assert "matplotlib" in r.environment


def test_figures_are_the_pixels_savefig_gives_without_alpha_when_opaque(tmp_path: Path) -> None:
    """An opaque figure is saved as RGB (smaller, faster), pixel for pixel what savefig makes at
    twice its dpi, a tight bbox included; a figure with transparency keeps its alpha channel."""
    pytest.importorskip("matplotlib")
    image = pytest.importorskip("PIL.Image")
    np = pytest.importorskip("numpy")
    r = run(tmp_path, [
        ("setup", "import matplotlib.pyplot as plt\nplt.rcParams['savefig.bbox'] = 'tight'\n"
                  "def plot():\n    fig, ax = plt.subplots(figsize=(2, 1.5), dpi=60)\n"
                  "    ax.plot([1, 3, 2])\n    ax.set_title('t')\n    return fig"),
        ("B-opaque", "fig = plot()\nfig.savefig('reference.png', dpi=120)"),
        ("B-clear", "fig = plot()\nfig.patch.set_alpha(0.0)"),
    ])
    assert r.ok, r.failure
    (opaque,), (reference,) = [a for a in r.blocks[1].artifacts if a.kind == "figure"], \
        [a for a in r.blocks[1].artifacts if a.kind == "image"]
    with image.open(r.files_dir / opaque.path) as ours, image.open(r.files_dir / reference.path) as theirs:
        assert ours.mode == "RGB" and theirs.mode == "RGBA"
        assert ours.size == theirs.size == (opaque.width * 2, opaque.height * 2)
        assert np.array_equal(np.asarray(ours.convert("RGBA")), np.asarray(theirs))
        assert round(ours.info["dpi"][0]) == 120
    (clear,) = r.blocks[2].artifacts
    with image.open(r.files_dir / clear.path) as saved:
        assert saved.mode == "RGBA" and saved.getchannel("A").getextrema()[0] == 0


def test_figure_scale_sets_the_pixels_per_css_pixel_and_reruns_the_demo(project: Path) -> None:
    """figure_scale = 1 saves a 2 x 1 inch, 50 dpi figure as 100 x 50 pixels (the default 2: 200 x
    100), shown at 100 x 50 either way; changing the setting runs the demo again."""
    pytest.importorskip("matplotlib")
    from conftest import run_cli, write_demo

    write_demo(project, "plot", '''\
        """plot.py — one small figure."""
        import matplotlib.pyplot as plt

        # %% B-plot
        fig, ax = plt.subplots(figsize=(2, 1), dpi=50)
        ax.plot([1, 2])
    ''')
    sizes = []
    for scale in ("1", "2"):
        (project / "pyproject.toml").write_text(f"[tool.site_builder]\nfigure_scale = {scale}\n")
        done = run_cli("build", cwd=project)
        assert done.returncode == 0, done.stderr
        (png,) = (project / "build" / "plot").rglob("*figure-1.png")
        sizes.append(struct.unpack(">II", png.read_bytes()[16:24]))
        assert 'width="100" height="50"' in (project / "build" / "plot" / "index.html").read_text()
    assert sizes == [(100, 50), (200, 100)]


def test_reads_and_environment(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "data").mkdir(parents=True)
    (root / "data" / "table.csv").write_text("1,2\n")
    (root / "demos").mkdir()
    (root / "demos" / "_helper.py").write_text("VALUE = 7\n")
    r = run(tmp_path, [
        ("setup", "import _helper\nfrom pathlib import Path\n"
                  "here = Path(__file__).parent\n"
                  "print((here.parent / 'data' / 'table.csv').read_text().strip(), _helper.VALUE)\n"
                  "open('local.txt', 'w').write('x')\nopen('local.txt').read()"),
    ])
    assert r.ok, r.failure
    assert texts(r, 0) == [("stdout", "1,2 7\n")]
    # the script itself only counts when the demo opens it (see test_records)
    assert r.reads == ("data/table.csv", "demos/_helper.py")
    assert r.environment["python"].count(".") == 2
    assert "platform" in r.environment


def test_project_modules_are_found_however_they_were_imported(tmp_path: Path) -> None:
    """The modules a demo imported are those after the run's mark in sys.modules (its last
    entry when the demo started); importlib.import_module's too, and when the demo took the
    mark's own entry out of sys.modules, every module is looked at: the packages the
    project's modules import are in the environment either way."""
    root = tmp_path / "project"
    (root / "demos").mkdir(parents=True)
    (root / "demos" / "_by_name.py").write_text("import numpy\n")
    (root / "demos" / "_after_del.py").write_text("import pygments\n")
    r = run(tmp_path, [
        ("setup", "import sys, importlib\nmark = next(reversed(sys.modules))\n"
                  "importlib.import_module('_by_name')"),
        ("B-del", "del sys.modules[mark]\nimport _after_del"),
    ])
    assert r.ok, r.failure
    assert r.reads == ("demos/_after_del.py", "demos/_by_name.py")
    assert {"numpy", "pygments"} <= {name.lower() for name in r.environment}


def test_the_cost_of_resolving_names_is_said_at_debug_level(tmp_path: Path,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="site_builder.run.execute"):
        r = run(tmp_path, [("setup", "import os.path"),
                           ("B-names", "parts = [os.path.join('a', str(i)) for i in range(3000)]\n"
                                       "print(len(parts), os.path.basename(parts[-1]))")])
    assert r.ok, r.failure
    (line,) = [m for m in caplog.messages if "name resolution" in m]
    found = re.fullmatch(r"demo: name resolution ([\d.]+) s of the demo process's ([\d.]+) s CPU", line)
    assert found, line
    resolving, cpu = map(float, found.groups())
    assert 0 < resolving < cpu < 20  # the demo's own work (and its start) costs more than looking at its names


def test_path_scrubber_replaces_machine_paths() -> None:
    scrub = path_scrubber([(Path("/tmp/run/files"), "."), (Path("/srv/project"), "."),
                           (Path("/home/me"), "~")])
    assert scrub("/tmp/run/files/x.csv and /srv/project/demos/a.py") == "x.csv and demos/a.py"
    assert scrub("cwd /tmp/run/files, home /home/me/.cache") == "cwd ., home ~/.cache"
    assert scrub("/srv/project2/x") == "/srv/project2/x"


def test_path_scrubber_replaces_a_linked_folder_by_both_names(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    resolved = real.resolve()
    scrub = path_scrubber([(tmp_path / "link", ".")])
    assert scrub(f"{tmp_path}/link/a.csv and {resolved}/b.csv") == "a.csv and b.csv"
    # a folder given as a real path already: the earlier pair still wins for it
    scrub = path_scrubber([(resolved, "."), (tmp_path / "link", "~")], real=(resolved,))
    assert scrub(f"{tmp_path}/link/a.csv and {resolved}/b.csv") == "~/a.csv and b.csv"
