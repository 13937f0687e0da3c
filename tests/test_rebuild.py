"""Near-free rebuilds: nothing changed costs nothing, unchanged pages are linked, never a stale site."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from conftest import run_cli, write_demo
from site_builder.project.folders import CACHE_DIR
from site_builder.site import sitefiles, templates
from site_builder.site.pages import render
from site_builder.site.rebuild import lend as rebuild
from site_builder.commands.build import BuildOptions, build
from site_builder.config import load_config

DEMO = '''\
    """{name}.py — a demo of {name}."""
    N = 3  # a comment

    # %% B-sum
    print("[B-sum] total =", sum(range(N)))
'''


def _tree(site: Path) -> dict[str, tuple[bytes, int]]:
    """Every file of the site: its bytes and inode (an unchanged inode: the file was not rewritten)."""
    return {p.relative_to(site).as_posix(): (p.read_bytes(), p.stat().st_ino)
            for p in sorted(site.rglob("*")) if p.is_file()}


def _bytes(site: Path) -> dict[str, bytes]:
    return {path: data for path, (data, _) in _tree(site).items()}


def _full_build(project: Path, out: str) -> dict[str, bytes]:
    """The site a build without any saved state writes (the reference for byte-identity)."""
    shutil.rmtree(project / "_freeze" / CACHE_DIR, ignore_errors=True)
    done = run_cli("build", "--out", out, cwd=project)
    assert done.returncode == 0, done.stderr
    return _bytes(project / out)


@pytest.fixture
def two_demos(project: Path) -> Path:
    for name in ("alpha", "beta"):
        write_demo(project, name, DEMO.format(name=name))
    done = run_cli("build", cwd=project)
    assert done.returncode == 0, done.stderr
    return project


def test_no_change_rebuild_says_unchanged_and_touches_no_file(two_demos: Path) -> None:
    before = _tree(two_demos / "build")
    done = run_cli("build", cwd=two_demos)
    assert done.returncode == 0, done.stderr
    assert "site unchanged" in done.stderr
    assert _tree(two_demos / "build") == before  # same bytes, same inodes: nothing rewritten
    cache = two_demos / "_freeze" / CACHE_DIR  # outside the published folder, git-ignored
    assert list(cache.glob("site-*.json"))
    assert (cache / ".gitignore").read_text().splitlines()[-1] == "*"


def test_comment_change_rerenders_only_that_page_and_matches_a_full_build(two_demos: Path) -> None:
    before = _tree(two_demos / "build")
    path = two_demos / "demos" / "alpha.py"
    path.write_text(path.read_text().replace("# a comment", "# a comment, reworded"))
    done = run_cli("build", cwd=two_demos)
    assert done.returncode == 0, done.stderr
    assert "site unchanged" not in done.stderr
    after = _tree(two_demos / "build")
    assert "reworded" in after["alpha/index.html"][0].decode()
    assert after["alpha/index.html"][1] != before["alpha/index.html"][1]
    assert after["beta/index.html"] == before["beta/index.html"]  # linked from the last site
    assert after["beta/beta.ipynb"] == before["beta/beta.ipynb"]
    assert _bytes(two_demos / "build") == _full_build(two_demos, "reference")


@pytest.mark.parametrize("damage", ["delete", "edit", "add"])
def test_a_hand_made_change_in_build_is_undone(two_demos: Path, damage: str) -> None:
    site = two_demos / "build"
    good = _bytes(site)
    page = site / "beta" / "index.html"
    if damage == "delete":
        page.unlink()
    elif damage == "edit":  # same size, so only the mtime and content tell
        text = page.read_bytes()
        page.write_bytes(text.replace(b"beta", b"BETA", 1))
    else:
        (site / "stray.txt").write_text("not part of the site")
    done = run_cli("build", cwd=two_demos)
    assert done.returncode == 0, done.stderr
    assert "site unchanged" not in done.stderr
    assert _bytes(site) == good


def _scripts_opened(project: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[bool, list[str]]:
    """Build ``project`` in this process: whether it found the site unchanged, and the demos it opened."""
    opened: list[str] = []
    original = open

    def counting(file: object, *args: object, **kwargs: object) -> object:
        if str(file).endswith(".py") and Path(str(file)).parent.name == "demos":
            opened.append(Path(str(file)).name)
        return original(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr("builtins.open", counting)
    try:
        report = build(load_config(project), BuildOptions())
    finally:
        monkeypatch.undo()
    assert report.ok
    return report.unchanged, opened


def test_a_script_is_read_again_only_when_its_signature_changed(two_demos: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Like git's index: a script whose size, mtime, ctime and inode are as when the last build
    read it (longer ago than an mtime tick) is not read again; an edit in place with its size and
    mtime put back still changes its ctime, and is built."""
    path = two_demos / "demos" / "alpha.py"
    time.sleep(0.2)  # written moments before the first build, the scripts may have been racily clean then:
    assert _scripts_opened(two_demos, monkeypatch)[0]  # read now if so, and signed
    assert _scripts_opened(two_demos, monkeypatch) == (True, [])
    before = path.stat()
    path.write_text(path.read_text().replace("N = 3", "N = 4"))  # the same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    time.sleep(0.2)
    assert _scripts_opened(two_demos, monkeypatch) == (False, ["alpha.py", "beta.py"])
    assert "total = 6" in (two_demos / "build" / "alpha" / "index.html").read_text()
    assert _bytes(two_demos / "build") == _full_build(two_demos, "reference")


