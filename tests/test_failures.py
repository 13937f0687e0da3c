"""Issue 3 at the level a user sees it: broken demos built with the CLI.

Each test builds tiny standard-library demos with ``run_cli`` and checks the exit
status, the one-line messages, the cells of the page and the previous ``build/``.
"""

from __future__ import annotations

import html
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, run_cli, run_main, write_demo
from tests.page_reader import cell, page, status, text


def errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error: ")]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def assert_clean_usage_error(code: int, stderr: str) -> None:
    assert code == 2, stderr
    assert "Traceback" not in stderr
    assert len(stderr.strip().splitlines()) == 1, stderr


# ---------------------------------------------------------------- 1. a block that raises


def test_raising_block_and_syntax_error(project: Path) -> None:
    write_demo(project, "attention", '''
        """Raises in B-train."""
        import json
        def helper(x):
            return json.loads(x)
        # %% B-prep
        print("prepared")
        # %% B-train
        print("training <b>")
        helper("{not json")
        # %% B-after
        print("never")
    ''')
    write_demo(project, "broken", '''
        """Syntax error in B-b."""
        print("setup")
        # %% B-a
        x = 1
        # %% B-b
        def f(:
            pass
    ''')
    r = run_cli("build", "--timeout", "20", cwd=project)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert errors(r.stderr) == [
        "error: broken: block B-b raised SyntaxError at demos/broken.py:6: invalid syntax",
        "error: attention: block B-train raised JSONDecodeError at demos/attention.py:4: "
        "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
    ]
    assert not (project / "build").exists()
    assert "no site was written to build" in r.stderr
    assert "build.failed/attention/index.html" in r.stderr
    failed = project / "build.failed"
    p = page(failed, "attention")
    train = cell(p, "B-train")
    assert status(p, "B-prep") == "ok" and "prepared" in text(cell(p, "B-prep"))
    assert status(p, "B-train") == "error"
    assert "training &lt;b&gt;" in train  # escaped
    tb = text(re.search(r'<pre class="traceback">.*?</pre>', train, re.S).group(0))  # type: ignore[union-attr]
    # the script's own frames only: the builder's runner and the json library are left out
    assert 'File "demos/attention.py", line 9' in tb and 'File "demos/attention.py", line 4' in tb
    assert "runner.py" not in tb and "site_builder" not in tb and "json/decoder.py" not in tb
    assert str(project) not in p and str(REPO) not in p
    assert status(p, "B-after") == "not-run" and "the script stopped at block B-train" in text(cell(p, "B-after"))
    # the syntax error: found before anything ran, but the entry still has a page
    b = page(failed, "broken")
    assert [status(b, n) for n in ("setup", "B-a", "B-b")] == ["not-run"] * 3
    assert "raised SyntaxError at demos/broken.py:6" in text(b)
    bad = text(cell(b, "B-b"))
    assert "SyntaxError at line 6: invalid syntax" in bad and "def f(:" in bad and "^" in bad
    assert '<pre class="output">' not in b  # nothing ran


# ---------------------------------------------------------------- 2. keep going, then fail


def test_keep_going_then_fail_and_fail_fast(project: Path) -> None:
    write_demo(project, "a-bad", '"""A."""\nraise RuntimeError("first")\n')
    write_demo(project, "b-good", '"""B."""\nprint("fine")\n')
    write_demo(project, "c-bad", '"""C."""\nraise RuntimeError("second")\n')
    r = run_cli("build", "-j", "2", cwd=project)
    assert r.returncode == 1
    assert errors(r.stderr) == [
        "error: a-bad: block setup raised RuntimeError at demos/a-bad.py:2: first",
        "error: c-bad: block setup raised RuntimeError at demos/c-bad.py:2: second",
    ]
    assert "fine" in page(project / "build.failed", "b-good")  # every entry was still built
    r = run_cli("build", "-j", "1", "--fail-fast", "--force", cwd=project)
    assert r.returncode == 1
    assert len(errors(r.stderr)) == 1, r.stderr


