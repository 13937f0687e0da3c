"""build --shard K/N: exact, balanced, machine-independent partitions; shards assemble the same site."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli, write_demo
from site_builder.commands.build import BuildOptions, build
from site_builder.cli import main
from site_builder.config import load_config
from site_builder.source.entries import discover
from site_builder.run.records.record_json import RECORD_FILE
from site_builder.run.shards import committed_durations, estimated_seconds, partition, shard_entries

COSTS = {"attention": 9.0, "bayes": 7.5, "cnn": 7.5, "dropout": 4.0, "embedding": 3.0,
         "fft": 2.0, "gan": 2.0, "hmm": 1.0, "ica": 0.5, "jitter": 0.0}


@pytest.mark.parametrize("shards", [1, 2, 3, 4])
def test_shards_partition_the_entries_exactly_and_balanced(shards: int) -> None:
    shares = partition(COSTS, shards)
    assert len(shares) == shards
    names = [name for share in shares for name in share]
    assert sorted(names) == sorted(COSTS) and len(names) == len(set(names))  # each in exactly one
    loads = [sum(COSTS[n] for n in share) for share in shares]
    # Longest-processing-time first: no share exceeds another by more than its smallest job.
    assert max(loads) - min(loads) <= max(COSTS.values())
    if shards == 2:
        assert loads == [18.5, 18.0]  # 36.5 in all: as even as it can be
    assert partition(dict(reversed(COSTS.items())), shards) == shares  # order of input is irrelevant


def test_unrecorded_entries_cost_their_size_at_the_recorded_rate(tmp_path: Path) -> None:
    for name, size in (("a", 100), ("b", 300), ("c", 200)):
        write_demo(tmp_path, name, "x = 1\n" + "#" * (size - 7) + "\n")
    entries = discover(tmp_path / "demos", tmp_path)
    assert estimated_seconds(entries, {"a": 2.0}) == pytest.approx({"a": 2.0, "b": 6.0, "c": 4.0})
    assert estimated_seconds(entries, {}) == {"a": 100, "b": 300, "c": 200}


DEMOS = {
    "alpha": 'print("alpha", 1)\n',
    "beta": '# %% B-one\nprint("beta")\n\n# %% B-two\nfrom pathlib import Path\nPath("t.csv").write_text("a,b\\n1,2\\n")\n',
    "gamma": 'import sys\nprint("gamma", file=sys.stderr)\n',
    "delta": 'print("delta " * 40)\n',
    "epsilon": '# %% B-x\nprint(2 ** 10)\n',
}


SETTINGS = '[tool.site_builder]\ntitle = "Sharded"\n'


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("shards", [2, 3])
def test_shards_on_separate_machines_assemble_the_site_of_an_unsharded_build(tmp_path: Path, shards: int) -> None:
    machines = []
    for k in range(1, shards + 1):  # each shard in a folder of its own, as on N machines: nothing shared
        machine = tmp_path / f"machine-{k}"
        for name, source in DEMOS.items():
            write_demo(machine, name, source)
        (machine / "pyproject.toml").write_text(SETTINGS, encoding="utf-8")  # the site's title, not the folder's
        report = build(load_config(machine), BuildOptions(shard=(k, shards)))
        assert report.ok and not (machine / "build").exists()  # records only, no site
        machines.append(machine)
    ran = [sorted(p.name for p in (m / "_freeze").iterdir() if not p.name.startswith(".")) for m in machines]
    assert sorted(sum(ran, [])) == sorted(DEMOS) and all(ran)  # each entry in exactly one shard
    # The publishing machine: the demos plus every shard's records.
    publish = tmp_path / "publish"
    shutil.copytree(machines[0] / "demos", publish / "demos")
    (publish / "pyproject.toml").write_text(SETTINGS, encoding="utf-8")
    for machine in machines:
        shutil.copytree(machine / "_freeze", publish / "_freeze", dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(".*"))  # its records, not its own cache
    assert build(load_config(publish), BuildOptions(frozen=True)).ok
    # One machine building it all without shards, in a folder of its own, given the same records
    # (run times and dates are the records'): it reuses every record, runs nothing, and writes
    # the very site the shards' records assembled.
    alone = tmp_path / "alone"
    shutil.copytree(machines[0] / "demos", alone / "demos")
    (alone / "pyproject.toml").write_text(SETTINGS, encoding="utf-8")
    shutil.copytree(publish / "_freeze", alone / "_freeze", ignore=shutil.ignore_patterns(".*"))
    unsharded = build(load_config(alone), BuildOptions())
    assert unsharded.ok and unsharded.from_cache == set(DEMOS)
    assert _tree(publish / "build") == _tree(alone / "build")


def test_shards_run_in_turn_on_one_machine_still_cover_every_entry(tmp_path: Path) -> None:
    """Records written by shard 1 must not move entries between the shards that follow."""
    for name, source in DEMOS.items():
        write_demo(tmp_path, name, source)
    config = load_config(tmp_path)
    entries = discover(config.demos, config.root)
    before = [[e.name for e in shard_entries(entries, (k, 3), config.run_only(), config.records, config.root)] for k in (1, 2, 3)]
    seen = []
    for k in (1, 2, 3):
        report = build(config, BuildOptions(shard=(k, 3)))
        seen += [b.entry.name for b in report.builds]
    assert sorted(seen) == sorted(DEMOS)
    assert [[e.name for e in shard_entries(entries, (k, 3), config.run_only(), config.records, config.root)] for k in (1, 2, 3)] == before


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_durations_come_from_the_records_committed_at_head(tmp_path: Path) -> None:
    for name, source in DEMOS.items():
        write_demo(tmp_path, name, source)
    config = load_config(tmp_path)
    assert build(config, BuildOptions()).ok
    entries = discover(config.demos, config.root)
    assert committed_durations(config.records, config.root, entries) == {}  # not a git repository
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "records"], cwd=tmp_path, check=True)
    record = tmp_path / "_freeze" / "alpha" / RECORD_FILE
    committed = json.loads(record.read_text())["duration"]
    data = json.loads(record.read_text())
    data["duration"] = 1000.0  # a local re-run, not committed: other machines do not see it
    record.write_text(json.dumps(data))
    durations = committed_durations(config.records, config.root, entries)
    assert sorted(durations) == sorted(DEMOS) and durations["alpha"] == committed


def test_shard_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    write_demo(tmp_path, "fine", 'print("fine")\n')
    write_demo(tmp_path, "broken", '# %% B-fail\nraise ValueError("no")\n')
    result = run_cli("build", "--shard", "1/1", "-j", "2", cwd=tmp_path)
    assert result.returncode == 1
    assert "broken: block B-fail raised ValueError" in result.stderr
    assert "shard 1/1: 2 entries (2 ran, 0 from the records), records in _freeze/" in result.stderr
    assert not (tmp_path / "build").exists() and (tmp_path / "_freeze" / "fine" / RECORD_FILE).is_file()
    monkeypatch.chdir(tmp_path)
    for bad in ("0/2", "3/2", "2", "a/b", "1/0"):
        with pytest.raises(SystemExit) as exited:
            main(["build", "--shard", bad])
        assert exited.value.code == 2, bad
        assert "argument --shard: " in capsys.readouterr().err
    assert main(["build", "--shard", "1/2", "--frozen"]) == 2
    assert "one or the other" in capsys.readouterr().err
    # --list: the shard's entries, one a line, for CI to pick its record folders
    listed = []
    for k in (1, 2):
        assert main(["build", "--shard", f"{k}/2", "--list"]) == 0
        listed.append(capsys.readouterr().out.split())
    assert sorted(listed[0] + listed[1]) == ["broken", "fine"] and all(listed)