def test_a_failed_build_then_the_old_source_again_publishes_nothing_stale(two_demos: Path) -> None:
    path = two_demos / "demos" / "alpha.py"
    good = path.read_text()
    path.write_text(good.replace('print("[B-sum]', 'print(("[B-sum]'))  # a syntax error: nothing runs
    assert run_cli("build", cwd=two_demos).returncode == 1
    assert (two_demos / "build.failed").is_dir()
    path.write_text(good)
    done = run_cli("build", cwd=two_demos)
    assert done.returncode == 0 and "site unchanged" in done.stderr, done.stderr
    assert not (two_demos / "build.failed").exists()  # as after any good build


def test_warnings_are_said_again_when_nothing_changed(project: Path) -> None:
    write_demo(project, "demo", '''\
        """demo.py — a demo.

        Blocks
        ------
        [B-gone]  a block that is not there
        """
        # %% B-here
        print("[B-here] ok")
    ''')
    first = run_cli("build", cwd=project)
    assert first.returncode == 0, first.stderr
    again = run_cli("build", cwd=project)
    assert again.returncode == 0 and "site unchanged" in again.stderr, again.stderr
    warnings = [line for line in first.stderr.splitlines() if "B-gone" in line]
    assert warnings and all(w in again.stderr for w in warnings)


