"""Tests of the fork server: demos are forked from one warmed process per build, yet each
still gets a fresh process of its own, and nothing outlives the builder."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import write_demo
from site_builder.commands.build import BuildOptions, BuildReport, build
from site_builder.config import load_config
from site_builder.run.demo_process import fork_server_enabled

pytestmark = pytest.mark.skipif(not fork_server_enabled(), reason="demos are spawned here")

REPORT = '''
    """{name}: reports what kind of process it runs in."""
    import os, random, sys, tempfile

    # %% B-report
    print("pid", os.getpid(), "ppid", os.getppid(), "pgid", os.getpgrp(), "sid", os.getsid(0))
    print("random", random.random(), "temp", os.path.basename(tempfile.mktemp()))
    print("argv", sys.argv, "path0", sys.path[0], "cwd", os.getcwd() == os.path.realpath("."))
    print("main", sorted(k for k in globals() if not k.startswith("__")))
    print("loaded", [m for m in ("threading", "subprocess") if m in sys.modules])
'''


def _build(project: Path, jobs: int = 1) -> BuildReport:
    return build(load_config(project), BuildOptions(jobs=jobs, force=True))


def _report(report: BuildReport, name: str) -> dict[str, str]:
    """What demo ``name`` printed, as {first word: rest of the line}."""
    result = next(b.result for b in report.builds if b.entry.name == name)
    assert result.ok, result.failure
    lines = "".join(c.text for c in result.blocks[-1].output).splitlines()
    return {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in lines}


def _numbers(line: str) -> dict[str, int]:
    words = line.split()
    return {"pid": int(line.split()[0]), **{k: int(v) for k, v in zip(words[1::2], words[2::2])}}


def test_demos_are_forked_from_one_server_each_in_a_fresh_process(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("a", "b", "c"):
        write_demo(project, name, REPORT.format(name=name))
    report = _build(project, jobs=2)
    seen = {name: _report(report, name) for name in ("a", "b", "c")}
    procs = {name: _numbers(s["pid"]) for name, s in seen.items()}
    # one server (not the builder) is the parent of every demo; each has its own session
    assert len({p["pid"] for p in procs.values()}) == 3
    assert len({p["ppid"] for p in procs.values()}) == 1
    assert procs["a"]["ppid"] != os.getpid()
    assert all(p["pgid"] == p["pid"] == p["sid"] for p in procs.values())
    # what a fresh `python demos/x.py` would have: its own random state and temp names,
    # argv, sys.path[0], cwd, and a __main__ holding nothing but the demo's names
    assert len({s["random"].split()[0] for s in seen.values()}) == 3
    assert len({s["random"].split()[2] for s in seen.values()}) == 3
    assert seen["a"]["argv"] == "['demos/a.py'] path0 demos cwd True"  # (project folder scrubbed)
    assert seen["a"]["main"] == "['os', 'random', 'sys', 'tempfile']"
    # modules a plain run has not loaded yet are not loaded for it (a demo importing them pays, as there)
    plain = subprocess.run([sys.executable, "demos/a.py"], cwd=project, capture_output=True, text=True, check=True)
    assert f"loaded {seen['a']['loaded']}" in plain.stdout.splitlines()
    # the server is gone with the build
    assert _gone(procs["a"]["ppid"])
    # SITE_BUILDER_FORK_SERVER=0: spawned, the builder is the parent
    monkeypatch.setenv("SITE_BUILDER_FORK_SERVER", "0")
    assert _numbers(_report(_build(project), "a")["pid"])["ppid"] == os.getpid()


def test_random_differs_between_two_runs_of_an_unseeded_demo(project: Path) -> None:
    write_demo(project, "a", REPORT.format(name="a"))
    first, second = (_report(_build(project), "a")["random"] for _ in range(2))
    assert first != second


def test_a_demo_killing_its_group_or_calling_setsid_leaves_the_server_running(project: Path) -> None:
    write_demo(project, "a-killer", '''
        """Kills its own process group."""
        import os, signal, subprocess
        subprocess.Popen(["sleep", "30"])
        os.killpg(0, signal.SIGKILL)
    ''')
    write_demo(project, "b-setsid", '''
        """Tries to start a session of its own."""
        import os
        os.setsid()
    ''')
    write_demo(project, "c", REPORT.format(name="c"))
    write_demo(project, "d", REPORT.format(name="d"))
    report = _build(project)
    assert report.failures == [
        "a-killer: block setup crashed (signal SIGKILL) at demos/a-killer.py",  # no dump after a SIGKILL
        "b-setsid: block setup raised PermissionError at demos/b-setsid.py:3: [Errno 1] Operation not permitted",
    ]
    c, d = (_numbers(_report(report, n)["pid"]) for n in ("c", "d"))
    assert c["ppid"] == d["ppid"] != os.getpid()  # the same server ran the demos after them


def test_a_demo_killing_the_server_fails_alone(project: Path) -> None:
    write_demo(project, "a-killer", '''
        """Kills its parent, the fork server."""
        import os, signal, time
        os.kill(os.getppid(), signal.SIGKILL)
        time.sleep(30)
    ''')
    write_demo(project, "b", REPORT.format(name="b"))
    report = _build(project)
    killer = next(b.result for b in report.builds if b.entry.name == "a-killer")
    assert killer.duration < 30  # the orphaned demo did not run out its 30 s
    assert report.failures == ["a-killer: block setup crashed (signal SIGKILL) at demos/a-killer.py"]
    assert _numbers(_report(report, "b")["pid"])["ppid"] != os.getpid()  # a new server ran it


def test_a_killed_builder_leaves_no_server_or_demo_behind(project: Path, start_cli: Callable[..., Any]) -> None:
    write_demo(project, "slow", f'''
        """Waits."""
        import os, subprocess, time
        child = subprocess.Popen(["sleep", "60"])
        open("pids.tmp", "w").write(f"{{os.getpid()}} {{os.getppid()}} {{child.pid}}")
        os.replace("pids.tmp", {str(project / "pids")!r})
        time.sleep(60)
    ''')
    builder = start_cli("build", "-q", cwd=project, capture=False)
    deadline = time.monotonic() + 30
    while not (project / "pids").exists():
        assert builder.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    demo, server, grandchild = (int(p) for p in (project / "pids").read_text().split())
    assert server != builder.pid
    builder.kill()
    builder.wait()
    deadline = time.monotonic() + 30  # a bound on waiting, not a speed
    while not all(_gone(pid) for pid in (server, demo, grandchild)):
        assert time.monotonic() < deadline, "a process outlived the killed builder"
        time.sleep(0.05)


def _gone(pid: int) -> bool:
    """The process has exited (a zombie waiting for init to reap it counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] in ("Z", "X")
    except OSError:
        return True


def test_a_server_that_refuses_a_preload_is_heard_however_late_the_builder_looks(tmp_path: Path) -> None:
    """A server refusing a preload sends "ready" and exits at once; a builder whose wait timed
    out just before, and that looks again only after both arrived, must still read the refusal
    (it once took the server for broken and spawned every demo, preloading nothing)."""
    import threading

    from site_builder.run.demo_process import ForkServer
    from site_builder.run.preload import Preload

    packages = tmp_path / "site-packages"
    packages.mkdir()
    (packages / "cwdprobe.py").write_text("import os\nWHERE = os.getcwd()\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(packages)}
    server = ForkServer(env, Preload(("cwdprobe",), str(tmp_path / "demos"), str(tmp_path)))
    heard = server.ready

    class LateWaiter(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            server.reader.join(30)  # the reader took "ready" and the exit meanwhile
            return False  # as a wait that timed out just before "ready" came

    server.ready = LateWaiter()
    if heard.is_set():
        server.ready.set()
    try:
        assert server.wait_ready()
        assert "keeps the working folder" in server.preloaded["refused"]["cwdprobe"]
        assert not server.alive
    finally:
        server.close()
