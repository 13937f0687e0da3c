"""A site rebuilt through a sequence of changes is, after each, byte for byte the site a build
from scratch writes from the same demos and records (no saved state, nothing reused)."""

from __future__ import annotations

import json
import os
import shutil
import struct
import time
from pathlib import Path
from typing import Callable

import pytest

from conftest import MYST_FRONT_MATTER, write_demo
from site_builder.commands.build import BuildOptions, build
from site_builder.commands.build.options import folders_of
from site_builder.commands.build.search_later import catch_up_search
from site_builder.config import Config, load_config
from site_builder.project.folders import CACHE_DIR
from site_builder.run.records import store
from site_builder.site.downloads import archives
from site_builder.site.publish import search_shards
from site_builder.site.rebuild.state import load_state, sha_of
from site_builder.site.rebuild.tracked import unchanged_files
from site_builder.site.references import site as connections

DEMO = '''\
    """{name}: a demo that says {word}."""
    N = 3  # a comment

    # %% B-sum
    print("[B-sum] total =", sum(range(N)), "{word}")
'''

# A label on one page, shown by a reference on another: the referring page shows its text.
LABELLED = '''\
    """{name}.py — holds a section.

    Purpose
    -------
    Its purpose.
    """

    # %% B-sum
    print("[B-sum] labelled")

    # %% [markdown]
    # ({name}-target)=
    # ## Target
    #
    # The section.
'''
REFERRING = '''\
    """{name}.py — refers to another.

    Purpose
    -------
    See {{ref}}`e5-target` of the other entry.
    """

    # %% B-sum
    print("[B-sum] referring")
'''


# A notebook gluing a value, and one pasting it: the pasting page shows the other's result.
GLUING = MYST_FRONT_MATTER + '''
# Gluing

```{code-cell} python
from IPython.core.formatters import format_display_data
from IPython.display import display
bundle, metadata = format_display_data("plum")
metadata["scrapbook"] = dict(name="fruit", mime_prefix="application/papermill.record/")
display({"application/papermill.record/" + k: v for k, v in bundle.items()}, raw=True, metadata=metadata)
```
'''
PASTING = MYST_FRONT_MATTER + '''
# Pasting

The fruit: {glue:text}`gluing.md::fruit`.

```{code-cell} python
x = 1  # a comment
```
'''