@pytest.fixture
def own_templates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the templates the build uses (so a test can edit them)."""
    copy = tmp_path / "templates"
    shutil.copytree(sitefiles.TEMPLATES_DIR, copy)
    for module in (sitefiles, render, rebuild, templates):
        monkeypatch.setattr(module, "TEMPLATES_DIR", copy)
    templates.jinja_environment.cache_clear()
    yield copy
    templates.jinja_environment.cache_clear()


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    stat = path.stat()  # a later mtime, even on a coarse clock
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2_000_000_000))


def test_template_change_rerenders_and_unchanged_text_keeps_the_search_index(
        project: Path, own_templates: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    write_demo(project, "demo", DEMO.format(name="demo"))
    config = load_config(project)
    assert build(config, BuildOptions()).published
    site = project / "build"
    before = _tree(site)
    assert build(config, BuildOptions()).unchanged
    # A Jinja comment changes the template, not one byte of the pages: the index is reused.
    _edit(own_templates / "entry.html", "{% extends", "{# reworded #}{% extends")
    report = build(config, BuildOptions())
    assert report.published and not report.unchanged
    after = _tree(site)
    assert after == before  # every page rendered again, equal, and linked: not one file rewritten
    # A visible change re-renders the pages and the search index.
    _edit(own_templates / "entry.html", "{# reworded #}", "<!-- edited -->")
    assert not build(config, BuildOptions()).unchanged
    edited = _tree(site)
    assert b"<!-- edited -->" in edited["demo/index.html"][0]
    assert edited["pagefind/pagefind-entry.json"][1] != before["pagefind/pagefind-entry.json"][1]
    assert edited["demo/demo.ipynb"] == before["demo/demo.ipynb"]  # the notebook did not change: linked


def test_a_one_entry_change_renders_only_what_shows_it(project: Path, rendered_pages: list[str]) -> None:
    """A comment: that entry's page only.  A summary or a new result: its page, the neighbours
    whose previous/next links show the summary, and the site-wide pages (index, timings, 404)."""
    names = [f"e{i}" for i in range(6)]
    for name in names:
        write_demo(project, name, DEMO.format(name=name))
    config = load_config(project)
    assert build(config, BuildOptions()).ok

    def rebuild_after(name: str, old: str, new: str) -> list[str]:
        path = project / "demos" / f"{name}.py"
        path.write_text(path.read_text().replace(old, new))
        rendered_pages.clear()
        assert build(config, BuildOptions()).ok
        return sorted(rendered_pages)

    assert rebuild_after("e3", "# a comment", "# a comment, reworded") == ["e3"]
    assert rebuild_after("e3", "a demo of e3", "a demo of e3, retitled") == ["404.html", "e2", "e3", "e4", "index.html", "timings.html"]
    assert rebuild_after("e3", "total =", "sum =") == ["404.html", "e3", "index.html", "timings.html"]  # ran
    assert rebuild_after("e5", "# a comment", "# the last entry") == ["e5"]


def test_a_moved_project_renders_only_what_changed(tmp_path: Path, rendered_pages: list[str]) -> None:
    """A project renamed (a checkout at another path, its records committed, its last site and
    state kept): nothing changed renders nothing and rewrites no file; one summary edited renders
    that entry, its neighbours and the site-wide pages, not every page (no key holds the project's
    absolute folder), and the site is the one a build from scratch writes."""
    project = tmp_path / "checkout" / "project"
    for name in ("e0", "e1", "e2", "e3"):
        write_demo(project, name, DEMO.format(name=name))
    (project / "pyproject.toml").write_text('[tool.site_builder]\ntitle = "Demos"\n')  # not the folder's name
    assert build(load_config(project), BuildOptions()).ok  # the records
    shutil.rmtree(project / "build")
    shutil.rmtree(project / "_freeze" / CACHE_DIR)
    assert build(load_config(project), BuildOptions(frozen=True)).ok  # as CI builds: results read back
    moved = (tmp_path / "checkout").rename(tmp_path / "elsewhere") / "project"
    before = _tree(moved / "build")
    rendered_pages.clear()
    report = build(load_config(moved), BuildOptions(frozen=True))
    assert report.ok and report.unchanged and rendered_pages == []
    assert _tree(moved / "build") == before

    path = moved / "demos" / "e1.py"
    path.write_text(path.read_text().replace("a demo of e1", "a demo of e1, retitled"))
    assert build(load_config(moved), BuildOptions(frozen=True)).ok
    assert sorted(rendered_pages) == ["404.html", "e0", "e1", "e2", "index.html", "timings.html"]
    after = _tree(moved / "build")
    assert after["e3/index.html"] == before["e3/index.html"]  # same bytes, same inode: linked

    scratch = tmp_path / "scratch"
    shutil.copytree(moved, scratch, ignore=shutil.ignore_patterns(CACHE_DIR, "build"))
    assert build(load_config(scratch), BuildOptions(frozen=True)).ok
    assert _bytes(scratch / "build") == _bytes(moved / "build")
