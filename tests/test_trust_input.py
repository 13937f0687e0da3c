"""Input the builder does not control is data: each test is the attack, asserting the safe outcome.

The environment, the command line, request paths, settings and the bytes of a demo file end
in a clear message and exit status 2 (serve: a 4xx answer), never a traceback; the builder's
own frames never show in a demo's traceback; an interrupted build exits 130.
"""

from __future__ import annotations

import http.client
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from site_builder.site.publish.preview_http import PreviewServer, SiteState
from tests.conftest import REPO, run_cli, run_main, write_demo

GOOD = '"""good.py — prints one line."""\n# %% B-one\nprint("[B-one] fine")\n'


def assert_one_clean_line(code: int, stderr: str, expected: str) -> None:
    assert code == 2, stderr
    assert "Traceback" not in stderr
    assert len(stderr.strip().splitlines()) == 1, stderr
    assert expected in stderr, stderr


# ---------------------------------------------------------------- the environment


@pytest.mark.parametrize("value", ["99999999999999999999", "abc", "1.5", "-1", "\u00b2", "253402300800"])
def test_a_malformed_source_date_epoch_is_refused_before_anything_runs(
        project: Path, value: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    write_demo(project, "good", GOOD)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", value)
    code, err = run_main(["build"], project, capsys, monkeypatch)
    assert_one_clean_line(code, err, "error: SOURCE_DATE_EPOCH must be a whole number of seconds since 1970")
    assert not (project / "build").exists() and not (project / "_freeze").exists()


def test_a_valid_source_date_epoch_dates_the_page(project: Path) -> None:
    write_demo(project, "good", GOOD)
    r = run_cli("build", cwd=project, env={"SOURCE_DATE_EPOCH": " 253402300799 "})  # the last one there is
    assert r.returncode == 0, r.stderr
    assert "9999-12-31 23:59 UTC" in (project / "build" / "good" / "index.html").read_text(encoding="utf-8")


# ---------------------------------------------------------------- the command line


def test_an_absurd_shard_count_is_a_usage_error_not_a_memory_error(
        project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    write_demo(project, "good", GOOD)
    code, err = run_main(["build", "--shard", "1/99999999999"], project, capsys, monkeypatch)
    assert_one_clean_line(code, err, "argument --shard: N is at most 1000 shares, not 99999999999")
    code, err = run_main(["build", "--shard", "1000/1000", "--list"], project, capsys, monkeypatch)
    assert code == 0 and err == ""  # the largest count is fine: an empty share


# ---------------------------------------------------------------- the settings


@pytest.mark.parametrize("table", ["site-builder", "Site_Builder", "sitebuilder"])
def test_a_misspelled_settings_table_is_refused_not_ignored(
        project: Path, table: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    write_demo(project, "good", GOOD)
    (project / "pyproject.toml").write_text(f'[tool.{table}]\noutput = "public"\n')
    code, err = run_main(["build"], project, capsys, monkeypatch)
    assert_one_clean_line(code, err, f"pyproject.toml: [tool.{table}] is not read: the settings table is "
                                     "[tool.site_builder] (with an underscore); rename it")
    assert not (project / "build").exists() and not (project / "public").exists()


def test_both_settings_tables_are_refused(project: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    write_demo(project, "good", GOOD)
    (project / "pyproject.toml").write_text('[tool.site_builder]\ntitle = "A"\n[tool.site-builder]\ntitle = "B"\n')
    code, err = run_main(["build"], project, capsys, monkeypatch)
    assert_one_clean_line(code, err, "[tool.site-builder] is not read")
    assert "(it exists too)" in err


def test_a_demos_folder_without_demos_is_said(project: Path) -> None:
    (project / "demos").mkdir()
    (project / "demos" / "_helper.py").write_text("X = 1\n")
    r = run_cli("build", cwd=project)
    assert r.returncode == 0, r.stderr
    assert "the demos folder demos holds no demo" in r.stderr
    again = run_cli("build", cwd=project)  # a build that changes nothing says it again
    assert "site unchanged" in again.stderr and "the demos folder demos holds no demo" in again.stderr


# ---------------------------------------------------------------- the bytes of a demo


def test_a_nul_byte_in_a_demo_names_its_line_and_never_reaches_a_page(project: Path) -> None:
    write_demo(project, "good", GOOD)
    (project / "demos" / "nul.py").write_bytes(b'"""nul.py \xe2\x80\x94 a NUL."""\nx = 1\ns = "a\x00b"\n')
    r = run_cli("build", cwd=project)
    assert r.returncode == 1, r.stderr
    assert "error: demos/nul.py:3: a NUL byte (a Python script cannot contain one)" in r.stderr
    assert "Traceback" not in r.stderr and "None" not in r.stderr
    failed = project / "build.failed"
    assert (failed / "good" / "index.html").is_file()  # the other entries are built
    for path in failed.rglob("*"):
        if path.is_file() and path.suffix in {".html", ".py", ".ipynb", ".json", ".xml", ".txt"}:
            assert b"\x00" not in path.read_bytes(), path


# ---------------------------------------------------------------- request paths (serve)


@pytest.fixture
def preview(tmp_path: Path) -> Iterator[tuple[str, int]]:
    """serve's HTTP server over a small site, on a free port of 127.0.0.1."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<html><head></head><body>home</body></html>")
    (site / "404.html").write_text("<html><head></head><body>not here</body></html>")
    server = PreviewServer(("127.0.0.1", 0), SiteState("Site", site), "demos")
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server.server_address[:2]
    finally:
        server.shutdown()
        server.server_close()


def _get(address: tuple[str, int], path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(*address, timeout=10)
    try:
        conn.putrequest("GET", path, skip_accept_encoding=True)
        conn.endheaders()
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


@pytest.mark.parametrize("path, status", [
    ("/" + "a" * 8000, 414),  # longer than any address of a site
    ("/" + "a" * 1500 + ".html", 404),  # one segment longer than a file name may be
    ("/" + "a/" * 700 + "x.csv", 404),
    ("/%00.html", 400),
    ("/x%00/", 400),
])
def test_hostile_request_paths_get_a_4xx_answer(preview: tuple[str, int], path: str, status: int,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, _body = _get(preview, path)
    assert code == status
    assert _get(preview, "/")[0] == 200  # and the server goes on serving
    assert "Traceback" not in capsys.readouterr().err


# ---------------------------------------------------------------- tracebacks


def test_tracebacks_show_the_scripts_frames_only_wherever_the_demos_live(tmp_path: Path) -> None:
    # The builder checked out inside the project (its own repository) and the demos elsewhere.
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    shutil.copytree(REPO / "site_builder", project / "site_builder",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "templates", project / "templates")
    write_demo(elsewhere, "fails", '''
        """fails.py — raises two calls deep."""
        # %% B-x
        def inner():
            raise ValueError("no")
        inner()
    ''')
    env = {**os.environ, "PYTHONPATH": str(project)}
    r = subprocess.run([sys.executable, "-m", "site_builder", "build", "--demos", str(elsewhere / "demos")],
                       cwd=project, env=env, capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1, r.stderr
    page = (project / "build.failed" / "fails" / "index.html").read_text(encoding="utf-8")
    assert "ValueError: no" in page and "inner()" in page
    assert "runner.py" not in page and "run_cell" not in page and "site_builder/" not in page


# ---------------------------------------------------------------- Ctrl-C


def test_a_ctrl_c_landing_in_a_string_exec_still_exits_130(tmp_path: Path) -> None:
    # Dataclasses and namedtuples are made by a string exec; a Ctrl-C landing in one (while
    # render's imports load beside running demos) once made `python -m site_builder` die by
    # SIGINT after saying "interrupted".  Here the interrupt lands there every time.
    (tmp_path / "interrupted_build.py").write_text(
        "import sys\n"
        "from site_builder import cli\n"
        "cli.run_build = lambda args: exec('raise KeyboardInterrupt')\n"
        "sys.exit(cli.main(['build']))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(tmp_path)])}
    r = subprocess.run([sys.executable, "-m", "interrupted_build"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 130, r.stderr
    assert r.stderr == "interrupted; the output folder was left as it was\n"


# ---------------------------------------------------------------- processes a demo starts

LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a child subreaper is Linux only")


def _running(marker: str) -> list[int]:
    """Pids of live processes whose command line holds ``marker`` (zombies have none)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if marker.encode() in (proc / "cmdline").read_bytes():
                    found.append(int(proc.name))
            except OSError:
                continue
    return found


def _still_running(marker: str) -> list[int]:
    """The processes still running a moment after the build ended (SIGKILL takes effect at once,
    but a loaded machine may take a while to schedule the dying)."""
    deadline = time.monotonic() + 10
    while (alive := _running(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive


def _leaver(marker: str, then: str = "") -> str:
    """A demo starting three sleeps that escape its process group in different ways, then ``then``."""
    return f'''
        """leaver.py — starts processes and never stops them."""
        import os, signal, subprocess, sys, time
        # %% B-start
        def sleeper(n):  # says it runs, then sleeps under a name the test looks for
            return ["sh", "-c", f"touch up-{{n}}; exec sleep {marker}{{n}}"]
        subprocess.Popen(sleeper(1))
        subprocess.Popen(sleeper(2), start_new_session=True)
        # a daemon's double fork: the grandchild makes its own session, its parent exits at once
        daemon = f"import os\\nif os.fork() == 0:\\n    os.setsid()\\n    os.execvp('sh', {{sleeper(3)!r}})"
        subprocess.run([sys.executable, "-c", daemon], check=True)
        while not all(os.path.exists(f"up-{{n}}") for n in (1, 2, 3)):
            time.sleep(0.01)
        open("started", "w").close()
        print("[B-start] started")
        {then}
    '''


@LINUX
@pytest.mark.parametrize("fork_server", ["1", "0"])
def test_no_process_a_demo_started_outlives_it(project: Path, fork_server: str) -> None:
    marker = f"3600.{os.getpid()}{fork_server}"
    write_demo(project, "leaver", _leaver(marker))
    try:
        r = run_cli("build", cwd=project, env={"SITE_BUILDER_FORK_SERVER": fork_server})
        assert r.returncode == 0, r.stderr
        assert (project / "_freeze" / "leaver" / "started").is_file()
        assert _still_running(marker) == []
    finally:
        for pid in _running(marker):
            os.kill(pid, 9)


@LINUX
@pytest.mark.parametrize("fork_server", ["1", "0"])
def test_a_demo_timed_out_or_crashed_takes_its_detached_processes_with_it(project: Path, fork_server: str) -> None:
    marker = f"3601.{os.getpid()}{fork_server}"
    write_demo(project, "hangs", _leaver(marker + "0", "time.sleep(600)"))
    if fork_server == "1":  # spawned, a runner killed outright leaves no one to adopt its orphans
        write_demo(project, "crashes", _leaver(marker + "1", "os.kill(os.getpid(), signal.SIGKILL)"))
    try:
        r = run_cli("build", "--timeout", "3", cwd=project, env={"SITE_BUILDER_FORK_SERVER": fork_server})
        assert r.returncode == 1, r.stderr
        assert "hangs: block B-start timed out" in r.stderr
        assert fork_server == "0" or "crashes: block B-start crashed (signal SIGKILL)" in r.stderr
        assert (project / "build.failed" / "hangs" / "index.html").is_file()
        assert _still_running(marker) == []
    finally:
        for pid in _running(marker):
            os.kill(pid, 9)


@LINUX
def test_a_killed_builder_leaves_no_detached_process(project: Path, start_cli: Callable[..., Any]) -> None:
    marker = f"3602.{os.getpid()}"
    running = project / "running"
    write_demo(project, "hangs", _leaver(marker, f"open({str(running)!r}, 'w').close(); time.sleep(600)"))
    proc = start_cli("build", cwd=project, capture=False)
    try:
        deadline = time.monotonic() + 60
        while not running.exists():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        proc.kill()
        proc.wait()
        assert _still_running(marker) == []
    finally:
        proc.kill()
        for pid in _running(marker):
            os.kill(pid, 9)


# ---------------------------------------------------------------- what a demo writes


def test_a_demo_replacing_sys_stdout_leaves_its_file_as_full_as_a_plain_run(project: Path, tmp_path: Path) -> None:
    source = '''
        """logger.py — prints into a file of its own."""
        import sys
        # %% B-log
        sys.stdout = open("log.txt", "w")
        for i in range(2000):
            print(f"line {i}")
        notes = open("notes.txt", "w")
        notes.write("left open\\n")
    '''
    script = write_demo(project, "logger", source)
    plain = tmp_path / "plain"
    plain.mkdir()
    subprocess.run([sys.executable, str(script)], cwd=plain, check=True, timeout=60)
    r = run_cli("build", cwd=project)
    assert r.returncode == 0, r.stderr
    published = project / "build" / "logger"
    for name in ("log.txt", "notes.txt"):
        assert (published / name).read_bytes() == (plain / name).read_bytes(), name
    assert (published / "log.txt").read_text().count("\n") == 2000


@pytest.mark.parametrize("umask, folder, file", [(0o022, 0o755, 0o644), (0o027, 0o750, 0o640)])
def test_the_published_site_has_the_permissions_the_umask_gives(project: Path, umask: int, folder: int,
                                                                file: int) -> None:
    # mkdtemp's private 0700 made a web server running as another user answer 403
    write_demo(project, "good", GOOD)
    previous = os.umask(umask)
    try:
        r = run_cli("build", cwd=project)
    finally:
        os.umask(previous)
    assert r.returncode == 0, r.stderr
    site = project / "build"
    assert site.stat().st_mode & 0o777 == folder
    for path in site.rglob("*"):
        if path.is_dir():
            assert path.stat().st_mode & 0o777 == folder, path
        else:
            assert path.stat().st_mode & 0o777 == file, path
