"""Rebuilds proportional to the change: the search index grown from the published one, records
trusted when nothing they depend on changed, the replaced site recycled as the next staging
folder, section pages reused.  Each result is held against a build made from nothing."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import time
from dataclasses import fields, replace
from pathlib import Path

import pytest

from conftest import run_cli, write_demo
from site_builder.project.folders import CACHE_DIR
from site_builder.commands.build import BuildOptions, build
from site_builder.commands.build.options import folders_of
from site_builder.config import load_config
from site_builder.run.records import schema as record_schema
from site_builder.run.records.record_json import RECORD_FILE, record_digest
from site_builder.run.records.store import RecordChangedError, RecordStore, store_dir
from site_builder.run.results import ResultRow
from site_builder.source.entries import discover
from site_builder.site.rebuild import lend as rebuild
from site_builder.site.rebuild import state as rebuild_state
from site_builder.site.publish import search
from site_builder.source import blocks
from site_builder.source.parsed import Script, saved_script, script_data, script_from_data, script_text

DEMO = '''\
    """{name}.py — a demo of {name}."""
    from pathlib import Path
    N = 3  # a comment

    # %% B-sum
    print("[B-sum] total =", sum(range(N)), "{word}")
'''
READER = '''\
    """{name}.py — reads a data file."""
    from pathlib import Path

    # %% B-read
    print("[B-read]", Path(__file__).parent.parent.joinpath("data.txt").read_text().strip())
'''


def _bytes(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def _full_build(project: Path) -> dict[str, bytes]:
    """The site a build without any saved state writes, beside the published one."""
    shutil.rmtree(project / "_freeze" / CACHE_DIR, ignore_errors=True)
    done = run_cli("build", "--out", "reference", cwd=project)
    assert done.returncode == 0, done.stderr
    return _bytes(project / "reference")


def _edit(project: Path, name: str, old: str, new: str) -> None:
    path = project / "demos" / f"{name}.py"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


@pytest.fixture
def gallery(project: Path) -> Path:
    for i, word in enumerate(["apple", "banana", "cherry", "damson"]):
        write_demo(project, f"e{i}", DEMO.format(name=f"e{i}", word=word))
    config = load_config(project)
    assert build(config, BuildOptions()).ok
    return project


# ---------------------------------------------------------------- the search index


def test_an_edited_page_reindexes_from_the_published_fragments(gallery: Path) -> None:
    """Unchanged pages keep their fragment files (the very inode, never rewritten); the edited
    page's old fragment is gone; the index is byte for byte what Pagefind makes from nothing."""
    site = gallery / "build" / search.SEARCH_DIR
    before = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in (site / "fragment").iterdir()}
    _edit(gallery, "e1", "banana", "blueberry")
    assert build(load_config(gallery), BuildOptions()).ok
    after = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in (site / "fragment").iterdir()}
    kept = set(before) & set(after)
    assert len(kept) == len(before) - 1 and len(after) == len(before)  # one fragment replaced
    assert all(before[name] == after[name] for name in kept)  # linked, not written again
    index = _bytes(gallery / "build")
    fresh = _full_build(gallery)
    assert {k: v for k, v in index.items() if k.startswith("pagefind/")} == \
        {k: v for k, v in fresh.items() if k.startswith("pagefind/")}
    assert not any(b"banana" in gzip.decompress(data) for path, data in index.items()
                   if path.startswith("pagefind/fragment/"))


