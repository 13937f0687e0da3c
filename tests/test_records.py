"""Run records: exact round-trip, the code fingerprint, frozen and byte-identical builds."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import textwrap
from pathlib import Path

import pytest

from conftest import REPO, run_cli, write_demo
from site_builder.source.blocks import parse
from site_builder.commands.build import BuildOptions, build
from site_builder.config import load_config, with_overrides
from site_builder.run.execute import Artifact, BlockError, BlockResult, OutputChunk, RunResult
from site_builder.run.records.record_json import RECORD_FILE, from_record, save_record
from site_builder.run.records.inputs import RunInputs, code_fingerprint
from site_builder.run.records.store import load_record, store_dir


def _every_field_result(folder: Path) -> RunResult:
    (folder / "_site_builder").mkdir(parents=True)
    (folder / "_site_builder" / "B-plot-figure-1.png").write_bytes(b"\x89PNG fake")
    (folder / "_site_builder" / "output-B-plot.txt").write_text("all of it\n" * 3)
    (folder / "sub").mkdir()
    (folder / "sub" / "table.csv").write_text("a,b\n1,2\n")
    return RunResult(
        entry="demo",
        blocks=(
            BlockResult("setup", "ok", 0.125),
            BlockResult(
                "B-plot", "error", 1.0000000000000002,
                output=(OutputChunk("stdout", "one\ntwo\n"), OutputChunk("stderr", "warn é\n"),
                        OutputChunk("stdout", "no newline")),
                omitted_lines=7, omitted_bytes=1234, full_output="_site_builder/output-B-plot.txt",
                omitted_at=1,
                error=BlockError("ValueError", "bad value", 12,
                                 'Traceback (most recent call last):\n  File "demos/demo.py", line 12\n'),
                artifacts=(
                    Artifact("_site_builder/B-plot-figure-1.png", "figure", 9, "Loss; epoch", 320, 240),
                    Artifact("sub/table.csv", "file", 8),
                    Artifact("deleted.txt", "file", 3),  # written, then deleted by the demo
                ),
            ),
            BlockResult("B-never", "not-run", 0.0),
        ),
        failure="demo: block B-plot raised ValueError at demos/demo.py:12: bad value",
        duration=1.5,
        started_at=1700000000.25,
        files_dir=folder,
        environment={"python": "3.11.7", "platform": "Linux-x86_64", "numpy": "2.0.0", "blas": "openblas 0.3"},
        reads=("data/x.csv", "demos/_helper.py"),
    )


def _inputs() -> RunInputs:
    return RunInputs(execution=1, code="c0de", source="50urce", exact=True, python="3.11.7",
                     packages={"numpy": "2.0.0"}, options={"timeout": 600.0, "output_limit": 200000.0},
                     reads={"data/x.csv": "ab12", "demos/_helper.py": "cd34"})


def test_record_round_trips_every_field(tmp_path: Path) -> None:
    folder = tmp_path / "_freeze" / "demo"
    result = _every_field_result(folder)
    recorded = save_record(folder, result, _inputs())
    # deleted.txt was written, then deleted by the demo: a record names only files it hashes
    kept = tuple(a for a in result.blocks[1].artifacts if a.path != "deleted.txt")
    assert recorded.blocks[1].artifacts == kept
    assert recorded == dataclasses.replace(result, blocks=(
        result.blocks[0], dataclasses.replace(result.blocks[1], artifacts=kept), result.blocks[2]))
    data = json.loads((folder / RECORD_FILE).read_bytes())
    assert from_record(data, folder) == (recorded, _inputs())
    assert load_record(folder) == recorded


def _broken_records(data: dict) -> list[dict]:
    """``data`` (a good record) broken one way each: every kind of check the schema makes."""
    changes = [
        lambda d: d.update(format=4), lambda d: d.update(format=True), lambda d: d.update(format="5"),
        lambda d: d.pop("entry"), lambda d: d.update(extra=1), lambda d: d.update(duration=-1),
        lambda d: d.update(duration="NaN"), lambda d: d["blocks"][0].update(status="fine"),
        lambda d: d["blocks"][1]["artifacts"][0].update(path="../x.png"),
        lambda d: d["blocks"][1]["output"][0].update(stream="display"),
        lambda d: d["blocks"][1]["output"].append({"stream": "display", "data": {"Text/Plain": ["x"]},
                                                   "files": {}, "omitted": {}}),
        lambda d: d["blocks"][1].update(error={"type": "E"}), lambda d: d["inputs"].update(code=1),
        lambda d: d["blocks"][1]["artifacts"][0].update(sha256="f" * 63), lambda d: d.update(blocks={}),
    ]
    broken = []
    for change in changes:
        copy = json.loads(json.dumps(data))
        change(copy)
        broken.append(copy)
    return broken


def test_a_record_is_refused_exactly_as_its_schema_says(tmp_path: Path) -> None:
    import fastjsonschema
    from site_builder.run.preload import recorded_packages
    from site_builder.run.records.schema import RECORD_SCHEMA, SchemaError, parse_record

    folder = tmp_path / "_freeze" / "demo"
    save_record(folder, _every_field_result(folder), _inputs())
    good = json.loads((folder / RECORD_FILE).read_bytes())
    assert parse_record(json.dumps({**good, "format": 5.0}).encode())["format"] == 5  # as the schema has it
    schema = fastjsonschema.compile(RECORD_SCHEMA)  # the schema's own verdict and message
    for data in _broken_records(good):
        with pytest.raises(fastjsonschema.JsonSchemaValueException) as expected:
            schema(data)
        field = str(expected.value.name).removeprefix("data").lstrip(".") or "the record"
        with pytest.raises(SchemaError) as refused:
            parse_record(json.dumps(data).encode())
        said = str(expected.value.message).removeprefix(str(expected.value.name)).strip()
        assert (refused.value.field, str(refused.value)) == (field, f"field {field} {said}")
    deep = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(ValueError, match="nested too deeply"):  # bad JSON, not a RecursionError
        parse_record(deep)
    (folder / RECORD_FILE).write_bytes(deep)
    assert recorded_packages(folder / RECORD_FILE) == []  # the preload hint of such a record: none


def test_record_json_is_diff_friendly_and_machine_free(tmp_path: Path) -> None:
    folder = tmp_path / "_freeze" / "demo"
    result = _every_field_result(folder)
    save_record(folder, result, _inputs())
    text = (folder / RECORD_FILE).read_text(encoding="utf-8")
    assert str(tmp_path) not in text  # no absolute path of this machine
    assert '      "one\\n",\n      "two\\n"\n' in text  # one output line per JSON line
    assert "warn é" in text  # readable, not \\u-escaped
    data = json.loads(text)
    assert list(data) == sorted(data)
    arts = data["blocks"][1]["artifacts"]
    assert arts[1]["sha256"] == hashlib.sha256(b"a,b\n1,2\n").hexdigest()
    assert [a["path"] for a in arts] == ["_site_builder/B-plot-figure-1.png", "sub/table.csv"]


def _fingerprint(source: str) -> tuple[str, bool]:
    return code_fingerprint(parse(textwrap.dedent(source).lstrip("\n"), "demos/d.py", "d"))


BASE = '''
    """A demo.

    Purpose
    -------
    Shows things.
    """
    import math

    # %% B-one
    x = math.sqrt(2)
    print(x)
'''


@pytest.mark.parametrize("variant", [
    BASE.replace("Shows things.", "Shows other things, at length."),  # docstring text
    BASE.replace("import math\n", "import math  # the square root\n\n\n"),  # comments, blank lines
    BASE.replace("    x = math", "    # a new comment line\n    x = math"),
    BASE.replace("    print(x)", "    print(x)\n\n    # trailing remark"),
])
def test_prose_changes_keep_the_fingerprint(variant: str) -> None:
    assert _fingerprint(variant) == _fingerprint(BASE)


@pytest.mark.parametrize("variant", [
    BASE.replace("print(x)", "print(x + 1)"),  # code
    BASE.replace("print(x)", "print('x')"),  # a string literal
    BASE.replace("# %% B-one", "# %% B-first"),  # block name
    BASE.replace("# %% B-one", '# %% B-one tags=["raises-exception"]'),  # tags
    BASE.replace("    x = math.sqrt(2)\n", "    x = math.sqrt(2)\n\n    # %% B-two\n"),  # block split
    BASE.replace("    x = math", "    if True:\n        x = math").replace("    print", "        print"),
])
def test_code_and_structure_changes_change_the_fingerprint(variant: str) -> None:
    assert _fingerprint(variant)[0] != _fingerprint(BASE)[0]


def test_fingerprint_notices_doc_use() -> None:
    assert _fingerprint(BASE)[1] is False
    assert _fingerprint(BASE + "    print(__doc__)\n")[1] is True


# ---------------------------------------------------------------- whole builds


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _assert_same_tree(a: Path, b: Path) -> None:
    ta, tb = _tree(a), _tree(b)
    assert sorted(ta) == sorted(tb)
    different = [name for name in ta if ta[name] != tb[name]]
    assert not different, f"files differ: {different}"


DEMO = '''
    """A demo that writes a file and reads a data file."""
    import os
    from pathlib import Path

    # %% B-read
    here = Path(__file__).resolve().parent
    data = (here.parent / "data" / "n.txt").read_text().strip()
    print("cwd is", os.getcwd(), "data", data)

    # %% B-write
    Path("out.csv").write_text("n\\n" + data + "\\n")
    print("wrote out.csv")
'''


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    write_demo(project, "demo", DEMO)
    (project / "data").mkdir()
    (project / "data" / "n.txt").write_text("42\n")
    return project


def test_two_builds_from_the_same_records_are_byte_identical(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _project(tmp_path)
    config = load_config(project)
    first = build(with_overrides(config, output="one"), BuildOptions())
    assert first.ok and not first.from_cache
    second = build(with_overrides(config, output="two"), BuildOptions())
    assert second.from_cache == {"demo"}
    _assert_same_tree(project / "one", project / "two")
    page = (project / "one" / "demo" / "index.html").read_text()
    assert str(tmp_path) not in page and "cwd is . data 42" in page
    # The same sources and records somewhere else on the machine: still the same bytes
    # (a folder of the same name: without a pyproject.toml, it names the site).
    moved = tmp_path / "elsewhere" / "project"
    shutil.copytree(project / "demos", moved / "demos")
    shutil.copytree(project / "data", moved / "data")
    shutil.copytree(project / "_freeze", moved / "_freeze")
    frozen = build(load_config(moved), BuildOptions(frozen=True))
    assert frozen.ok
    _assert_same_tree(project / "one", moved / "build")
    # SOURCE_DATE_EPOCH stands in for the run's time on the page.
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "86400")
    build(with_overrides(config, output="three"), BuildOptions())
    assert "1970-01-02 00:00 UTC" in (project / "three" / "demo" / "index.html").read_text()


def test_forced_rebuild_records_a_new_run_that_then_rebuilds_identically(tmp_path: Path) -> None:
    project = _project(tmp_path)
    config = load_config(project)
    build(config, BuildOptions())
    before = load_record(store_dir(config.records, "demo"))
    forced = build(with_overrides(config, output="forced"), BuildOptions(force=True))
    assert not forced.from_cache
    after = load_record(store_dir(config.records, "demo"))
    assert after.started_at > before.started_at  # it really ran again
    build(with_overrides(config, output="again"), BuildOptions())
    _assert_same_tree(project / "forced", project / "again")


def _numpy_blocker(tmp_path: Path) -> dict[str, str]:
    """An environment in which importing numpy or matplotlib fails."""
    blocker = tmp_path / "no-numpy"
    blocker.mkdir()
    for name in ("numpy", "matplotlib"):
        (blocker / f"{name}.py").write_text(f"raise ImportError('{name} is not installed here')\n")
    return {"PYTHONPATH": f"{blocker}{os.pathsep}{REPO}"}


def test_frozen_build_of_the_real_demos_needs_no_numpy(built_site: Path, tmp_path: Path) -> None:
    project = built_site.parent
    result = run_cli("build", "--frozen", "--out", "build-frozen", cwd=project, env=_numpy_blocker(tmp_path))
    assert result.returncode == 0, result.stderr
    _assert_same_tree(built_site, project / "build-frozen")


def test_frozen_build_refuses_entries_without_a_matching_record(tmp_path: Path) -> None:
    project = _project(tmp_path)
    write_demo(project, "other", 'print("other")\n')
    assert build(load_config(project), BuildOptions()).ok
    build(load_config(project), BuildOptions())
    demo = project / "demos" / "demo.py"
    demo.write_text(demo.read_text().replace('print("wrote out.csv")', 'print("wrote it")'))
    write_demo(project, "fresh", 'print("new")\n')
    site_before = _tree(project / "build")
    result = run_cli("build", "--frozen", cwd=project, env=_numpy_blocker(tmp_path))
    assert result.returncode == 1
    message = result.stderr.strip().splitlines()[-1]
    assert "demo (its code changed)" in message and "fresh (no record)" in message
    assert "other" not in message
    assert _tree(project / "build") == site_before  # the last good site is intact