def _bytes(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def _from_scratch(project: Path, elsewhere: Path) -> dict[str, bytes]:
    """The site a build with no saved state and no published site writes, in a copy of the
    project holding its demos and its records (so the demos' outputs and times are the same)."""
    shutil.rmtree(elsewhere, ignore_errors=True)
    shutil.copytree(project / "demos", elsewhere / "demos")
    shutil.copy(project / "pyproject.toml", elsewhere / "pyproject.toml")  # the title, not the folder's name
    shutil.copytree(project / "_freeze", elsewhere / "_freeze", ignore=shutil.ignore_patterns(CACHE_DIR))
    report = build(load_config(elsewhere), BuildOptions())
    assert report.ok and not report.unchanged
    return _bytes(elsewhere / "build")


def _edit(project: Path, name: str, old: str, new: str) -> None:
    path = project / "demos" / f"{name}.py"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def _edit_notebook(project: Path, name: str, old: str, new: str) -> None:
    path = project / "demos" / f"{name}.md"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def _remove(project: Path, name: str) -> None:
    (project / "demos" / f"{name}.py").unlink()


def _damage_parses(project: Path) -> None:
    """Every saved parse replaced by one of the wrong shape, under its right key (the state is data)."""
    for saved in (project / "_freeze" / CACHE_DIR).glob("site-*.scripts"):
        lines = [line.split("\t", 2) for line in saved.read_text(encoding="utf-8").splitlines()]
        saved.write_text("".join(f"{key}\t{name}\t{{\"cells\": 5}}\n" for key, name, _ in lines) + "x\n",
                         encoding="utf-8")


def _damage_parse_bodies(project: Path) -> None:
    """Every saved parse's cells (its body, after the fields a rebuild plans with) replaced by a
    value of the wrong shape, under its right key (the state is data)."""
    decoder = json.JSONDecoder()
    for saved in (project / "_freeze" / CACHE_DIR).glob("site-*.scripts"):
        lines = [line.split("\t") for line in saved.read_text(encoding="utf-8").splitlines()]
        for fields in lines:
            fields[2] = fields[2][:decoder.raw_decode(fields[2])[1]] + '{"cells":5}'
        saved.write_text("".join("\t".join(fields) + "\n" for fields in lines), encoding="utf-8")


def _append(project: Path, name: str, text: str) -> None:
    path = project / "demos" / f"{name}.py"
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def _damage_rows(project: Path) -> None:
    """Every saved result row replaced by one of the wrong shape (the state is data)."""
    for saved in (project / "_freeze" / CACHE_DIR).glob("site-*.json"):
        state = json.loads(saved.read_bytes())
        for i, entry in enumerate(state["entries"].values()):
            entry["row"] = [[None, 1, 1, ""], "x", [1.0, 2, 3], None][i % 4]
        saved.write_text(json.dumps(state), encoding="utf-8")


def _edit_signed_in_place(project: Path, name: str, old: str, new: str) -> None:
    """A script the last build signed (see discover's ``known``) edited in place, its size and mtime
    put back: only its ctime tells."""
    time.sleep(0.2)  # past an mtime tick since it was written: the next build signs it
    assert build(load_config(project), BuildOptions()).ok
    path = project / "demos" / f"{name}.py"
    before = path.stat()
    assert len(old) == len(new)
    _edit(project, name, old, new)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def _damage_signatures(project: Path) -> None:
    """Every saved script signature replaced by one of the wrong shape or values (the state is data)."""
    for saved in (project / "_freeze" / CACHE_DIR).glob("site-*.json"):
        state = json.loads(saved.read_bytes())
        for i, entry in enumerate(state["entries"].values()):
            entry["script"] = [["x"], "x", [entry.get("script") or ["demos/e1.py"], 1, 2, 3, 4], None][i % 4]
        saved.write_text(json.dumps(state), encoding="utf-8")


def _tamper_archives(project: Path) -> None:
    """A byte of each published archive's last member changed in place, its size and mtime put back:
    only its content tells (the published folder is data)."""
    for archive in (project / "build" / "_downloads").glob("*.zip"):
        before = archive.stat()
        raw = archive.read_bytes()
        start = struct.unpack_from("<I", raw, raw.rindex(b"PK\x05\x06") + 16)[0]  # the central directory
        with open(archive, "r+b") as f:
            f.seek(start - 2)  # inside the last member's deflated bytes
            f.write(bytes([raw[start - 2] ^ 0xFF]))
        os.utime(archive, ns=(before.st_atime_ns, before.st_mtime_ns))


def _damage_archive_digests(project: Path) -> None:
    """The saved archives' digests replaced by wrong ones (the state is data)."""
    for saved in (project / "_freeze" / CACHE_DIR).glob("site-*.json"):
        state = json.loads(saved.read_bytes())
        state["archives"] = {path: "0" * 64 for path in state["archives"]}
        saved.write_text(json.dumps(state), encoding="utf-8")


def _edit_with_forged_digest(project: Path, name: str, old: str, new: str) -> None:
    """A script edited (its size kept), the saved state forged to say the new text is the one the
    published archive holds."""
    path = project / "demos" / f"{name}.py"
    edited = path.read_bytes().replace(old.encode(), new.encode())
    for saved in (project / "_freeze" / CACHE_DIR).glob("site-*.json"):
        state = json.loads(saved.read_bytes())
        state["entries"][name]["source"] = sha_of(edited)
        saved.write_text(json.dumps(state), encoding="utf-8")
    assert len(old) == len(new)
    _edit(project, name, old, new)


def _rewrite_record_in_place(project: Path, name: str, old: bytes, new: bytes) -> None:
    """A record the last build trusted, rewritten in place with its size and mtime put back (still
    a good record: the page shows its new output): only its ctime tells."""
    time.sleep(0.2)  # past an mtime tick: the no-change build signs the records by their stat alone
    assert build(load_config(project), BuildOptions()).unchanged
    record = store.store_dir(project / "_freeze", name) / store.RECORD_FILE
    before = record.stat()
    data = record.read_bytes()
    assert len(old) == len(new) and data.count(old) == 1
    with open(record, "r+b") as f:  # the same inode
        f.write(data.replace(old, new))
    os.utime(record, ns=(before.st_atime_ns, before.st_mtime_ns))


Change = Callable[[Path], object]

CHANGES: list[tuple[str, Change]] = [
    ("a comment edited", lambda p: _edit(p, "e1", "# a comment", "# another comment")),
    ("an output changed", lambda p: _edit(p, "e2", "cherry", "cranberry")),
    ("a section entry's summary changed", lambda p: _edit(p, "fruit/e3", "a demo that", "a demo which")),
    ("an entry added", lambda p: write_demo(p, "e4", DEMO.format(name="e4", word="elder"))),
    ("an entry removed", lambda p: _remove(p, "e0")),
    ("nothing changed", lambda p: None),
    ("a block added", lambda p: _edit(p, "e4", 'elder")\n', 'elder")\n\n# %% B-more\nprint("more")\n')),
    ("a label's text changed (another page shows it)", lambda p: _edit(p, "e5", "# ## Target", "# ## Goal -- \"met\"")),
    ("the typography and entry_heading settings changed", lambda p: (p / "pyproject.toml").write_text(
        '[tool.site_builder]\ntitle = "Fruit"\ntypography = false\nentry_heading = "Fruit {name}"\n', encoding="utf-8")),
    ("a label renamed (another page's reference to it is lost)", lambda p: _edit(p, "e5", "# (e5-target)=", "# (e5-goal)=")),
    ("the saved parses damaged, a comment edited", lambda p: (_damage_parses(p), _edit(p, "e2", "# a comment", "# a note"))),
    ("a glued value changed (another page pastes it)", lambda p: _edit_notebook(p, "gluing", '"plum"', '"quince"')),
    ("the pasting page's comment edited (the glued result unchanged)",
     lambda p: _edit_notebook(p, "pasting", "# a comment", "# a note")),
    ("the saved rows damaged, a comment edited", lambda p: (_damage_rows(p), _edit(p, "e1", "# another", "# a third"))),
    ("a signed script edited in place, its size and mtime put back",
     lambda p: _edit_signed_in_place(p, "e1", "# a third", "# a THIRD")),
    ("the saved script signatures damaged, a comment edited",
     lambda p: (_damage_signatures(p), _edit(p, "e2", "# a note", "# a memo"))),
    ("the published archives changed in place, a comment edited",
     lambda p: (_tamper_archives(p), _edit(p, "e1", "# a THIRD", "# a fourth"))),
    ("the saved archives' digests damaged, a comment edited",
     lambda p: (_damage_archive_digests(p), _edit(p, "e2", "# a memo", "# a jotting"))),
    ("a script edited, its saved digest forged to the new text's",
     lambda p: _edit_with_forged_digest(p, "e2", "# a jotting", "# a JOTTING")),
    ("a trusted record's output rewritten in place, its size and mtime put back",
     lambda p: _rewrite_record_in_place(p, "e1", b"banana", b"BANANA")),
]

# Who refers to whom, changed one entry at a time (after CHANGES: e5's first label is renamed, so
# e6's reference to it is lost): the pages keyed by another's labels follow each change.
REFERENCE_CHANGES = [
    ("a label added", lambda p: _edit(p, "e5", "# The section.\n", "# The section.\n#\n# (e5-more)=\n# ### More\n")),
    ("a reference to another entry's label added",
     lambda p: _edit(p, "e6", "of the other entry.", "of the other entry, and {ref}`e5-more`.")),
    ("a label removed (another page refers to it)", lambda p: _edit(p, "e5", "# (e5-more)=\n", "")),
    ("an entry another refers to deleted", lambda p: _remove(p, "e5")),
]


# A page defining the label "shared" (after REFERENCE_CHANGES: e6 refers to e5's lost labels).
SHARING = '''\
    """{name}.py — defines a shared label.

    Purpose
    -------
    Its purpose.
    """

    # %% B-sum
    print("[B-sum] {name}")

    # %% [markdown]
    # (shared)=
    # ## Shared on {name}
'''
GLOSSARY = '''
# %% [markdown]
# ```{glossary}
# Ripeness
#   How ripe a fruit is.
#
# e6
#   A glossary term naming an entry too.
# ```
'''


def _damage_index(project: Path, how: str) -> None:
    """The saved index of the site's connections removed, cut short, or of the wrong shape under its right key."""
    for saved in (project / "_freeze" / CACHE_DIR).glob("site-*.index"):
        if how == "removed":
            saved.unlink()
            continue
        text = saved.read_text(encoding="utf-8")
        if how == "cut":
            saved.write_text(text[:len(text) // 2], encoding="utf-8")
            continue
        index = json.loads(text)
        index["facts"] = [["forged", 1] for _ in index["facts"]]
        saved.write_text(json.dumps(index), encoding="utf-8")


def _rename(project: Path, old: str, new: str) -> None:
    (project / "demos" / f"{old}.py").rename(project / "demos" / f"{new}.py")


# The site's connections kept in the state (an index of every page's labels, terms, references
# and titles), changed one entry at a time: each page that shows a changed name follows.
INDEX_CHANGES = [
    ("two entries define the same label (the first in site order holds)", lambda p: (
        write_demo(p, "e7", SHARING.format(name="e7")), write_demo(p, "e8", SHARING.format(name="e8")),
        _edit(p, "e6", "and {ref}`e5-more`", "and {ref}`shared`"))),
    ("a comment edited beside the shared label", lambda p: _edit(p, "e4", "# a comment", "# a remark")),
    ("the first entry defining the shared label deleted (the second holds)", lambda p: _remove(p, "e7")),
    ("the shared label moved to another entry", lambda p: (
        _edit(p, "e8", "# (shared)=\n", ""), _edit(p, "e4", 'elder")\n', 'elder")\n\n# %% [markdown]\n# (shared)=\n# ## Here\n'))),
    ("a glossary added, one of its terms naming an entry too", lambda p: p.joinpath("demos", "e8.py").write_text(
        p.joinpath("demos", "e8.py").read_text(encoding="utf-8") + GLOSSARY, encoding="utf-8")),
    ("terms used (an entry's, a glossary's)", lambda p: _edit(p, "e6", "of the other entry", "of {term}`e8`, {term}`ripeness`")),
    ("titles changed (their referrers and neighbours show them)", lambda p: (
        _edit(p, "e8", "defines a shared label.", "a new title."), _edit(p, "e6", "refers to another.", "refers to others."))),
    ("an entry another refers to renamed", lambda p: _rename(p, "e8", "e9")),
    ("the saved index removed, a comment edited", lambda p: (_damage_index(p, "removed"), _edit(p, "e1", "# a fourth", "# a 4th"))),
    ("the saved index cut short, a comment edited", lambda p: (_damage_index(p, "cut"), _edit(p, "e1", "# a 4th", "# a 5th"))),
    ("the saved index forged in shape, a comment edited", lambda p: (
        _damage_index(p, "forged"), _edit(p, "e1", "# a 5th", "# a 6th"))),
    ("an entry another refers to deleted (its term is lost)", lambda p: _remove(p, "e9")),
]


# What a page's key holds besides its parse and its result (a page keeps its saved key while
# those hold): a helper module beside a script changes only its requirements, which its page says.
KEY_CHANGES = [
    ("a script imports a module it lacks (one more requirement)", lambda p: _edit(
        p, "e1", "N = 3", "try:\n    import _fruity\nexcept ImportError:\n    pass\nN = 3")),
    # (another entry edited too: the no-change check does not look for modules a script lacked)
    ("the module added beside it (its requirements change, its parse does not), another entry edited",
     lambda p: (p.joinpath("demos", "_fruity.py").write_text("RIPE = True\n", encoding="utf-8"),
                _edit(p, "e4", "# a remark", "# a note"))),
    # what an unchanged entry's page is planned with, kept apart from its cells in the saved parse
    ("an entry's aliases added (another page uses one as a term)", lambda p: (
        _edit(p, "e2", 'cranberry."""', 'cranberry.\n\nAliases\n-------\nstone fruit\n"""'),
        _edit(p, "e6", "{term}`ripeness`", "{term}`ripeness`, {term}`stone fruit`"))),
    ("an entry's thumbnail number set", lambda p: _append(p, "e1", "# sphinx_gallery_thumbnail_number = -1\n")),
    ("the saved parses' cells damaged, a title changed (every page's prose read again)", lambda p: (
        _damage_parse_bodies(p), _edit(p, "e4", "a demo that says", "a demo saying"))),
    ("the saved parses' cells damaged, a comment edited", lambda p: (
        _damage_parse_bodies(p), _edit(p, "e1", "# a 6th", "# a 7th"))),
]


def _built_fruit(project: Path, after: list[tuple[str, Change]] | tuple[()] = ()) -> Path:
    """The sequences' project, built once: four fruit entries, one in a section, and two that refer
    (with the sources ``after`` leaves, when a part of a sequence starts past its first change)."""
    project.mkdir(parents=True, exist_ok=True)
    (project / "pyproject.toml").write_text('[tool.site_builder]\ntitle = "Fruit"\n', encoding="utf-8")
    for i, word in enumerate(["apple", "banana", "cherry"]):
        write_demo(project, f"e{i}", DEMO.format(name=f"e{i}", word=word))
    write_demo(project, "fruit/e3", DEMO.format(name="e3", word="damson"))
    write_demo(project, "e5", LABELLED.format(name="e5"))
    write_demo(project, "e6", REFERRING.format(name="e6"))
    (project / "demos" / "gluing.md").write_text(GLUING, encoding="utf-8")
    (project / "demos" / "pasting.md").write_text(PASTING, encoding="utf-8")
    for _, change in after:
        change(project)
    assert build(load_config(project), BuildOptions()).ok
    return project


# The long sequences run in parts that xdist runs side by side, each from a fresh build of the
# sources the changes before it leave: CHANGES[:HALF] edit sources only, so they are replayed before
# that build. The connections' changes start where CHANGES leave e1's comment.
HALF = 10
CONNECTIONS_AFTER = CHANGES[:HALF] + [
    ("e1's comment as the changes before leave it", lambda p: _edit(p, "e1", "# another comment", "# a fourth comment"))]
PARTS = {"changes-1": (0, CHANGES[:HALF]), "changes-2": (HALF, CHANGES[HALF:]),
         "connections": (len(CHANGES), REFERENCE_CHANGES + INDEX_CHANGES + KEY_CHANGES)}


def _part(tmp_path: Path, start: int) -> tuple[Path, Path]:
    """A fresh project built with the sources the first ``start`` changes leave, and a scratch folder."""
    after = CONNECTIONS_AFTER if start == len(CHANGES) else CHANGES[:start]
    return _built_fruit(tmp_path / "project", after), tmp_path / "scratch"


@pytest.fixture(scope="module")
def sequence(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    project = _built_fruit(tmp_path_factory.mktemp("incremental"))
    return project, tmp_path_factory.mktemp("scratch")


def test_a_site_built_from_scratch_matches_the_first_build(sequence: tuple[Path, Path]) -> None:
    project, scratch = sequence
    assert _bytes(project / "build") == _from_scratch(project, scratch / "first")


# The run records a rebuild reads: an unchanged entry's record only when a page shows its result.
RECORDS_READ = {
    "a comment edited": {"e1"},
    "the pasting page's comment edited (the glued result unchanged)": {"pasting", "gluing"},
}


# The pages whose prose a rebuild reads for the site's connections (the others' come from the saved index).
PROSE_READ = {
    "a comment edited": {"e1"},
    "a comment edited beside the shared label": {"e4"},
}


@pytest.mark.parametrize("part", PARTS)
def test_each_rebuild_matches_a_build_from_scratch(part: str, request: pytest.FixtureRequest, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    start, changes = PARTS[part]
    project, scratch = request.getfixturevalue("sequence") if start == 0 else _part(tmp_path, start)
    read: list[str] = []
    reading = store._read_record
    monkeypatch.setattr(store, "_read_record", lambda folder, *a: (read.append(folder.name), reading(folder, *a))[1])
    prose: list[str] = []  # the pages whose labels were read from their prose
    labelling = connections.page_labels
    monkeypatch.setattr(connections, "page_labels", lambda b, *a: (prose.append(b.entry.name), labelling(b, *a))[1])
    lent: list[int] = []  # members the published archives lent the new ones
    lending = archives.published_members
    monkeypatch.setattr(archives, "published_members", lambda archive: (m := lending(archive), lent.append(len(m)))[0])
    for i, (what, change) in enumerate(changes, start):
        change(project)
        config = load_config(project)  # as each build command does: a settings change is seen
        read.clear()
        lent.clear()
        prose.clear()
        report = build(config, BuildOptions())
        assert report.ok, what
        if what in PROSE_READ:
            assert set(prose) == PROSE_READ[what], what
        if what in RECORDS_READ:
            assert sorted(read) == sorted(RECORDS_READ[what]), what
            assert lent and min(lent) > 0, what  # the site-wide pages reused: the archives updated
        assert _bytes(project / "build") == _from_scratch(project, scratch / f"step{i}"), what
        _check_state_names_the_site(config, what)


def _check_state_names_the_site(config: Config, what: str) -> None:
    """The saved state names every file of the published site, each as it is (and no other):
    what the next build's no-change check compares."""
    state = load_state(folders_of(config))
    assert state is not None and unchanged_files(folders_of(config), state), what


@pytest.fixture(scope="module")
def deferred(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    project = _built_fruit(tmp_path_factory.mktemp("deferred"), CHANGES[:HALF])
    return project, tmp_path_factory.mktemp("scratch-deferred")


@pytest.mark.parametrize("start", [0, HALF])
def test_pages_published_before_their_search_index_match_a_build_from_scratch_once_it_caught_up(
        start: int, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """serve's rebuilds: the pages go out with the previous search index, which is made afterwards
    (or by the next plain build, when serve stopped first)."""
    project, scratch = request.getfixturevalue("deferred") if start else _part(tmp_path, start)
    for i, (what, change) in enumerate(CHANGES[start:start + HALF], start):
        index_before = {k: v for k, v in _bytes(project / "build").items() if k.startswith("pagefind/")}
        change(project)
        config = load_config(project)
        report = build(config, BuildOptions(defer_search=True))
        assert report.ok, what
        index_now = {k: v for k, v in _bytes(project / "build").items() if k.startswith("pagefind/")}
        assert report.search_pending == (what != "nothing changed"), what
        if report.search_pending:
            assert index_now == index_before, f"{what}: the index must be the published one until caught up"
            assert not build(config, BuildOptions(defer_search=True)).unchanged, what
            if i == 1:  # serve stopped before it caught up: the next plain build indexes
                assert not build(config, BuildOptions()).search_pending
            else:
                assert catch_up_search(folders_of(config), stop=lambda: False) is None, what
        assert catch_up_search(folders_of(config), stop=lambda: False) is None, what  # nothing left to do
        assert _bytes(project / "build") == _from_scratch(project, scratch / f"step{i}"), what
        assert build(config, BuildOptions(defer_search=True)).unchanged, what


def test_a_change_saved_while_the_search_catches_up_stops_it_and_keeps_the_site(deferred: tuple[Path, Path]) -> None:
    project, _ = deferred
    config = load_config(project)
    _edit(project, "e1", "N = 3", "N = 3  # stopped")
    assert build(config, BuildOptions(defer_search=True)).search_pending
    before = _bytes(project / "build")
    asked = iter(range(1_000_000))
    # stopped while Pagefind runs (the first question is asked before the pages are linked)...
    assert catch_up_search(folders_of(config), stop=lambda: next(asked) > 0) == ""
    assert next(asked) > 1, "Pagefind was not asked to stop"
    assert _bytes(project / "build") == before
    # ... or before
    assert catch_up_search(folders_of(config), stop=lambda: True) == ""
    assert _bytes(project / "build") == before
    assert not [p.name for p in project.iterdir() if ".tmp-" in p.name], "the stopped index was left behind"
    assert catch_up_search(folders_of(config), stop=lambda: False) is None
    assert build(config, BuildOptions()).unchanged


def test_the_search_catching_up_reads_only_the_pages_the_build_wrote(deferred: tuple[Path, Path]) -> None:
    """A link or a page put in the published site after the build never reaches the index."""
    project, scratch = deferred
    config = load_config(project)
    secret = scratch / "secret.html"
    secret.write_text("<html><body><p>hushhush</p></body></html>", encoding="utf-8")
    _edit(project, "e2", "N = 3", "N = 3  # linked")
    assert build(config, BuildOptions(defer_search=True)).search_pending
    (project / "build" / "planted.html").symlink_to(secret)
    assert catch_up_search(folders_of(config), stop=lambda: False) is None
    (project / "build" / "planted.html").unlink()
    assert _bytes(project / "build") == _from_scratch(project, scratch / "linked")

    _edit(project, "e2", "# linked", "# edited by hand")
    assert build(config, BuildOptions(defer_search=True)).search_pending
    page = project / "build" / "e2" / "index.html"
    page.write_text(page.read_text(encoding="utf-8") + "<!-- by hand -->", encoding="utf-8")
    problem = catch_up_search(folders_of(config), stop=lambda: False)
    assert problem == "search index not caught up: e2/index.html changed since it was published"
    assert build(config, BuildOptions()).ok  # the next build makes the page and its index again
    assert _bytes(project / "build") == _from_scratch(project, scratch / "by-hand")


PART_PAGES = 3  # the fruit site's pages make four parts of its search index (search_shards.py)


@pytest.mark.parametrize("start", [0, HALF])
def test_each_rebuild_of_a_site_whose_index_is_in_parts_matches_a_build_from_scratch(
        start: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the parts whose pages changed are made again; the site is the one a build from scratch writes."""
    monkeypatch.setattr(search_shards, "SHARD_PAGES", PART_PAGES)
    project, scratch = _part(tmp_path, start)
    for i, (what, change) in enumerate(CHANGES[start:start + HALF], start):
        change(project)
        config = load_config(project)
        assert build(config, BuildOptions()).ok, what
        assert (project / "build" / "pagefind" / "shard-1").is_dir() or (project / "build" / "pagefind" / "shard-2").is_dir()
        assert _bytes(project / "build") == _from_scratch(project, scratch / f"step{i}"), what
        _check_state_names_the_site(config, what)
    if start + HALF < len(CHANGES):
        return
    # serve's way: the pages first, the index (in parts) once they are out
    _edit(project, "e1", "N = 3", "N = 3  # deferred")
    assert build(load_config(project), BuildOptions(defer_search=True)).search_pending
    assert catch_up_search(folders_of(load_config(project)), stop=lambda: False) is None
    assert _bytes(project / "build") == _from_scratch(project, scratch / "deferred")