# ---------------------------------------------------------------- 3. expected errors


def test_expected_errors_both_ways(project: Path) -> None:
    write_demo(project, "overflow", '''
        """Expected error."""
        # %% B-overflow tags=["raises-exception"]
        raise OverflowError("too <big>")
        # %% B-after
        print("after ran")
    ''')
    r = run_cli("build", cwd=project)
    assert r.returncode == 0, r.stderr
    p = page(project / "build", "overflow")
    assert status(p, "B-overflow") == "expected-error"
    assert "OverflowError: too &lt;big&gt;" in cell(p, "B-overflow")
    assert "after ran" in cell(p, "B-after")
    write_demo(project, "quiet", '''
        """Should raise, does not."""
        # %% B-overflow tags=["raises-exception"]
        print("no error")
    ''')
    r = run_cli("build", cwd=project)
    assert r.returncode == 1
    assert errors(r.stderr) == [
        'error: quiet: block B-overflow was expected to raise (tags=["raises-exception"]) but did not'
    ]
    assert "but it did not" in text(cell(page(project / "build.failed", "quiet"), "B-overflow"))


# ---------------------------------------------------------------- 4. timeouts and hangs


def test_timeouts_cli_and_per_entry(project: Path) -> None:
    # Limits of a few seconds: a loaded machine must reach the block before the limit (1.5 s did not at load 25).
    # Two demos side by side (-j 2), one build: "slow" has a limit of its own, "other" the command line's.
    (project / "pyproject.toml").write_text('[tool.site_builder.entries.slow]\ntimeout = 4.5\n')
    for name in ("slow", "other"):
        write_demo(project, name, '''
            """Sleeps."""
            # %% B-sleep
            import subprocess, time
            subprocess.Popen(["sleep", "60"])  # a grandchild that never exits
            print("sleeping", flush=True)
            time.sleep(60)
        ''')
    r = run_cli("build", "-j", "2", "--timeout", "3", cwd=project)  # the per-entry 4.5 s wins over the 3 s
    assert r.returncode == 1
    slow, other = sorted(errors(r.stderr), key=lambda line: not line.startswith("error: slow:"))
    found = re.fullmatch(r"error: slow: block B-sleep timed out after running \d+\.\d s "
                         r"\(the demo's limit of 4\.5 s was reached after (\d+\.\d) s\)", slow)
    assert found, slow
    assert float(found[1]) < 30  # stopped at its own limit: not the command line's, nor the grandchild's 60 s
    p = page(project / "build.failed", "slow")
    assert status(p, "B-sleep") == "timeout" and "sleeping" in cell(p, "B-sleep")
    assert other.startswith("error: other: block B-sleep timed out") and "limit of 3 s" in other