def test_an_index_laid_out_otherwise_is_made_again_from_nothing(gallery: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A Pagefind whose files this builder cannot list (another format): the seeds are dropped
    and the index is made afresh, with no warning; the site is what a full build writes."""
    def unknown_layout(index_dir: Path) -> set[str]:
        raise search.IndexLayoutError("a format from the future")

    monkeypatch.setattr(search, "index_files", unknown_layout)
    _edit(gallery, "e2", "cherry", "cranberry")
    report = build(load_config(gallery), BuildOptions())
    assert report.ok and not report.warnings
    monkeypatch.undo()
    assert _bytes(gallery / "build") == _full_build(gallery)


@pytest.mark.parametrize("data", [b"\x9f\x01\xff", b"\x81" * 64 + b"\x01", b"\x7a\xff\xff\xff\xff", b"\x5b" + b"\xff" * 8])
def test_meta_data_that_is_not_pagefinds_is_refused(data: bytes) -> None:
    """Indefinite, too deep, or longer than the file: an IndexLayoutError, never a crash or a hang."""
    with pytest.raises(search.IndexLayoutError):
        search.read_cbor(data, 0)


# ---------------------------------------------------------------- trusted records


def _count_checked_records(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the record lookups that check a record's shape (those not taken on trust)."""
    counted = [0]
    original = record_schema.parse_record

    def counting(raw: bytes, *, checked: bool = False) -> dict:
        counted[0] += not checked
        return original(raw, checked=checked)

    monkeypatch.setattr("site_builder.run.records.store.parse_record", counting)
    return counted


def test_a_one_entry_edit_reads_that_entry_s_record_only(gallery: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The edited entry's record is read and compared; its bytes are the ones the last build
    checked, so their shape is not checked again (compiling that check is most of the lookup)."""
    checked = _count_checked_records(monkeypatch)
    hashed: list[bytes] = []  # the other records' files have the signatures saved: not read
    monkeypatch.setattr("site_builder.run.records.store.record_digest", lambda raw: (hashed.append(raw),
                                                                                    record_digest(raw))[1])
    _edit(gallery, "e3", "# a comment", "# a comment, reworded")
    report = build(load_config(gallery), BuildOptions())
    assert report.ok and report.from_cache == {"e0", "e1", "e2", "e3"}  # nothing ran
    record = store_dir(load_config(gallery).records, "e3") / RECORD_FILE
    assert checked == [0] and hashed == [record.read_bytes()]
    assert _bytes(gallery / "build") == _full_build(gallery)


def test_a_forged_record_of_the_edited_entry_is_refused(gallery: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Its bytes are not those the last build checked: their shape is checked, a forged field
    refused (the demo runs again), as in any build."""
    record = store_dir(load_config(gallery).records, "e3") / RECORD_FILE
    data = json.loads(record.read_bytes())
    data["blocks"][0]["duration"] = "soon"
    record.write_bytes(json.dumps(data).encode())
    _edit(gallery, "e3", "# a comment", "# a comment, reworded")
    report = build(load_config(gallery), BuildOptions())
    assert report.ok and "e3" not in report.from_cache  # refused, run again
    assert any("e3: ignoring the run record" in r.getMessage() for r in caplog.records)
    assert _bytes(gallery / "build") == _full_build(gallery)


def test_a_record_changed_after_the_build_is_checked_again(gallery: Path, monkeypatch: pytest.MonkeyPatch,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    """Bytes that differ from the ones checked are checked again, even with the size and mtime
    put back: a forged field is refused (the demo runs again) as it is in any build."""
    record = store_dir(load_config(gallery).records, "e0") / RECORD_FILE
    st = record.stat()
    data = json.loads(record.read_bytes())
    data["blocks"][0]["duration"] = "soon"
    forged = json.dumps(data).encode()
    with open(record, "r+b") as f:  # the same inode
        f.write(forged.ljust(st.st_size)[:st.st_size] if len(forged) <= st.st_size else forged)
        f.truncate()
    os.utime(record, ns=(st.st_atime_ns, st.st_mtime_ns))
    _edit(gallery, "e1", "# a comment", "# reworded")  # so that the site is not unchanged
    checked = _count_checked_records(monkeypatch)
    report = build(load_config(gallery), BuildOptions())
    assert report.ok
    assert checked == [1]  # e0 (changed bytes); e1's script changed, its record's bytes did not
    assert "e0" not in report.from_cache  # refused, run again
    assert any("e0: ignoring the run record" in r.getMessage() for r in caplog.records)


def test_a_record_rewritten_with_its_size_and_mtime_put_back_is_checked_again(
        gallery: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A record is trusted unread when every file of its folder has the signature the last build
    saved: size, mtime, ctime and inode, as git's index. Rewritten in place (the same inode) with
    the same length and its mtime put back, it still has another ctime: it is checked again, and
    a forged field is refused (the demo runs again)."""
    time.sleep(0.2)  # past an mtime tick: a no-change build then signs the record by its stat alone
    config = load_config(gallery)
    assert build(config, BuildOptions()).unchanged
    record = store_dir(config.records, "e0") / RECORD_FILE
    state = json.loads(next((gallery / "_freeze" / CACHE_DIR).glob("site-*.json")).read_bytes())
    saved = state["files"][f"rec:e0/{RECORD_FILE}"]
    st = record.stat()
    assert saved == [st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns]  # no content kept: the stat decides
    raw = record.read_bytes()
    forged = raw.replace(b'"status": "ok"', b'"status": "OK"', 1)
    assert forged != raw and len(forged) == len(raw)
    with open(record, "r+b") as f:  # the same inode, the same length
        f.write(forged)
    os.utime(record, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (record.stat().st_size, record.stat().st_mtime_ns, record.stat().st_ino) == (st.st_size, st.st_mtime_ns,
                                                                                         st.st_ino)
    _edit(gallery, "e1", "# a comment", "# reworded")  # so that the site is not unchanged
    report = build(config, BuildOptions())
    assert report.ok and "e0" not in report.from_cache  # refused, run again
    assert any("e0: ignoring the run record" in r.getMessage() for r in caplog.records)
    assert _bytes(gallery / "build") == _full_build(gallery)


def test_a_trusted_record_read_after_its_bytes_changed_stops_the_build(gallery: Path, tmp_path: Path) -> None:
    """A trusted record kept as its row is parsed when a page needs it: bytes changed since the
    build hashed them (while it ran) are no result it may use."""
    config = load_config(gallery)
    records = tmp_path / "copy" / "_freeze"
    shutil.copytree(config.records, records)
    record = store_dir(records, "e0") / RECORD_FILE
    (entry,) = [e for e in discover(config.demos, config.root) if e.name == "e0"]
    row = ResultRow(1.0, 1, 1, "", (), ())
    kept = RecordStore(records, config.root, trusted={"e0": record_digest(record.read_bytes())}, rows={"e0": row})
    assert kept.trusted_row(entry).result().entry == "e0"
    lazy = kept.trusted_row(entry)
    assert lazy is not None and kept.confirmed == {"e0"}
    record.write_bytes(record.read_bytes().replace(b'"entry"', b'"entry" ', 1))
    with pytest.raises(RecordChangedError, match="e0: its run record changed while the build ran"):
        lazy.result()
    assert kept.trusted_row(entry) is None  # the next look finds other bytes: the record is checked


def test_a_data_file_changed_makes_its_reader_run_again(project: Path) -> None:
    (project / "data.txt").write_text("first\n")
    write_demo(project, "reader", READER.format(name="reader"))
    write_demo(project, "other", DEMO.format(name="other", word="plum"))
    config = load_config(project)
    assert build(config, BuildOptions()).ok
    _edit(project, "other", "# a comment", "# reworded")
    (project / "data.txt").write_text("second\n")
    report = build(config, BuildOptions())
    assert report.ok and "reader" not in report.from_cache
    assert "[B-read] second" in (project / "build" / "reader" / "index.html").read_text()


def test_after_a_frozen_build_records_are_checked_in_full(gallery: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--frozen checks less (not Python, packages, options): its records are not trusted next time."""
    _edit(gallery, "e0", "# a comment", "# frozen edit")
    assert build(load_config(gallery), BuildOptions(frozen=True)).ok
    _edit(gallery, "e0", "# frozen edit", "# then a normal build")
    checked = _count_checked_records(monkeypatch)
    assert build(load_config(gallery), BuildOptions()).ok
    assert checked == [4]


def test_installed_packages_changed_checks_every_record(gallery: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rebuild, "packages_stamp", lambda *a, **k: "another set of packages")
    _edit(gallery, "e0", "# a comment", "# after pip install")
    checked = _count_checked_records(monkeypatch)
    assert build(load_config(gallery), BuildOptions()).ok
    assert checked == [4]


# ---------------------------------------------------------------- the recycled staging folder


def test_rebuilds_stage_into_the_replaced_site_and_never_write_the_published_one(gallery: Path) -> None:
    config = load_config(gallery)
    spare = rebuild_state.spare_dir(folders_of(config))
    for word in ("blackberry", "boysenberry"):  # the second rebuild stages into the first's spare
        _edit(gallery, "e1", "banana" if word == "blackberry" else "blackberry", word)
        published = _bytes(gallery / "build")
        assert build(config, BuildOptions()).ok
        assert _bytes(spare) == published  # the site it replaced, untouched while the new one was staged
    assert _bytes(gallery / "build") == _full_build(gallery)


def test_links_and_strays_planted_in_the_spare_are_removed_not_followed(gallery: Path, tmp_path_factory) -> None:
    config = load_config(gallery)
    _edit(gallery, "e1", "banana", "blackberry")
    assert build(config, BuildOptions()).ok  # makes the spare
    spare = rebuild_state.spare_dir(folders_of(config))
    outside = tmp_path_factory.mktemp("outside")
    (outside / "keep.txt").write_text("not the builder's\n")
    shutil.rmtree(spare / "e2")
    (spare / "e2").symlink_to(outside, target_is_directory=True)  # where a page's folder goes
    (spare / "e3" / "index.html").unlink()
    (spare / "e3" / "index.html").symlink_to(outside / "keep.txt")  # where a page goes
    (spare / "stray.html").write_text("<p>not part of the site</p>")
    _edit(gallery, "e1", "blackberry", "bilberry")
    assert build(config, BuildOptions()).ok
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
    assert (outside / "keep.txt").read_text() == "not the builder's\n"
    site = gallery / "build"
    assert not (site / "stray.html").exists() and not (site / "e2").is_symlink()
    assert _bytes(site) == _full_build(gallery)


# ---------------------------------------------------------------- sections


def test_a_comment_edit_in_a_section_renders_that_page_only(project: Path, rendered_pages: list[str]) -> None:
    for name in ("basics/one", "basics/two", "advanced/three"):
        write_demo(project, name, DEMO.format(name=name.split("/")[1], word="kiwi"))
    config = load_config(project)
    assert build(config, BuildOptions()).ok
    rendered_pages.clear()
    _edit(project, "basics/two", "# a comment", "# a comment, reworded")
    assert build(config, BuildOptions()).ok
    assert rendered_pages == ["basics/two"]


# ---------------------------------------------------------------- parsed scripts


@pytest.mark.parametrize("demo", ["attention", "gallery"])
def test_a_parsed_script_survives_the_rebuild_state_unchanged(demo: str, tmp_path: Path) -> None:
    """What the state keeps of a Script, through JSON, is the Script the parse gave."""
    from test_prose import GALLERY

    repo = Path(__file__).resolve().parent.parent
    source = (repo / "demos" / "attention.py").read_text() if demo == "attention" else GALLERY
    script = blocks.parse(source, f"demos/{demo}.py", demo, local_dir=tmp_path)
    data = json.loads(json.dumps(script_data(script)))
    assert script_from_data(data, tmp_path) == script


def test_a_parsed_script_with_every_field_set_survives_the_rebuild_state(tmp_path: Path) -> None:
    """The state leaves out a Script's fields that have their default: one with none at its
    default comes back whole too, and so does a parse saved with every field written out."""
    from test_prose import GALLERY

    parsed = blocks.parse(GALLERY, "demos/gallery.py", "gallery", local_dir=tmp_path)
    cell = replace(parsed.cells[-1], description="What it shows.", tags=("hide-input",),
                   options=(("echo", "false"),), metadata_options=(("label", "fig-one"),),
                   attachments=(("dot.svg", "image/svg+xml", "<svg/>"),))
    script = replace(parsed, cells=(*parsed.cells[:-1], cell), warnings=("gallery: a warning",), prose="rst",
                     title="Gallery", intro="More.", docstring_lines=(1, 3), gallery_settings={"line_numbers": "True"},
                     thumbnail_number=2, run_source="x = 1\n", title_at=(0, 1, 2), aliases=("pictures",),
                     bibliography=("refs.bib",), exports=("total",), subtitle="A subtitle", authors=("Ada",),
                     date="March 5, 2024", abstract="In short.", table_widths=(30.0, 70.0))
    assert script_from_data(json.loads(json.dumps(script_data(script))), tmp_path) == script
    written_out = {f.name: getattr(script, f.name) for f in fields(script)}
    written_out["cells"] = [{f.name: getattr(c, f.name) for f in fields(c)} for c in script.cells]
    assert script_from_data(json.loads(json.dumps(written_out)), tmp_path) == script


def _every_field_set(tmp_path: Path) -> Script:
    """The gallery demo's Script with no field at its default."""
    from test_prose import GALLERY

    parsed = blocks.parse(GALLERY, "demos/gallery.py", "gallery", local_dir=tmp_path)
    cell = replace(parsed.cells[-1], description="What it shows.", tags=("hide-input",),
                   options=(("echo", "false"),), metadata_options=(("label", "fig-one"),),
                   attachments=(("dot.svg", "image/svg+xml", "<svg/>"),))
    return replace(parsed, cells=(*parsed.cells[:-1], cell), warnings=("gallery: a warning",), prose="rst",
                   title="Gallery", intro="More.", docstring_lines=(1, 3), gallery_settings={"line_numbers": "True"},
                   thumbnail_number=2, run_source="x = 1\n", title_at=(0, 1, 2), aliases=("pictures",),
                   bibliography=("refs.bib",), exports=("total",), subtitle="A subtitle", authors=("Ada",),
                   date="March 5, 2024", abstract="In short.", table_widths=(30.0, 70.0))


def test_a_saved_script_gives_what_a_rebuild_plans_with_and_its_cells_only_when_asked(tmp_path: Path) -> None:
    """A saved parse is read back whole; its cells are not decoded until something asks for them."""
    script = _every_field_set(tmp_path)
    reparsed: list[bool] = []
    saved = saved_script(script_text(script), tmp_path, lambda: (reparsed.append(True), script)[1])
    assert (saved.summary, saved.title, saved.aliases, saved.thumbnail_number, saved.requirements, saved.prose,
            saved.warnings, saved.bibliography) == (script.summary, "Gallery", ("pictures",), 2, script.requirements,
                                                    "rst", ("gallery: a warning",), ("refs.bib",))
    assert saved == script and saved.cells == script.cells and not reparsed
    plain = saved_script(script_text(replace(script, cells=(), title="", aliases=())), tmp_path, lambda: script)
    assert plain.cells == () and plain.title == "" and plain.aliases == ()


def test_a_saved_script_whose_cells_cannot_be_read_is_parsed_again(tmp_path: Path) -> None:
    """The state is data: a saved parse whose head holds but whose body is damaged is the script
    parsed again (its key said the parse gives the same); one saved as a single object is read whole."""
    script = _every_field_set(tmp_path)
    head = script_text(script)[:script_text(script).index('}{"') + 1]
    for body in ('{"cells":5}', '{"cells":[{"kind":"code"}]}', "{", '["x"]', '{"summary":"forged","cells":[]}'):
        reparsed: list[bool] = []
        saved = saved_script(head + body, tmp_path, lambda: (reparsed.append(True), script)[1])
        assert saved.cells == script.cells and saved == script and reparsed == [True], body
    assert saved_script(json.dumps(script_data(script)), tmp_path, lambda: script) == script
    for text in ('{"cells":5}', '{"cells"', '["x"]{"cells":[]}', '{"forged":1}{"cells":[]}'):
        with pytest.raises((KeyError, TypeError, ValueError)):
            saved_script(text, tmp_path, lambda: script)


def test_a_cached_script_follows_a_local_module_that_appears(project: Path) -> None:
    """Requirements leave out modules of the demos folder: one added since is left out too."""
    write_demo(project, "uses", '''\
        """uses.py — imports a helper that is not there yet."""
        try:
            import helperlib
        except ImportError:
            helperlib = None

        # %% B-one
        print("[B-one]", helperlib is None)
    ''')
    write_demo(project, "other", DEMO.format(name="other", word="fig"))
    config = load_config(project)
    assert build(config, BuildOptions()).ok
    assert "helperlib" in (project / "build" / "uses" / "index.html").read_text()
    (project / "demos" / "helperlib.py").write_text("VALUE = 1\n")
    _edit(project, "other", "# a comment", "# reworded")
    assert build(config, BuildOptions()).ok
    assert _bytes(project / "build") == _full_build(project)


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The entries a build parses from here on, in order (the others' parses came from the state)."""
    names: list[str] = []
    original = blocks.parse

    def counting(source: str, rel_path: str, entry: str, **kwargs: object) -> Script:
        names.append(entry)
        return original(source, rel_path, entry, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(blocks, "parse", counting)  # what the build calls (blocks.parse_entry)
    return names


def test_a_rebuild_parses_only_the_edited_script(gallery: Path, parsed: list[str]) -> None:
    _edit(gallery, "e2", "# a comment", "# reworded")
    assert build(load_config(gallery), BuildOptions()).ok
    assert parsed == ["e2"]


def test_a_no_change_rebuild_keeps_the_saved_parses(gallery: Path, parsed: list[str]) -> None:
    """A rebuild that finds nothing changed may save the state again (files it checked by content):
    the next edit still parses only the edited script."""
    assert build(load_config(gallery), BuildOptions()).unchanged
    _edit(gallery, "e2", "# a comment", "# reworded")
    assert build(load_config(gallery), BuildOptions()).ok
    assert parsed == ["e2"]


@pytest.mark.parametrize("damage", [
    lambda state: state["files"].update({next(iter(state["files"])): 5}),  # a signature that is no list
    lambda state: state["files"].update({"elsewhere:x": [1, 2, 3]}),  # a tracked file of no known kind
    lambda state: state["entries"].update({"e0": {**state["entries"]["e0"], "packages": 7}}),
    lambda state: state["entries"].update({"e1": ["not", "a", "mapping"]}),
], ids=["signature", "kind", "packages", "entry"])
def test_a_damaged_state_is_no_state_and_the_site_is_made_again(gallery: Path, damage: object) -> None:
    """The saved state is a file in the project: one damaged by hand or by a crash makes the next
    build start afresh (its pages the same), never fail with a traceback."""
    path = next((gallery / "_freeze" / CACHE_DIR).glob("site-*.json"))
    state = json.loads(path.read_bytes())
    damage(state)  # type: ignore[operator]
    path.write_text(json.dumps(state))
    before = _bytes(gallery / "build")
    done = run_cli("build", cwd=gallery)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "unchanged" not in done.stdout + done.stderr  # made again: the state said nothing
    after = _bytes(gallery / "build")
    assert {k for k in after if not k.startswith("timings/")} == {k for k in before if not k.startswith("timings/")}


@pytest.mark.parametrize("suffix", ["json", "scripts"])
def test_a_state_nested_past_the_decoder_s_depth_is_no_state(gallery: Path, suffix: str) -> None:
    """JSON nested deeper than Python's decoder goes (a RecursionError, not a ValueError) in the
    saved state, or as an entry's name in the saved parses, is data like any other damage: the
    next build makes its pages again (the same), never fails with a traceback."""
    path = next((gallery / "_freeze" / CACHE_DIR).glob(f"site-*.{suffix}"))
    if suffix == "json":
        path.write_text("[" * 100_000, encoding="utf-8")
    else:
        key, _, rest = path.read_text(encoding="utf-8").partition("\t")
        path.write_text(f"{key}\t{'[' * 100_000}\t{rest.partition(chr(9))[2]}", encoding="utf-8")
    _edit(gallery, "e1", "# a comment", "# reworded")  # the parses are read by a build that changed something
    before = _bytes(gallery / "build")
    done = run_cli("build", cwd=gallery)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    pages = {k for k in _bytes(gallery / "build") if k.endswith(".html") and not k.startswith("timings/")}
    assert pages == {k for k in before if k.endswith(".html") and not k.startswith("timings/")}
