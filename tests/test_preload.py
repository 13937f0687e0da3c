"""Warm imports: the fork server imports the demos' third-party modules once, yet every demo
still sees what a freshly spawned interpreter (``SITE_BUILDER_FORK_SERVER=0``) would show it."""

from __future__ import annotations

import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from site_builder.config import load_config
from site_builder.errors import UsageError
from site_builder.run.demo_process import fork_server_enabled
from site_builder.run.preload import packages_stamp, script_imports
from tests.conftest import REPO, run_cli, shared_folder, write_demo

pytestmark = pytest.mark.skipif(not fork_server_enabled(), reason="demos are spawned here")
pytest.importorskip("numpy")
pytest.importorskip("matplotlib")

# Each demo's first line says whether the module was already there before its own import.
PLOTTER = '''
    """{name}: draws with NumPy and Matplotlib, and changes what it can."""
    import sys
    print("preloaded", "numpy" in sys.modules and "matplotlib.pyplot" in sys.modules)
    print("lazy", "numpy.random" in sys.modules)  # NumPy 2 imports it on first use
    import random
    import numpy as np
    import matplotlib
    import matplotlib.pyplot as plt

    # %% B-state
    print("np", np.random.random(), np.random.randn())
    print("random", random.random())
    print("rc", plt.rcParams["lines.linewidth"], plt.rcParams["axes.titlesize"], matplotlib.get_backend())
    print("figures", plt.get_fignums())
    print("leak", hasattr(np, "left_by_a_demo"), hasattr(matplotlib, "left_by_a_demo"))
    plt.rcParams["lines.linewidth"] = 7.5
    plt.style.use("ggplot")
    np.random.seed(1)
    np.left_by_a_demo = matplotlib.left_by_a_demo = True
    plt.plot([1, 2, 3])
'''
STDLIB_ONLY = '''
    """plain: uses the standard library only."""
    import json

    # %% B-json
    print(json.dumps([1, 2]))
'''
NOT_PRELOADED = '''
    """dynamic: imports a module no import statement names (so it is not preloaded)."""
    import importlib
    import sys
    print("preloaded", "dynprobe" in sys.modules)

    # %% B-dyn
    constants = importlib.import_module("dynprobe")
    print("golden", round(constants.golden, 6))
'''
PROBES = '''
    """probes: third-party modules whose import reads the environment or the working folder."""
    import os
    import sys
    print("preloaded", "envprobe" in sys.modules, "cwdprobe" in sys.modules, "threadprobe" in sys.modules)
    import envprobe
    import cwdprobe
    import threadprobe

    # %% B-probe
    print("env", envprobe.VALUE)
    print("cwd", cwdprobe.WHERE == os.getcwd())
    print("threads", threadprobe.STARTED)
'''
PACKAGES = {
    "envprobe.py": 'import os\nVALUE = os.environ.get("PRELOAD_TEST_VALUE", "unset")\n',
    "cwdprobe.py": "import os\nWHERE = os.getcwd()\n",
    # an installed module no import statement names (SciPy once; the test extra has no SciPy)
    "dynprobe.py": "golden = (1 + 5 ** 0.5) / 2\n",
    "threadprobe.py": "import threading, time\n"
                      "threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\nSTARTED = True\n",
}


def _outputs(project: Path) -> dict[str, dict[str, str]]:
    """Per entry, what its blocks printed, as {first word: rest of the line}."""
    seen: dict[str, dict[str, str]] = {}
    for record in sorted((project / "_freeze").glob("*/_site_builder/record.json")):
        data = json.loads(record.read_text(encoding="utf-8"))
        lines = [line for b in data["blocks"] for chunk in b["output"] for line in chunk["lines"]]
        seen[data["entry"]] = {"env:": json.dumps(data["environment"].get("blas", "-"))}
        seen[data["entry"]].update({ln.split(" ", 1)[0]: ln.split(" ", 1)[1].strip() for ln in lines})
    return seen


