"""Trust boundaries on disk, each test written as the attack it is: planted links, forged
records, bad settings, concurrent builds.  Demos are trusted code; records, the published
folder and the settings are data, and the safe outcome is asserted: nothing outside is
read, written, deleted or published, with the right exit status and message."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, run_cli, write_demo
from site_builder.fs import UnsafeFileError, copy_regular, open_regular
from site_builder.run.execute import Artifact, BlockResult, RunResult
from site_builder.run.records.record_json import RECORD_FILE, RecordError, save_record
from site_builder.run.records.inputs import RunInputs
from site_builder.run.records.store import read_record

SECRET = {"SECRET_TOKEN": "hunter2-do-not-publish"}

DEMO = '''
    """{name}.py — a demo that writes a table.

    Purpose
    -------
    Shows a table.

    Blocks
    ------
    [B-write]  writes data.csv
    """
    from pathlib import Path

    # %% B-write
    Path("data.csv").write_text("a,b\\n1,2\\n")
    print("[B-write] wrote data.csv")
'''


def _record(project: Path, name: str = "x") -> dict:
    return json.loads((project / "_freeze" / name / RECORD_FILE).read_text(encoding="utf-8"))


def _forge(project: Path, change, name: str = "x") -> None:
    """Rewrite the committed record of ``name`` as a hostile contributor would."""
    data = _record(project, name)
    change(data)
    # allow_nan: the forger writes Infinity/NaN, which JSON itself does not have
    (project / "_freeze" / name / RECORD_FILE).write_text(json.dumps(data, allow_nan=True), encoding="utf-8")


def _built(project: Path, name: str = "x") -> None:
    write_demo(project, name, DEMO.format(name=name))
    result = run_cli("build", "-j", "1", cwd=project)
    assert result.returncode == 0, result.stderr


# ---------------------------------------------------------------- reading only regular files


def test_open_regular_follows_no_link_and_opens_only_regular_files(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.csv").write_text("ok")
    (tmp_path / "d" / "link.csv").symlink_to("/etc/passwd")
    (tmp_path / "linked").symlink_to("/etc")
    os.mkfifo(tmp_path / "d" / "fifo.csv")
    assert open_regular(tmp_path, "d/f.csv").read() == b"ok"
    reasons = {}
    for rel in ("d/link.csv", "linked/passwd", "d/fifo.csv", "d/none.csv", "d"):
        with pytest.raises(UnsafeFileError) as caught:
            open_regular(tmp_path, rel)
        reasons[rel] = caught.value.reason
    assert reasons == {
        "d/link.csv": "it is a symbolic link",
        "linked/passwd": "linked/ is a symbolic link",
        "d/fifo.csv": "it is not a regular file",  # and opening it did not hang
        "d/none.csv": "it is missing",
        "d": "it is not a regular file",
    }
    copy_regular(tmp_path, "d/f.csv", tmp_path / "copy.csv")
    assert (tmp_path / "copy.csv").read_text() == "ok"
    assert os.stat(tmp_path / "copy.csv").st_ino != os.stat(tmp_path / "d" / "f.csv").st_ino


def test_a_committed_record_linking_its_csv_to_the_environment_never_reaches_the_page(project: Path) -> None:
    _built(project)
    (project / "_freeze" / "x" / "data.csv").unlink()
    (project / "_freeze" / "x" / "data.csv").symlink_to("/proc/self/environ")

    def no_hash(data: dict) -> None:
        data["blocks"][1]["artifacts"][0]["sha256"] = None

    _forge(project, no_hash)
    frozen = run_cli("build", "--frozen", cwd=project, env=SECRET)
    assert frozen.returncode == 2, frozen.stderr
    assert "x (unusable record in _freeze/x: field blocks[1].artifacts[0].sha256" in frozen.stderr
    checked = run_cli("check", "--runs", "1", cwd=project, env=SECRET)
    assert checked.returncode == 2
    assert "x: its run record in _freeze/x/ is unusable: field blocks[1].artifacts[0].sha256" in checked.stderr
    # A record that does hash the file is refused too: the file is a link.
    _forge(project, lambda data: data["blocks"][1]["artifacts"][0].update(sha256="0" * 64))
    frozen = run_cli("build", "--frozen", cwd=project, env=SECRET)
    assert frozen.returncode == 2
    assert "field blocks[1].artifacts[0].path: data.csv is refused: it is a symbolic link" in frozen.stderr
    # A plain build ignores the record (a warning) and runs the demo again.
    built = run_cli("build", cwd=project, env=SECRET)
    assert built.returncode == 0, built.stderr
    assert "x: ignoring the run record in _freeze/x (running the demo again)" in built.stderr
    page = (project / "build" / "x" / "index.html").read_text(encoding="utf-8")
    assert SECRET["SECRET_TOKEN"] not in page and "<td>1</td>" in page
    assert not (project / "_freeze" / "x" / "data.csv").is_symlink()  # the new record


def test_a_demo_replacing_its_csv_by_a_link_after_writing_it_publishes_nothing_of_it(project: Path) -> None:
    write_demo(project, "x", '''
        """x.py — writes a table, then swaps it for a link.

        Purpose
        -------
        An attack.

        Blocks
        ------
        [B-write]  writes data.csv
        [B-swap]   replaces it by a link
        """
        import os
        from pathlib import Path

        # %% B-write
        Path("data.csv").write_text("a,b\\n1,2\\n")

        # %% B-swap
        os.remove("data.csv")
        os.symlink("/proc/self/environ", "data.csv")
    ''')
    result = run_cli("build", "-j", "1", cwd=project, env=SECRET)
    assert result.returncode == 0, result.stderr
    assert "x: the file data.csv the demo wrote is not published: it is a symbolic link" in result.stderr
    page = (project / "build" / "x" / "index.html").read_text(encoding="utf-8")
    assert SECRET["SECRET_TOKEN"] not in page
    assert 'href="data.csv"' not in page
    assert not (project / "build" / "x" / "data.csv").exists()
    assert all(not a["path"] == "data.csv" for b in _record(project)["blocks"] for a in b["artifacts"])


# ---------------------------------------------------------------- records are data: a schema


@pytest.mark.parametrize(("field", "forge"), [
    ("blocks[1].artifacts[0].path", lambda d: d["blocks"][1]["artifacts"][0].update(path=7)),
    ("blocks[1].duration", lambda d: d["blocks"][1].update(duration=float("inf"))),
    ("blocks[1].duration", lambda d: d["blocks"][1].update(duration=float("nan"))),
    ("duration", lambda d: d.update(duration=float("-inf"))),
    ("blocks[1].omitted_at", lambda d: d["blocks"][1].update(omitted_at="3")),
    ("blocks[1].artifacts[0].size", lambda d: d["blocks"][1]["artifacts"][0].update(size="8")),
    ("blocks[1].artifacts[0].path", lambda d: d["blocks"][1]["artifacts"][0].update(path="../../etc/passwd")),
    ("blocks[1].artifacts[0].path", lambda d: d["blocks"][1]["artifacts"][0].update(path="/etc/passwd")),
    ("inputs.options.timeout", lambda d: d["inputs"]["options"].update(timeout="600")),
    ("blocks[1].artifacts[0]", lambda d: d["blocks"][1]["artifacts"][0].update(extra=1)),
])
def test_a_record_with_a_wrong_type_is_unusable_naming_the_field(tmp_path: Path, field: str, forge) -> None:
    folder = tmp_path / "_freeze" / "x"
    folder.mkdir(parents=True)
    (folder / "data.csv").write_text("a,b\n1,2\n")
    blocks = (BlockResult("setup", "ok", 0.1),
              BlockResult("B-write", "ok", 0.2, artifacts=(Artifact("data.csv", "file", 8),)))
    inputs = RunInputs(1, "c", "s", False, "3.11", {}, {"timeout": 600.0}, {})
    save_record(folder, RunResult("x", blocks, None, 0.3, 1.7e9, folder), inputs)
    read_record(folder)  # the genuine record is usable
    data = json.loads((folder / RECORD_FILE).read_text(encoding="utf-8"))
    forge(data)
    (folder / RECORD_FILE).write_text(json.dumps(data, allow_nan=True))
    with pytest.raises(RecordError) as caught:
        read_record(folder)
    assert str(caught.value).startswith(f"field {field} ")


def test_a_forged_record_is_a_cache_miss_in_build_and_a_refusal_in_frozen_and_check(project: Path) -> None:
    _built(project)
    before = (project / "build" / "x" / "index.html").read_bytes()
    _forge(project, lambda d: d["blocks"][1].update(duration=float("nan")))
    for args in (("build", "--frozen"), ("check", "--runs", "1")):
        refused = run_cli(*args, cwd=project)
        assert refused.returncode == 2, refused.stderr
        assert "x" in refused.stderr and "field blocks[1].duration must be number" in refused.stderr
        assert "Traceback" not in refused.stderr
    assert (project / "build" / "x" / "index.html").read_bytes() == before  # the last good site
    built = run_cli("build", cwd=project)
    assert built.returncode == 0, built.stderr
    assert "ignoring the run record in _freeze/x (running the demo again): field blocks[1].duration" in built.stderr
    assert run_cli("build", "--frozen", cwd=project).returncode == 0  # recovered without --force


# ---------------------------------------------------------------- the builder's own files


def test_a_demo_planting_the_builders_folder_redirects_and_crashes_nothing(project: Path, tmp_path_factory) -> None:
    outside = tmp_path_factory.mktemp("outside")
    (outside / "precious.txt").write_text("mine")
    planted = {
        "as-link": f'os.symlink({str(outside)!r}, "_site_builder")',
        "as-file": 'Path("_site_builder").write_text("not a folder")',
        "record-link": f'os.mkdir("_site_builder"); os.symlink({str(outside / "precious.txt")!r}, '
                       '"_site_builder/record.json")',
    }
    for name, plant in planted.items():
        write_demo(project, name, f'''
            """{name}.py — plants the builder's folder.

            Purpose
            -------
            An attack.

            Blocks
            ------
            [B-plant]  plants it
            """
            import os
            from pathlib import Path

            # %% B-plant
            {plant}
            print("x" * 300_000)  # long enough for the builder to keep the complete output
        ''')
    result = run_cli("build", "-j", "1", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert sorted(p.name for p in outside.iterdir()) == ["precious.txt"]
    assert (outside / "precious.txt").read_text() == "mine"
    for name in planted:
        record = read_record(project / "_freeze" / name)[0]  # usable, and really the builder's
        assert record.blocks[1].full_output == "_site_builder/output-B-plant.txt"
        assert (project / "build" / name / "_site_builder" / "output-B-plant.txt").is_file()
        assert f"{name}: the " in result.stderr and "the name is reserved for the builder's own files" in result.stderr


# ---------------------------------------------------------------- never delete a folder it did not make


def test_settings_that_would_delete_user_folders_are_refused(project: Path, tmp_path_factory) -> None:
    write_demo(project, "demos", DEMO.format(name="demos"))
    scripts = sorted((project / "demos").iterdir())
    (project / "pyproject.toml").write_text('[tool.site_builder]\nrecords = "."\n')
    result = run_cli("build", cwd=project)
    assert result.returncode == 2
    assert "error: the records folder (records) is the project folder" in result.stderr
    assert sorted((project / "demos").iterdir()) == scripts

    (project / "pyproject.toml").write_text('[tool.site_builder]\noutput = "_freeze/x"\n')
    result = run_cli("build", cwd=project)
    assert result.returncode == 2
    assert "the output folder (output / --out) is inside the records folder (records): _freeze/x" in result.stderr

    elsewhere = tmp_path_factory.mktemp("records-elsewhere")
    (elsewhere / "demos").mkdir()
    (elsewhere / "demos" / "thesis.tex").write_text("two years of work")
    (project / "pyproject.toml").write_text(f'[tool.site_builder]\nrecords = {str(elsewhere)!r}\n')
    result = run_cli("build", cwd=project)
    assert result.returncode == 2
    assert "demos exists and is not a run record made by site_builder: refusing to replace it" in result.stderr
    assert str(elsewhere) not in result.stderr  # no absolute path of this machine
    assert (elsewhere / "demos" / "thesis.tex").read_text() == "two years of work"
    assert not (project / "build").exists()


def test_out_onto_an_existing_unrelated_folder_is_refused(project: Path) -> None:
    _built(project)
    (project / "notes").mkdir()
    (project / "notes" / "todo.txt").write_text("keep me")
    result = run_cli("build", "--out", "notes", cwd=project)
    assert result.returncode == 2
    assert "error: notes exists and is not a site made by site_builder: refusing to replace it" in result.stderr
    assert (project / "notes" / "todo.txt").read_text() == "keep me"
    again = run_cli("build", "--out", "build", cwd=project)  # its own site: replaced as always
    assert again.returncode == 0, again.stderr
    assert oct(os.stat(project / "build").st_mode & 0o777) == "0o755"  # a web server may read it


# ---------------------------------------------------------------- one build at a time


WAITING_DEMO = '''
    """{name}.py — waits for the test to let it finish.

    Purpose
    -------
    Holds a build open.

    Blocks
    ------
    [B-wait]  waits for the release file
    """
    import time
    from pathlib import Path

    # %% B-wait
    Path("{started}").write_text("started")
    deadline = time.monotonic() + 60
    while not Path("{release}").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    Path("out.csv").write_text("a\\n1\\n")
    print("[B-wait] released")
'''


def test_two_builds_at_once_take_turns_and_never_poison_the_cache(project: Path, tmp_path_factory) -> None:
    flags = tmp_path_factory.mktemp("flags")
    write_demo(project, "x", WAITING_DEMO.format(name="x", started=flags / "started", release=flags / "release"))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with open(flags / "first.err", "w") as first_err, open(flags / "second.err", "w") as second_err:
        first = subprocess.Popen([sys.executable, "-m", "site_builder", "build", "--force"], cwd=project,
                                 env=env, stderr=first_err, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        try:
            _wait_for(lambda: (flags / "started").exists())
            refused = run_cli("build", "--no-wait", cwd=project)
            assert refused.returncode == 2
            assert f"another build of this project is running (pid {first.pid})" in refused.stderr
            second = subprocess.Popen([sys.executable, "-m", "site_builder", "build", "--force"], cwd=project,
                                      env=env, stderr=second_err, stdout=subprocess.DEVNULL,
                                      stdin=subprocess.DEVNULL)
            _wait_for(lambda: "waiting for another build" in (flags / "second.err").read_text())
            (flags / "release").write_text("go")
            assert first.wait(120) == 0
            assert second.wait(120) == 0
        finally:
            (flags / "release").write_text("go")
            first.kill()
    first_text, second_text = (flags / "first.err").read_text(), (flags / "second.err").read_text()
    assert "Traceback" not in first_text + second_text
    assert second_text.count(f"waiting for another build of this project (pid {first.pid})") == 1
    assert not list((project / "_freeze").glob(".x.tmp-*"))
    after = run_cli("build", cwd=project)
    assert after.returncode == 0, after.stderr
    assert "1 from the cache" in after.stderr or "site unchanged" in after.stderr


def _wait_for(condition, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def test_scratch_folders_of_dead_builds_are_removed_and_live_ones_kept(project: Path) -> None:
    _built(project)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = [project / "_freeze" / f".x.tmp-{dead.pid}-abc", project / f".build.tmp-{dead.pid}-abc",
             # named before scratch folders carried a pid: the lock says no build runs
             project / "_freeze" / ".x.tmp-k1ll3d", project / ".build.tmp-k1ll3d"]
    live = [project / "_freeze" / f".x.tmp-{os.getpid()}-abc", project / f".build.tmp-{os.getpid()}-abc",
            project / "_freeze" / "x.tmp-mine"]  # not named as the builder names its own
    for folder in stale + live:
        folder.mkdir()
        (folder / "out.csv").write_text("a\n")
    result = run_cli("build", "--force", cwd=project)
    assert result.returncode == 0, result.stderr
    assert [f.exists() for f in stale] == [False] * 4
    assert [(f / "out.csv").exists() for f in live] == [True] * 3


# ---------------------------------------------------------------- what is published, and how


def test_the_site_shares_no_inode_with_the_records(project: Path) -> None:
    _built(project)
    published, recorded = project / "build" / "x" / "data.csv", project / "_freeze" / "x" / "data.csv"
    assert os.stat(published).st_ino != os.stat(recorded).st_ino
    published.write_text("edited by hand\n")
    assert recorded.read_text() == "a,b\n1,2\n"
    result = run_cli("build", "--frozen", cwd=project)
    assert result.returncode == 0, result.stderr
    assert published.read_text() == "a,b\n1,2\n"  # noticed and written again


def test_dotfiles_reserved_names_and_case_clashes_are_skipped_with_a_warning(project: Path) -> None:
    write_demo(project, "x", '''
        """x.py — writes awkward names.

        Purpose
        -------
        An attack.

        Blocks
        ------
        [B-write]  writes them
        """
        import os
        from pathlib import Path

        # %% B-write
        Path(".htaccess").write_text("Options +ExecCGI")
        os.makedirs(".git")
        Path(".git/config").write_text("[core]")
        Path("Data.csv").write_text("A\\n1\\n")
        Path("data.csv").write_text("a\\n2\\n")
        Path("INDEX.HTML").write_text("<script>alert(1)</script>")
        Path("x.PY").write_text("print('not the script')")
    ''')
    result = run_cli("build", "-j", "1", cwd=project)
    assert result.returncode == 0, result.stderr
    site = project / "build" / "x"
    assert sorted(p.name for p in site.iterdir()) == ["Data.csv", "index.html", "x.ipynb", "x.py"]
    stderr = result.stderr
    assert "the file .htaccess the demo wrote is not published: hidden files" in stderr
    assert "the file .git/config the demo wrote is not published: hidden files" in stderr
    assert "the file data.csv the demo wrote is not published: its name differs only in case from Data.csv" in stderr
    assert "the file INDEX.HTML the demo wrote is not published: its name clashes with the page's own index.html" in stderr
    assert "the file x.PY the demo wrote is not published: its name clashes with the page's own x.py" in stderr