def test_nothing_hangs_the_build_and_crashes_name_their_block(project: Path) -> None:
    write_demo(project, "hangs", '''
        """Every way a demo could hang or break its capture."""
        import os, signal, subprocess, sys
        # %% B-stdin
        print(repr(sys.stdin.read()))
        try:
            input("name? ")
        except EOFError:
            print("EOF")
        # %% B-child
        subprocess.Popen(["sleep", "60"])
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("child started")
        # %% B-fork
        pid = os.fork()
        if pid == 0:
            print("in the fork", flush=True)
            os._exit(0)
        os.waitpid(pid, 0)
        # %% B-close
        os.close(1)
        print("still captured")
        # %% B-exit
        print("bye")
        sys.exit(0)
        # %% B-never
        print("never")
    ''')
    write_demo(project, "exits", '''
        """sys.exit(2)."""
        import sys
        # %% B-exit
        sys.exit(2)
        # %% B-never
        print("never")
    ''')
    # 5. crashes: named by block, earlier outputs kept
    write_demo(project, "segv", '''
        """Segfaults."""
        import ctypes
        # %% B-ok
        print("kept output")
        # %% B-crash
        print("about to crash")
        ctypes.string_at(0)
        # %% B-after
        print("never")
    ''')
    write_demo(project, "quits", '''
        """os._exit."""
        import os
        # %% B-ok
        print("kept too")
        # %% B-quit
        os._exit(3)
    ''')
    r = run_cli("build", "--timeout", "20", cwd=project)  # none timed out: the errors below are all there are
    assert r.returncode == 1
    assert errors(r.stderr) == [
        "error: exits: block B-exit exited (exit status 2) at demos/exits.py:4",
        "error: quits: block B-quit crashed (os._exit(3)) at demos/quits.py:6",
        "error: segv: block B-crash crashed (signal SIGSEGV) at demos/segv.py:7",
    ]
    p = page(project / "build.failed", "segv")
    assert "kept output" in cell(p, "B-ok") and "about to crash" in cell(p, "B-crash")
    assert status(p, "B-crash") == "crashed" and status(p, "B-after") == "not-run"
    assert "kept too" in cell(page(project / "build.failed", "quits"), "B-ok")
    p = page(project / "build.failed", "hangs")
    assert "&#39;&#39;" in cell(p, "B-stdin") and "EOF" in cell(p, "B-stdin")
    assert "child started" in cell(p, "B-child")
    assert "in the fork" in cell(p, "B-fork")
    assert "still captured" in cell(p, "B-close")
    assert status(p, "B-exit") == "ok" and "Ended the script here (sys.exit(0))" in cell(p, "B-exit")
    assert status(p, "B-never") == "not-run" and "never" not in text(cell(p, "B-never")).replace(
        "B-never", "").replace('print("never")', "")
    assert status(page(project / "build.failed", "exits"), "B-never") == "not-run"


# ---------------------------------------------------------------- 6. output limits


def test_huge_output_invalid_utf8_ansi_and_progress_bars(project: Path) -> None:
    write_demo(project, "noisy", '''
        """Prints a lot."""
        import sys
        # %% B-spam
        sys.stdout.write("".join(f"line {i}\\n" for i in range(400_000)))
        # %% B-odd
        sys.stdout.buffer.write(b"bad \\xff\\xfe bytes\\n")
        print("\\x1b[31mred\\x1b[0m plain \\x1b[1;32mbold green\\x1b[0m \\x1b]0;title\\x07\\x1b[2Kdone")
        for pct in (0, 50, 100):
            print(f"\\rprogress {pct:3d}%", end="", file=sys.stderr)
        print(file=sys.stderr)
    ''')
    r = run_cli("build", cwd=project)
    assert r.returncode == 0, r.stderr
    site = project / "build"
    html_page = (site / "noisy" / "index.html").read_bytes()
    assert len(html_page) < 1_000_000
    p = html_page.decode("utf-8")
    spam = cell(p, "B-spam")
    head, omitted, tail = spam.index("line 0\n"), spam.index('class="omitted"'), spam.index("line 399999\n")
    assert head < omitted < tail
    m = re.search(r"… (\d+) lines \(([\d.]+ MB)\) left out … <a href=\"([^\"]+)\">Complete output</a>", spam)
    assert m and int(m.group(1)) > 300_000
    full = (site / "noisy" / html.unescape(m.group(3))).read_text(encoding="utf-8")
    assert full.count("\n") == 400_000 and full.endswith("line 399999\n")
    odd = cell(p, "B-odd")
    assert "bad \ufffd\ufffd bytes" in odd
    assert '<span class="ansi-red">red</span> plain <span class="ansi-bold ansi-green">bold green</span> done' in odd
    shown = "".join(re.findall(r'<pre class="output">.*?</pre>', odd, re.S))
    assert "\x1b" not in shown and "[31m" not in shown and "title" not in shown
    assert "progress 100%" in odd and "progress  50%" not in odd


# ---------------------------------------------------------------- 7. names and files