def _build_one_way(project: Path, mode: str) -> tuple[dict[str, dict[str, str]], str]:
    """The project built with the fork server (``mode`` "forked") or spawned interpreters: what
    each entry printed, and the build's stderr."""
    for name in ("a", "b"):
        write_demo(project, name, PLOTTER.format(name=name))
    write_demo(project, "plain", STDLIB_ONLY)
    write_demo(project, "dynamic", NOT_PRELOADED)
    write_demo(project, "probes", PROBES)
    # read at import from the working folder: a demo runs in its own scratch folder, never here
    (project / "matplotlibrc").write_text("lines.linewidth: 4.25\n", encoding="utf-8")
    packages = project / "site-packages"
    packages.mkdir()
    for filename, text in PACKAGES.items():
        (packages / filename).write_text(text, encoding="utf-8")
    # a PYTHONPATH of its own: always a new interpreter (run_cli's server runs its own path only)
    env = {"PYTHONPATH": f"{REPO}{os.pathsep}{packages}", "PRELOAD_TEST_VALUE": "from the environment",
           "SITE_BUILDER_FORK_SERVER": "1" if mode == "forked" else "0"}
    done = run_cli("build", "-j", "1", cwd=project, env=env, timeout=170)
    assert done.returncode == 0, done.stderr
    return _outputs(project), done.stderr


