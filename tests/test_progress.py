"""Progress on stderr: plain lines per block off a terminal, the summary table, -q, the live view."""

from __future__ import annotations

import io
from pathlib import Path

from conftest import run_cli, write_demo

from site_builder.run.execute import BlockEvent
from site_builder.reports.progress import EntrySummary, LiveProgress, PlainProgress, Progress, make_progress

TWO_BLOCKS = '''
    """{name}: a tiny demo."""
    x = 1

    # %% B-one
    print("one")

    # %% B-two
    print("two")
'''

FAILING = '''
    """bad: fails in its second block."""
    x = 1

    # %% B-fine
    print("fine")

    # %% B-boom
    raise ValueError("boom")
'''


def test_plain_progress_prints_one_line_per_block_then_a_summary(project: Path) -> None:
    write_demo(project, "alpha", TWO_BLOCKS.format(name="alpha"))
    write_demo(project, "beta", TWO_BLOCKS.format(name="beta"))
    result = run_cli("build", "-j", "2", cwd=project)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    for name in ("alpha", "beta"):
        for block in ("setup", "B-one", "B-two"):
            assert any(line.startswith(f"{name}: {block} ok ") and line.endswith(("ms", " s"))
                       for line in lines), (name, block, result.stderr)
        finished = [line for line in lines if f"] {name}: ok in " in line]
        assert len(finished) == 1 and finished[0].endswith("(3 blocks)")
    # each entry's block lines come before its finished line, in script order
    alpha = [line for line in lines if line.startswith("alpha: ") or "] alpha: " in line]
    assert [line.split()[1] for line in alpha[:3]] == ["setup", "B-one", "B-two"]
    assert sorted(line.split()[0] for line in lines if line.startswith("[")) == ["[1/2]", "[2/2]"]
    header = lines.index(next(line for line in lines if line.startswith("entry ")))
    assert lines[header].split() == ["entry", "status", "time", "blocks", "cache"]
    rows = [lines[header + 1].split(), lines[header + 2].split()]
    assert [r[0] for r in rows] == ["alpha", "beta"]
    assert all(r[1] == "ok" and r[-2] == "3/3" for r in rows)
    assert lines[header + 3].startswith("2 entries: 2 ok;")
    assert lines[-1] == "site written to build"  # the CLI's final line stays last
    assert result.stdout == ""  # progress goes to stderr


def test_failed_block_and_entry_show_in_progress_and_summary(project: Path) -> None:
    write_demo(project, "bad", FAILING)
    write_demo(project, "good", TWO_BLOCKS.format(name="good"))
    result = run_cli("build", "-j", "1", cwd=project)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert any(line.startswith("bad: B-fine ok ") for line in lines)
    assert any(line.startswith("bad: B-boom error ") for line in lines)
    assert any("] bad: failed in " in line for line in lines)
    row = next(line.split() for line in lines if line.startswith("bad "))
    assert row[1] == "failed" and row[-2] == "3/3"  # setup, B-fine, B-boom all ran
    assert any(line.startswith("2 entries: ") and "1 failed" in line for line in lines)
    assert any(line.startswith("error: bad: block B-boom raised ValueError") for line in lines)


def test_quiet_prints_only_problems(project: Path) -> None:
    write_demo(project, "alpha", TWO_BLOCKS.format(name="alpha"))
    ok = run_cli("build", "-q", cwd=project)
    assert ok.returncode == 0, ok.stderr
    assert ok.stderr == ""
    write_demo(project, "bad", FAILING)
    failed = run_cli("build", "-q", "--force", cwd=project)
    assert failed.returncode == 1
    assert "B-fine" not in failed.stderr and "entry " not in failed.stderr
    assert "error: bad: block B-boom raised ValueError" in failed.stderr


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_display_follows_the_stream(monkeypatch: object) -> None:
    assert type(make_progress(io.StringIO(), quiet=False)) is PlainProgress
    assert type(make_progress(_Terminal(), quiet=True)) is Progress
    assert type(make_progress(_Terminal(), quiet=False)) in (LiveProgress, PlainProgress)


def test_live_view_redraws_running_entries_in_place() -> None:
    term = _Terminal()
    live = LiveProgress(term)
    live.start(2)
    live.entry_started("alpha")
    live.block_event(BlockEvent("alpha", "B-train", "start"))
    live.entry_started("beta")
    with live.lock:
        live.draw()  # what the redraw thread shows ~10 times a second
    drawn = term.getvalue()
    assert "alpha" in drawn and "B-train" in drawn and "(starting)" in drawn
    assert "0/2 entries" in drawn
    live.entry_finished(EntrySummary("alpha", "ok", 1.5, 3, 3, False), None)
    live.close()
    out = term.getvalue()
    assert "\x1b[" in out  # redrawn in place, not appended
    assert "[1/2] alpha: ok in 1.5 s (3 blocks)" in out
    assert out.endswith("\x1b[J")  # the live lines are erased when execution ends
    assert not live.thread.is_alive()