def test_bad_file_name_is_a_clear_message(project: Path) -> None:
    write_demo(project, "Static", '"""x."""\n')  # its page would be static/, the site's own folder
    write_demo(project, "good", '"""fine."""\nprint("good ran")\n')
    r = run_cli("build", cwd=project)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "error: demos/Static.py: 'static' is reserved for the site's own pages" in r.stderr
    # keep going, then fail: the good entry still ran, and its page is kept for inspection
    assert "good ran" in (project / "build.failed" / "good" / "index.html").read_text()
    assert not (project / "build").exists()
    r = run_cli("build", "--fail-fast", cwd=project)
    assert r.returncode == 1 and "is reserved for the site's own pages" in r.stderr


def test_files_a_demo_writes_stay_in_its_folder(project: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    outside = tmp_path_factory.mktemp("outside") / "abs.txt"
    write_demo(project, "writer", f'''
        """Writes files everywhere."""
        import os
        open("../escape.txt", "w").write("escaped")
        open({str(outside)!r}, "w").write("absolute")
        open("index.html", "w").write("<h1>fake page</h1>")
        open("writer.py", "w").write("fake source")
        os.symlink("/etc/hostname", "link.txt")
        os.makedirs("sub", exist_ok=True)
        open("sub/ok.txt", "w").write("fine")
    ''')
    r = run_cli("build", cwd=project)
    assert r.returncode == 0, r.stderr
    site = project / "build"
    files = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    assert "writer/sub/ok.txt" in files
    assert not {f for f in files if "escape" in f or f.endswith("abs.txt") or f.endswith("link.txt")}
    assert "<h1>fake page</h1>" not in (site / "writer" / "index.html").read_text()
    assert (site / "writer" / "writer.py").read_bytes() == (project / "demos" / "writer.py").read_bytes()
    assert not (project / "escape.txt").exists() and not (project / "build" / "escape.txt").exists()
    assert "writer: the file index.html the demo wrote is not published: its name clashes" in r.stderr
    assert "writer: the file writer.py the demo wrote is not published" in r.stderr
    assert "not published (its file name clashes" in page(site, "writer")


# ---------------------------------------------------------------- 8. atomic output


def _kill_while_running(project: Path, sig: signal.Signals, start_cli: Callable[..., Any]) -> tuple[int, str]:
    """Start a build of the slow demo, send ``sig`` once it runs; the exit status and stderr."""
    (project / "started").unlink(missing_ok=True)
    proc = start_cli("build", "--force", cwd=project)
    deadline = time.monotonic() + 30
    while not (project / "started").exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=120)  # a bound on waiting, generous on a loaded machine
    return proc.returncode, err


def test_failed_or_killed_builds_leave_the_last_good_site_untouched(project: Path,
                                                                   start_cli: Callable[..., Any]) -> None:
    write_demo(project, "good", '"""Good."""\nprint("good")\n')
    assert run_cli("build", cwd=project).returncode == 0
    before = snapshot(project / "build")
    # a failing build: build/ byte for byte as it was, the failed pages where the message says
    write_demo(project, "bad", '"""Bad."""\n# %% B-x\nraise ValueError("no")\n')
    r = run_cli("build", cwd=project)
    assert r.returncode == 1
    assert snapshot(project / "build") == before
    assert "build was left as it was" in r.stderr
    named = re.search(r"(build\.failed/bad/index\.html)", r.stderr)
    assert named and "ValueError: no" in text((project / named.group(1)).read_text())
    (project / "demos" / "bad.py").unlink()
    # killed builds: Ctrl-C, SIGTERM and SIGKILL while a demo (and its child) runs
    grandchild = f"60.{os.getpid() % 1000}7"  # a command line only this test starts
    write_demo(project, "slow", f'''
        """Slow."""
        import subprocess, time
        subprocess.Popen(["sleep", "{grandchild}"])
        open({str(project / "started")!r}, "w").close()
        time.sleep(60)
    ''')
    for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGKILL, -9)):
        status_code, err = _kill_while_running(project, sig, start_cli)
        assert status_code == code, err
        if sig != signal.SIGKILL:
            assert "Traceback" not in err and "the output folder was left as it was" in err
        assert snapshot(project / "build") == before
        deadline = time.monotonic() + 30  # the demo's child does not outlive the builder (a bound on waiting)
        while f"sleep {grandchild}" in subprocess.run(["ps", "-eo", "args"], capture_output=True,
                                                     text=True).stdout:
            assert time.monotonic() < deadline, f"the demo's child outlived the builder ({sig.name})"
            time.sleep(0.1)
    # the next build is not disturbed by anything the killed ones left
    (project / "demos" / "slow.py").unlink()
    assert run_cli("build", cwd=project).returncode == 0
    assert not (project / "build.failed").exists()
    assert [p.name for p in project.iterdir() if p.name.startswith(".build")] == []


