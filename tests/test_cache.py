"""The execution cache: a demo re-runs only when something its result depends on changed.

Each test builds tiny standard-library demos in-process (milliseconds per run); whether a
build re-ran an entry is read from the report and from the record's start time.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
from pathlib import Path

import pytest

from conftest import run_cli, write_demo
from site_builder.run.records import store as records
from site_builder.commands.build import BuildOptions, BuildReport, build
from site_builder.config import Config, load_config, with_overrides
from site_builder.run.records.record_json import RECORD_FILE
from site_builder.run.records.store import load_record, store_dir

DEMO = '''
    """A small demo.

    Purpose
    -------
    Doubles a number.
    """
    x = 21

    # %% B-double
    print(x * 2)
'''


def _build(project: Path, **options: object) -> BuildReport:
    return build(load_config(project), BuildOptions(**options))  # type: ignore[arg-type]


def _started(project: Path, name: str = "demo") -> float:
    return load_record(store_dir(load_config(project).records, name)).started_at


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.fixture
def demo(project: Path) -> Path:
    """demos/demo.py, built once: its record exists."""
    path = write_demo(project, "demo", DEMO)
    report = _build(project)
    assert report.ok and not report.from_cache
    return path


def _line_of(html: str, code: str) -> int:
    """The line number the page shows for the line starting with ``code``."""
    match = re.search(r'<span class="linenos">\s*(\d+)</span><span class="nb">' + re.escape(code), html)
    assert match, code
    return int(match.group(1))


def test_no_change_is_a_hit(project: Path, demo: Path) -> None:
    started = _started(project)
    record = (store_dir(load_config(project).records, "demo") / RECORD_FILE).read_bytes()
    report = _build(project)
    assert report.from_cache == {"demo"} and report.ok
    assert _started(project) == started
    assert (store_dir(load_config(project).records, "demo") / RECORD_FILE).read_bytes() == record  # untouched


def test_code_change_is_a_miss(project: Path, demo: Path) -> None:
    _edit(demo, "print(x * 2)", "print(x * 3)")
    report = _build(project)
    assert not report.from_cache
    assert "63" in (project / "build" / "demo" / "index.html").read_text()


def test_comment_only_change_is_a_hit_with_the_new_text_and_lines(project: Path, demo: Path) -> None:
    page = (project / "build" / "demo" / "index.html").read_text()
    assert _line_of(page, "print") == 10
    _edit(demo, "x = 21\n", "# The answer, halved.\nx = 21  # an integer\n\n\n")
    report = _build(project)
    assert report.from_cache == {"demo"}
    page = (project / "build" / "demo" / "index.html").read_text()
    assert "The answer, halved." in page and "an integer" in page
    assert _line_of(page, "print") == 13
    assert "42" in page


def test_docstring_only_change_is_a_hit(project: Path, demo: Path) -> None:
    _edit(demo, "Doubles a number.", "Doubles a number, which is\n    the simplest thing a demo can do.")
    report = _build(project)
    assert report.from_cache == {"demo"}
    assert "the simplest thing a demo can do" in (project / "build" / "demo" / "index.html").read_text()


def test_block_rename_is_a_miss(project: Path, demo: Path) -> None:
    _edit(demo, "B-double", "B-twice")
    assert not _build(project).from_cache


def test_docstring_change_is_a_miss_when_the_code_prints_it(project: Path) -> None:
    path = write_demo(project, "demo", DEMO + "    print(__doc__.splitlines()[0])\n")
    _build(project)
    _edit(path, "A small demo.", "A tiny demo.")
    report = _build(project)
    assert not report.from_cache
    assert "A tiny demo." in (project / "build" / "demo" / "index.html").read_text()


def test_comment_change_is_a_miss_when_the_demo_reads_its_own_file(project: Path) -> None:
    path = write_demo(project, "demo", DEMO + "    print(len(open(__file__).read().splitlines()), 'lines')\n")
    _build(project)
    _edit(path, "x = 21\n", "x = 21  # now longer\n# and one more line\n")
    assert not _build(project).from_cache


def test_changed_data_file_is_a_miss(project: Path) -> None:
    (project / "data").mkdir()
    (project / "data" / "n.txt").write_text("5\n")
    write_demo(project, "demo", '''
        from pathlib import Path
        n = int((Path(__file__).parent.parent / "data" / "n.txt").read_text())
        print(n * n)
    ''')
    _build(project)
    assert _build(project).from_cache == {"demo"}
    (project / "data" / "n.txt").write_text("6\n")
    report = _build(project)
    assert not report.from_cache
    assert "36" in (project / "build" / "demo" / "index.html").read_text()


def test_changed_local_module_is_a_miss(project: Path) -> None:
    write_demo(project, "_helper", "FACTOR = 2\n")
    write_demo(project, "demo", "import _helper\nprint(10 * _helper.FACTOR)\n")
    _build(project)
    assert _build(project).from_cache == {"demo"}
    write_demo(project, "_helper", "FACTOR = 3\n")
    report = _build(project)
    assert not report.from_cache
    assert "30" in (project / "build" / "demo" / "index.html").read_text()


def _edit_record(project: Path, change: object) -> None:
    path = store_dir(load_config(project).records, "demo") / RECORD_FILE
    data = json.loads(path.read_text())
    change(data)  # type: ignore[operator]
    path.write_text(json.dumps(data, indent=1, sort_keys=True))


def test_package_version_change_is_a_miss(project: Path, demo: Path) -> None:
    # As if the demo had imported Jinja2 while an older version was installed.
    _edit_record(project, lambda d: d["inputs"]["packages"].update(jinja2="0.1"))
    assert not _build(project).from_cache
    _edit_record(project, lambda d: d["inputs"]["packages"].update(nosuchpackage="1.0"))
    assert not _build(project).from_cache


def test_python_or_builder_behaviour_change_is_a_miss(project: Path, demo: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _edit_record(project, lambda d: d["inputs"].update(python="3.0.0"))
    assert not _build(project).from_cache
    monkeypatch.setattr(records, "EXECUTION_VERSION", records.EXECUTION_VERSION + 1)
    assert not _build(project).from_cache
    assert _build(project).from_cache == {"demo"}


def test_timeout_change_is_a_miss(project: Path, demo: Path) -> None:
    config = with_overrides(load_config(project), timeout=30.0)
    assert not build(config, BuildOptions()).from_cache
    assert build(config, BuildOptions()).from_cache == {"demo"}


def test_failed_run_is_cached_and_still_fails(project: Path) -> None:
    path = write_demo(project, "demo", DEMO + "    raise ValueError('no')\n")
    first = _build(project)
    assert not first.ok and not first.from_cache
    again = _build(project)
    assert again.from_cache == {"demo"}
    assert again.failures == first.failures
    assert "demos/demo.py:11" in again.failures[0]
    # The traceback shows line numbers: a comment that shifts them re-runs the demo.
    _edit(path, "x = 21\n", "# shifted\nx = 21\n")
    moved = _build(project)
    assert not moved.from_cache and "demos/demo.py:12" in moved.failures[0]


def test_changed_artifact_in_the_record_is_a_miss(project: Path, caplog: pytest.LogCaptureFixture) -> None:
    write_demo(project, "demo", "open('out.txt', 'w').write('hello')\n")
    _build(project)
    folder = store_dir(load_config(project).records, "demo")
    (folder / "out.txt").write_text("tampered")
    with caplog.at_level(logging.WARNING):
        report = _build(project)
    assert not report.from_cache
    assert "out.txt changed since it was recorded" in caplog.text
    assert (folder / "out.txt").read_text() == "hello"
    assert (project / "build" / "demo" / "out.txt").read_text() == "hello"


def test_killed_build_leaves_a_usable_cache(project: Path, demo: Path, caplog: pytest.LogCaptureFixture) -> None:
    config = load_config(project)
    folder = store_dir(config.records, "demo")
    # A run killed mid-way leaves its staging folder; a record cut short is unreadable.
    leftover = config.records / ".demo.tmp-killed"
    leftover.mkdir()
    (leftover / "half.csv").write_text("1,")
    record = folder / RECORD_FILE
    record.write_bytes(record.read_bytes()[:100])
    with caplog.at_level(logging.WARNING):
        report = _build(project)
    assert report.ok and not report.from_cache
    assert "demo: ignoring the run record" in caplog.text
    assert not leftover.exists()
    assert _build(project).from_cache == {"demo"}
    # Killed between the two renames of a record swap: the old record is put back.
    folder.rename(config.records / ".demo.old-12345")
    assert _build(project).from_cache == {"demo"}


def _two_demos(project: Path) -> Config:
    write_demo(project, "alpha", "print('a')\n")
    write_demo(project, "beta", "print('b')\n")
    return load_config(project)


def test_force_reruns_everything_or_the_named_entries(project: Path) -> None:
    _two_demos(project)
    assert _build(project).ok
    alpha, beta = _started(project, "alpha"), _started(project, "beta")
    result = run_cli("build", "-q", "--force", "alpha", cwd=project)
    assert result.returncode == 0, result.stderr
    assert _started(project, "alpha") > alpha and _started(project, "beta") == beta
    alpha = _started(project, "alpha")
    assert run_cli("build", "-q", "--force", cwd=project).returncode == 0
    assert _started(project, "alpha") > alpha and _started(project, "beta") > beta


def test_force_with_an_unknown_name_is_a_usage_error(project: Path) -> None:
    _two_demos(project)
    result = run_cli("build", "--force", "alpha", "gamma", cwd=project)
    assert result.returncode == 2
    assert result.stderr.strip() == "error: --force: no entry named gamma (entries: alpha, beta)"
    assert not (project / "build").exists()
    result = run_cli("build", "--force", "--frozen", cwd=project)
    assert result.returncode == 2 and "not allowed with" in result.stderr


def test_records_live_outside_the_site(project: Path, demo: Path) -> None:
    site = project / "build"
    assert not any(p.name == "record.json" for p in site.rglob("*"))
    leftovers = [p.name for p in store_dir(load_config(project).records, "demo").parent.glob(".*")]
    assert leftovers == [".cache"]  # the builder's own cache (rebuild.py), not a half-written record
    shutil.rmtree(project / "_freeze")
    assert not _build(project).from_cache  # no record: run again


def test_record_pointing_outside_its_folder_is_not_used(project: Path, caplog: pytest.LogCaptureFixture) -> None:
    write_demo(project, "demo", "open('out.txt', 'w').write('hello')\n")
    _build(project)
    secret = project / "secret.txt"
    secret.write_text("hello")  # same bytes, so only the symlink check can catch it
    out = store_dir(load_config(project).records, "demo") / "out.txt"
    out.unlink()
    out.symlink_to(secret)
    with caplog.at_level(logging.WARNING):
        assert not _build(project).from_cache
    assert not (project / "build" / "demo" / "out.txt").is_symlink()
