"""`serve` end to end: a live preview over HTTP that follows edits, survives a broken demo, stops at once."""

from __future__ import annotations

import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, write_demo

DEMO = '''
"""hello.py — say hello.

Blocks
------
[B-greet]  print the greeting
"""

# %% B-greet
print("[B-greet] {text}")
'''


def fetch(url: str) -> tuple[int, str]:
    """(status, body) of a GET; error statuses are returned, not raised."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8")


def wait_for(what: str, check: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def stop_with_ctrl_c(proc: Any) -> str:
    """Send Ctrl-C to serve (a ``Popen``, or ``start_cli``'s handle); check it stops at once, cleanly;
    return what it printed on stderr."""
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)  # at once: no demo's run (they sleep longer) is waited for
    assert proc.returncode in (0, 130)
    assert "Traceback" not in stderr
    return stderr


def read_line(stream: object, timeout: float) -> str:
    selector = selectors.DefaultSelector()
    selector.register(stream, selectors.EVENT_READ)  # type: ignore[arg-type]
    assert selector.select(timeout), "serve printed nothing"
    return stream.readline()  # type: ignore[attr-defined, no-any-return]


@pytest.fixture
def server(project: Path, start_cli: Callable[..., Any]) -> tuple[Any, str]:
    """``serve --port 0`` in ``project`` (no demos folder yet), started as conftest's ``start_cli``
    starts it (killed at the test's end); the process and its URL."""
    proc = start_cli("serve", "--port", "0", "-j", "1", cwd=project)
    line = read_line(proc.stdout, timeout=60)
    match = re.fullmatch(r"serving (http://127\.0\.0\.1:\d+/) \(Ctrl-C to stop\)\n", line)
    assert match, line
    return proc, match.group(1)


def test_serve_follows_edits_and_survives_a_broken_demo(
    project: Path, server: tuple[Any, str]
) -> None:
    proc, url = server
    page = f"{url}hello/"

    # No demos folder yet: the browser is told so, and the server waits for it.
    wait_for("the missing-folder page", lambda: "demos folder not found" in fetch(url)[1])

    write_demo(project, "other", DEMO.replace("hello", "other").format(text="untouched"))
    write_demo(project, "hello", DEMO.format(text="version one"))
    wait_for("the first page", lambda: "[B-greet] version one" in fetch(page)[1])
    status, body = fetch(page)
    assert status == 200
    tag = re.search(r'<script src="/__livereload.js" data-version="([^"]+)" defer></script></head>', body)
    assert tag, "the page must load the live-reload script"
    assert fetch(f"{url}__livereload.js")[0] == 200
    assert "livereload" not in (project / "build" / "hello" / "index.html").read_text(encoding="utf-8")

    write_demo(project, "hello", DEMO.format(text="version two"))
    wait_for("the edited page", lambda: "[B-greet] version two" in fetch(page)[1])
    # The new page is on disk as soon as build/ is swapped; the version moves when the rebuild
    # has finished (records and rebuild state saved), which is when browsers are told to reload.
    wait_for("a new version after the rebuild", lambda: f'data-version="{tag.group(1)}"' not in fetch(page)[1])

    write_demo(project, "hello", DEMO.format(text='broken"); raise ValueError("broken on purpose'))
    wait_for("the error page", lambda: "broken on purpose" in fetch(page)[1])
    assert "ValueError" in fetch(page)[1]
    assert proc.poll() is None, "the server must keep running after a failed build"

    write_demo(project, "hello", DEMO.format(text="version three"))
    wait_for("the fixed page", lambda: "[B-greet] version three" in fetch(page)[1])
    assert not (project / "build.failed").exists()
    wait_for("the search index caught up", lambda: 'data-search="pending"' not in fetch(page)[1])

    stderr = stop_with_ctrl_c(proc)
    assert stderr.rstrip().splitlines()[-1] == "stopped serving"
    # The edited pages went out with the previous search index, which caught up afterwards.
    assert "search catching up; waiting for changes" in stderr, stderr
    assert "search index caught up" in stderr, stderr
    # Only the edited demo re-ran; the other one came from the execution cache every time.
    assert stderr.count("other: ok in") == 1, stderr
    assert "other: ok (from the cache" in stderr


def test_ctrl_c_during_a_build_stops_at_once_and_kills_the_demo(
    project: Path, server: tuple[Any, str]
) -> None:
    proc, url = server
    marker = project / "running.pid"
    write_demo(
        project,
        "slow",
        f'''
        """slow.py — never finishes on its own."""
        import os, time
        from pathlib import Path
        Path({str(marker)!r}).write_text(str(os.getpid()))
        time.sleep(60)
        ''',
    )
    wait_for("the demo to start", marker.exists)
    wait_for("the pid", lambda: marker.read_text().isdigit())
    pid = int(marker.read_text())

    stop_with_ctrl_c(proc)

    def demo_gone() -> bool:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except FileNotFoundError:
            return True
        return "\nState:\tZ" in status  # killed; only its exit status is left to collect

    wait_for("the demo to be killed", demo_gone, timeout=30)


def test_a_busy_port_is_one_clear_line(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from site_builder.cli import main

    monkeypatch.chdir(project)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["serve", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: cannot listen on 127.0.0.1:{port}: ")
    assert err.rstrip().endswith("(try another --port)")
    assert len(err.strip().splitlines()) == 1


PARENT = '''
"""parent.py — says which process forked it.

Blocks
------
[B-who]  print the parent's pid
"""
import os

# %% B-who
print("[B-who] {text} parent", os.getppid())
'''


def test_serve_keeps_its_fork_server_warm_until_the_packages_change(project: Path) -> None:
    packages = project / "site-packages"  # on the import path: installing a package changes its mtime
    packages.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "site_builder", "serve", "--port", "0", "-j", "1"],
        cwd=project, env={**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{packages}"},
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        url = re.search(r"(http://\S+/) ", read_line(proc.stdout, timeout=60)).group(1)  # type: ignore[union-attr]
        page = f"{url}parent/"

        def parent_after(text: str) -> int:
            write_demo(project, "parent", PARENT.format(text=text))
            wait_for(f"the page saying {text}", lambda: f"[B-who] {text} parent" in fetch(page)[1], timeout=30)
            found = re.search(rf"\[B-who\] {text} parent (\d+)", fetch(page)[1])
            assert found
            return int(found.group(1))

        first = parent_after("one")
        assert first != proc.pid  # forked from the fork server, not from serve itself
        assert parent_after("two") == first, "a rebuild must reuse the warm fork server"
        (packages / "newly_installed.py").write_text("VALUE = 1\n", encoding="utf-8")
        assert parent_after("three") != first, "new packages need a new fork server"
        stop_with_ctrl_c(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