# ---------------------------------------------------------------- 9. usage errors


@pytest.mark.parametrize("args, message", [
    (["build", "--demos", "nowhere"], "error: demos folder not found: nowhere"),
    (["build", "--bogus"], "unrecognized arguments: --bogus"),
    (["build", "--timeout", "0"], "argument --timeout: must be positive"),
    (["build", "--timeout", "soon"], "argument --timeout: not a number"),
    (["build", "--timeout", "nan"], "must be a finite number"),
    (["build", "-j", "0"], "argument -j/--jobs: must be at least 1"),
    (["build", "--out", "a-file"], "output path exists and is not a folder: a-file"),
    (["build", "--out", "a-file/site"], "cannot create the output folder a-file/site: a-file is a file"),
])
def test_usage_errors(project: Path, args: list[str], message: str, capsys: pytest.CaptureFixture[str],
                      monkeypatch: pytest.MonkeyPatch) -> None:
    write_demo(project, "good", '"""Good."""\n')
    (project / "a-file").write_text("not a folder")
    code, err = run_main(args, project, capsys, monkeypatch)
    assert_clean_usage_error(code, err)
    assert message in err


@pytest.mark.parametrize("toml, message", [
    ("[tool.site_builder\n", "pyproject.toml: not valid TOML"),
    ('[tool.site_builder]\ntimeout = "long"\n', "timeout must be a number of seconds"),
    ("[tool.site_builder]\ntimeout = inf\n", "timeout must be a finite number"),
    ("[tool.site_builder]\ntimeuot = 3\n", "unknown key 'timeuot'"),
])
def test_bad_configuration(project: Path, toml: str, message: str, capsys: pytest.CaptureFixture[str],
                           monkeypatch: pytest.MonkeyPatch) -> None:
    write_demo(project, "good", '"""Good."""\n')
    (project / "pyproject.toml").write_text(toml)
    code, err = run_main(["build"], project, capsys, monkeypatch)
    assert_clean_usage_error(code, err)
    assert message in err


def test_usage_error_through_the_real_command(project: Path) -> None:
    r = run_cli("build", "--demos", "nowhere", cwd=project)
    assert_clean_usage_error(r.returncode, r.stderr)
    assert r.stderr == "error: demos folder not found: nowhere\n"


def test_a_ctrl_c_python_ignores_is_raised_again_by_the_builds_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    # A Ctrl-C landing in a weakref callback (an import's module lock has one) is printed as
    # "Exception ignored" and lost; the build would have run to its end and written its site.
    import weakref

    from site_builder.errors import PendingInterrupt, Terminated

    monkeypatch.setattr("sys.unraisablehook", lambda unraisable: None)
    for signum, kind in ((signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, Terminated)):
        pending = PendingInterrupt()
        pending.check()  # nothing received: nothing raised

        class Held:
            pass

        held = Held()
        ref = weakref.ref(held, lambda _ref, signum=signum: pending.on_signal(signum, None))
        del held  # the callback raises, and Python ignores it
        assert ref() is None
        with pytest.raises(kind):
            pending.check()
