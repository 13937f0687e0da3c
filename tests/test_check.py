"""check: re-run demos and compare with the committed records (drift, tolerance, missing seeds)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from conftest import run_cli, write_demo
from site_builder.commands.build import BuildOptions, build
from site_builder.commands.check import CheckOptions, check
from site_builder.cli import main
from site_builder.config import load_config
from site_builder.run.records.drift import lines_match
from site_builder.errors import UsageError
from site_builder.run.records.record_json import RECORD_FILE

# Prints a value read from a file outside the project's cache key: the test changes it
# after the build, as another machine's libraries would change a result.
STEADY = '''
    """Prints a loss and writes a table."""
    from pathlib import Path

    value = float(Path(__file__).with_name("value.txt").read_text())

    # %% B-train
    print(f"[B-train] final loss = {value}")
    Path("table.csv").write_text(f"epoch,loss\\n1,{value}\\n")

    # %% B-report
    print("[B-report] done")
'''


def _project(tmp_path: Path, value: str = "0.5") -> Path:
    project = tmp_path / "project"
    write_demo(project, "steady", STEADY)
    (project / "demos" / "value.txt").write_text(value)
    assert build(load_config(project), BuildOptions()).ok
    return project


def _check(project: Path, *names: str, runs: int = 1, tolerance: float | None = None) -> tuple[int, str]:
    """Run check in this process (fast); return its exit status and report."""
    out = io.StringIO()
    status = check(load_config(project), CheckOptions(names, tolerance, runs, jobs=2), out)
    return status, out.getvalue()


def _edit_record(project: Path, name: str, block: str, old: str, new: str) -> None:
    path = project / "_freeze" / name / RECORD_FILE
    data = json.loads(path.read_text())
    for b in data["blocks"]:
        if b["name"] == block:
            for chunk in b["output"]:
                chunk["lines"] = [line.replace(old, new) for line in chunk["lines"]]
    path.write_text(json.dumps(data, indent=1, sort_keys=True))


def test_an_unchanged_demo_matches_its_record(tmp_path: Path) -> None:
    project = _project(tmp_path)
    record = (project / "_freeze" / "steady" / RECORD_FILE).read_bytes()
    result = run_cli("check", cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "steady: matches its record" in result.stdout
    assert "\x1b[" not in result.stdout  # no colour when not on a terminal
    # the runs' results never replace the record's; check only adds its verdict (the evidence)
    after = json.loads((project / "_freeze" / "steady" / RECORD_FILE).read_text())
    verdict = after.pop("verdict")
    before = json.loads(record)
    assert before.pop("verdict") is None and after == before
    assert verdict["agreed"] is True and verdict["runs"] == 3


def test_drift_is_shown_per_block_as_a_diff(tmp_path: Path) -> None:
    project = _project(tmp_path)
    _edit_record(project, "steady", "B-train", "0.5", "0.25")  # the record says another number
    status, out = _check(project, "steady")
    assert status == 1, out
    assert "steady: drift in 1 of 3 blocks (B-train)" in out
    assert "--- steady B-train (record)\n+++ steady B-train (now)\n" in out
    assert "-[B-train] final loss = 0.25\n+[B-train] final loss = 0.5\n" in out
    assert "B-report" not in out.split("(B-train)")[1]  # the unchanged block is not diffed
    assert "missing seed" not in out


def test_a_changed_text_file_is_drift(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project / "demos" / "value.txt").write_text("0.75")  # the record still says 0.5
    status, out = _check(project)
    assert status == 1
    assert "-  1,0.5\n+  1,0.75\n" in out  # the CSV's lines, diffed
    assert "value.txt, which it read, changed" in out  # why the record is stale


def test_tolerance_accepts_a_small_drift_and_rejects_a_big_one(tmp_path: Path) -> None:
    project = _project(tmp_path, "0.5")
    (project / "demos" / "value.txt").write_text("0.5000001")  # relative change 2e-7
    assert _check(project)[0] == 1  # exact by default
    status, out = _check(project, tolerance=1e-6)
    assert status == 0, out
    assert "matches its record" in out and "tolerance 1e-06" in out
    (project / "demos" / "value.txt").write_text("0.51")
    status, out = _check(project, tolerance=1e-6)
    assert status == 1 and "+[B-train] final loss = 0.51" in out
    # The same tolerance, per entry in pyproject.toml.
    (project / "demos" / "value.txt").write_text("0.5000001")
    (project / "pyproject.toml").write_text("[tool.site_builder.entries.steady]\ntolerance = 1e-6\n")
    assert _check(project)[0] == 0


@pytest.mark.parametrize(("old", "new", "tolerance", "same"), [
    ("loss = 0.5 at epoch 3", "loss = 0.5000001 at epoch 3", 1e-6, True),
    ("loss = 0.5 at epoch 3", "loss = 0.51 at epoch 3", 1e-6, False),
    ("loss = 0.5 at epoch 3", "loss = 0.5 at step 3", 0.5, False),  # the words must match exactly
    ("x = 1e-3", "x = 1.0000001e-3", 1e-6, True),
    ("final loss = 0.0000", "final loss = 0.0068", 1e-3, False),
    ("tiny = 0.0", "tiny = 1e-15", 1e-9, True),  # below the absolute floor
    ("a 1 2", "a 1", 0.5, False),
])
def test_lines_match(old: str, new: str, tolerance: float, same: bool) -> None:
    assert lines_match(old, new, tolerance) is same


def test_a_demo_without_a_seed_is_reported(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_demo(project, "unseeded", '''
        import time

        # %% B-train
        print("[B-train] loss =", time.time_ns())
    ''')
    assert build(load_config(project), BuildOptions()).ok
    result = run_cli("check", cwd=project)  # the default: two runs
    assert result.returncode == 1
    assert "attention: the output of B-train differs between two runs (run 1 and run 2): missing seed?" \
        in result.stdout


def test_usage_errors(tmp_path: Path) -> None:
    project = _project(tmp_path)
    with pytest.raises(UsageError, match=r"no entry named nope \(entries: steady\)"):
        _check(project, "nope")
    write_demo(project, "fresh", 'print("new")\n')
    missing = run_cli("check", cwd=project)  # nothing runs: every record is checked first
    assert missing.returncode == 2
    assert "fresh: no run record in _freeze/fresh/" in missing.stderr and "build` first" in missing.stderr
    (project / "pyproject.toml").write_text("[tool.site_builder.entries.steady]\ntolerance = 2\n")
    with pytest.raises(UsageError, match="entries.steady.tolerance must be a relative difference"):
        load_config(project)
    for bad in (["--tolerance", "-1"], ["--tolerance", "nan"], ["--runs", "0"]):
        with pytest.raises(SystemExit) as exited:
            main(["check", *bad])
        assert exited.value.code == 2


def test_an_entry_s_prose_setting_is_the_one_its_build_used(tmp_path: Path) -> None:
    # A Sphinx-Gallery script reads as reST by itself; its setting makes its prose Markdown, whose
    # {eval} role quotes a value. check must find the same quoted values the build recorded.
    project = tmp_path / "project"
    write_demo(project, "quoted", '''
        """
        Quoted
        ======

        Intro.
        """
        x = 41 + 1

        # %%
        # The value is {eval}`x` here.

        print(x)
    ''')
    (project / "pyproject.toml").write_text('[tool.site_builder.entries.quoted]\nprose = "markdown"\n')
    assert build(load_config(project), BuildOptions()).ok
    status, out = _check(project)
    assert status == 0, out
    assert "quoted: matches its record" in out