def build_both_ways(folder: Path) -> None:
    """The same project built in ``folder`` with the fork server (preloading) and with spawned
    interpreters, both builds at once; what they printed in ``results.json``."""
    modes = ("forked", "spawned")
    with ThreadPoolExecutor(len(modes)) as pool:
        done = dict(zip(modes, pool.map(lambda mode: _build_one_way(folder / mode, mode), modes)))
    results: dict[str, object] = {}
    for mode, (outputs, stderr) in done.items():
        results[mode] = outputs
        results[f"{mode}-stderr"] = stderr
    (folder / "results.json").write_text(json.dumps(results), encoding="utf-8")


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The same project built with the fork server (preloading) and with spawned interpreters."""
    folder = shared_folder(tmp_path_factory, "preload", build_both_ways)
    return json.loads((folder / "results.json").read_text(encoding="utf-8"))


def test_the_server_preloads_what_the_demos_import(builds: dict[str, object]) -> None:
    forked, spawned = builds["forked"], builds["spawned"]
    assert forked["a"]["preloaded"] == "True" and spawned["a"]["preloaded"] == "False"
    assert forked["a"]["lazy"] == "True" and spawned["a"]["lazy"] == "False"
    assert forked["probes"]["preloaded"] == "True False False"  # the unsafe ones are refused
    assert forked["dynamic"]["preloaded"] == "False"  # no import statement names it


def test_random_generators_are_fresh_in_every_demo(builds: dict[str, object]) -> None:
    forked = builds["forked"]
    # Without re-seeding after the fork, NumPy's global generator (seeded once, at the
    # server's import) would give both demos the same numbers.
    assert forked["a"]["np"] != forked["b"]["np"]
    assert forked["a"]["random"] != forked["b"]["random"]


def test_matplotlib_state_is_pristine_in_every_demo(builds: dict[str, object]) -> None:
    forked, spawned = builds["forked"], builds["spawned"]
    for name in ("a", "b"):  # one of them ran after the other changed rcParams and the style
        assert forked[name]["rc"] == spawned[name]["rc"] == "1.5 large Agg"
        assert forked[name]["figures"] == "[]"
        assert forked[name]["leak"] == "False False"


def test_demos_see_what_a_spawned_interpreter_shows(builds: dict[str, object]) -> None:
    forked, spawned = builds["forked"], builds["spawned"]
    for name in ("plain", "dynamic", "probes"):
        assert {k: v for k, v in forked[name].items() if k != "preloaded"} == \
               {k: v for k, v in spawned[name].items() if k != "preloaded"}, name
    assert forked["probes"]["env"] == "from the environment"
    assert forked["probes"]["cwd"] == "True"
    assert forked["dynamic"]["golden"] == "1.618034"
    assert forked["plain"]["env:"] == '"-"'  # no BLAS line: it never imported NumPy


def test_unsafe_modules_are_refused_once_with_a_reason(builds: dict[str, object]) -> None:
    stderr = str(builds["forked-stderr"])
    assert stderr.count("not preloading cwdprobe") == 1
    assert "keeps the working folder" in stderr
    assert stderr.count("not preloading threadprobe") == 1
    assert "started 1 thread(s)" in stderr
    assert "not preloading" not in str(builds["spawned-stderr"])


def test_script_imports_are_read_from_the_import_statements() -> None:
    source = (
        '"""doc: import nothing"""\nimport numpy as np, os\nfrom matplotlib import (\n    pyplot,\n    cm)\n'
        "from . import sibling\nx = 'import fake'\nif True:\n    import scipy.stats\n"
    )
    assert script_imports(source) == (
        "matplotlib", "matplotlib.cm", "matplotlib.pyplot", "numpy", "os", "scipy.stats",
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('"numpy"', "preload must be a list of module names"),
        ("[1]", "preload must be a list of module names"),
        ('["numpy", "9lives"]', "preload: '9lives' is not a module name"),
        ('["a..b"]', "preload: 'a..b' is not a module name"),
    ],
)
def test_bad_preload_settings_are_usage_errors(tmp_path: Path, value: str, message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.site_builder]\npreload = {value}\n", encoding="utf-8")
    with pytest.raises(UsageError, match=message):
        load_config(tmp_path)
    write_demo(tmp_path, "x", '"""x: nothing."""\nprint(1)\n')
    done = run_cli("build", cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_preload_settings_add_or_turn_off(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.site_builder]\npreload = ["numpy", "json"]\n', encoding="utf-8")
    assert load_config(tmp_path).preload == ("numpy", "json")
    (tmp_path / "pyproject.toml").write_text("[tool.site_builder]\npreload = []\n", encoding="utf-8")
    assert load_config(tmp_path).preload == ()
    write_demo(tmp_path, "np", '"""np: numpy."""\nimport sys\nprint("preloaded", "numpy" in sys.modules)\n'
                               "import numpy\n")
    done = run_cli("build", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _outputs(tmp_path)["np"]["preloaded"] == "False"


def test_a_kept_server_serves_the_next_build_until_the_environment_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from site_builder.commands.build import BuildOptions, build
    from site_builder.run.demo_process import close_fork_server

    write_demo(tmp_path, "who", '"""who: its parent."""\nimport os\n\n# %% B-who\nprint(os.getppid())\n')
    config = load_config(tmp_path)

    def parent() -> str:
        report = build(config, BuildOptions(force=True, keep_warm=True))
        assert report.ok, report.failures
        return report.builds[0].result.blocks[-1].output[0].text

    try:
        first = parent()
        assert parent() == first  # the same warm server
        monkeypatch.setenv("PRELOAD_TEST_VALUE", "changed")
        assert parent() != first  # a demo must see the new environment, also at import time
    finally:
        close_fork_server()


def test_a_build_refused_before_its_demos_run_leaves_no_fork_server(tmp_path: Path) -> None:
    """A demo without a record starts the fork server while the build parses; a build refused
    after that (a folder in a record's place) stops it again."""
    from site_builder.commands.build import BuildOptions, build
    from site_builder.run import demo_process

    write_demo(tmp_path, "np", '"""np: numpy."""\nimport numpy\n')
    (tmp_path / "_freeze" / "np").mkdir(parents=True)
    (tmp_path / "_freeze" / "np" / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(UsageError, match="is not a run record made by site_builder"):
        build(load_config(tmp_path), BuildOptions())
    for starting in list(demo_process._starting):  # none left when the build stopped it
        starting.join()
    assert demo_process._server is None and not demo_process._retired
    assert (tmp_path / "_freeze" / "np" / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_the_packages_stamp_is_the_same_however_the_builder_was_started(tmp_path: Path, monkeypatch) -> None:
    """`site-builder` puts the venv's bin/ first on the path, `python -m site_builder` the
    project folder: neither holds packages, so records trusted by one stay trusted by the other."""
    script_folder, added = tmp_path / "bin", tmp_path / "added"
    script_folder.mkdir()
    added.mkdir()
    rest = [p for p in sys.path[1:] if p != os.getcwd()]
    monkeypatch.setattr(sys, "path", [str(script_folder), *rest])
    started_by_script = packages_stamp()
    monkeypatch.setattr(sys, "path", [os.getcwd(), *rest])
    assert packages_stamp() == started_by_script
    monkeypatch.setattr(sys, "path", [os.getcwd(), *rest, str(added)])
    assert packages_stamp() != started_by_script  # a folder put on the path does count
