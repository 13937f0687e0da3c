"""A site rebuilt through a sequence of changes is, after each, byte for byte the site a build
from scratch writes from the same demos and records (no saved state, nothing reused)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import write_demo
from site_builder.commands.build import BuildOptions, build
from site_builder.config import load_config
from site_builder.project.folders import CACHE_DIR

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


def _remove(project: Path, name: str) -> None:
    (project / "demos" / f"{name}.py").unlink()


def _damage_parses(project: Path) -> None:
    """Every saved parse replaced by one of the wrong shape, under its right key (the state is data)."""
    for saved in (project / "_freeze" / CACHE_DIR).glob("site-*.scripts"):
        lines = [line.split("\t", 2) for line in saved.read_text(encoding="utf-8").splitlines()]
        saved.write_text("".join(f"{key}\t{name}\t{{\"cells\": 5}}\n" for key, name, _ in lines) + "x\n",
                         encoding="utf-8")


CHANGES = [
    ("a comment edited", lambda p: _edit(p, "e1", "# a comment", "# another comment")),
    ("an output changed", lambda p: _edit(p, "e2", "cherry", "cranberry")),
    ("a section entry's summary changed", lambda p: _edit(p, "fruit/e3", "a demo that", "a demo which")),
    ("an entry added", lambda p: write_demo(p, "e4", DEMO.format(name="e4", word="elder"))),
    ("an entry removed", lambda p: _remove(p, "e0")),
    ("nothing changed", lambda p: None),
    ("a block added", lambda p: _edit(p, "e4", 'elder")\n', 'elder")\n\n# %% B-more\nprint("more")\n')),
    ("a label's text changed (another page shows it)", lambda p: _edit(p, "e5", "# ## Target", "# ## Goal")),
    ("a label renamed (another page's reference to it is lost)", lambda p: _edit(p, "e5", "# (e5-target)=", "# (e5-goal)=")),
    ("the saved parses damaged, a comment edited", lambda p: (_damage_parses(p), _edit(p, "e2", "# a comment", "# a note"))),
]


@pytest.fixture(scope="module")
def sequence(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    project = tmp_path_factory.mktemp("incremental")
    (project / "pyproject.toml").write_text('[tool.site_builder]\ntitle = "Fruit"\n', encoding="utf-8")
    for i, word in enumerate(["apple", "banana", "cherry"]):
        write_demo(project, f"e{i}", DEMO.format(name=f"e{i}", word=word))
    write_demo(project, "fruit/e3", DEMO.format(name="e3", word="damson"))
    write_demo(project, "e5", LABELLED.format(name="e5"))
    write_demo(project, "e6", REFERRING.format(name="e6"))
    assert build(load_config(project), BuildOptions()).ok
    return project, tmp_path_factory.mktemp("scratch")


def test_a_site_built_from_scratch_matches_the_first_build(sequence: tuple[Path, Path]) -> None:
    project, scratch = sequence
    assert _bytes(project / "build") == _from_scratch(project, scratch / "first")


def test_each_rebuild_matches_a_build_from_scratch(sequence: tuple[Path, Path]) -> None:
    project, scratch = sequence
    config = load_config(project)
    for i, (what, change) in enumerate(CHANGES):
        change(project)
        report = build(config, BuildOptions())
        assert report.ok, what
        assert _bytes(project / "build") == _from_scratch(project, scratch / f"step{i}"), what
