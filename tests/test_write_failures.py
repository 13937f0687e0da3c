"""Issue 21: a write that fails (disk full, quota, read-only, permission, I/O error) ends the build
cleanly: one line saying what, where and what to do, exit status 1, no traceback, the published
site and the records as they were, no temporary left; the next build then succeeds.

The faults are injected with tests/fault_driver.py at every write site the builder has: a counting
pass lists the sites of a rebuild, then each site fails once (the errnos rotate over the sites).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli, shared_folder, write_demo

pytest.importorskip("matplotlib")

FIGURE = '''
    """a: a figure (its thumbnail is cached) and a data file."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from pathlib import Path

    # %% B-plot
    VERSION = 1
    plt.plot([1, VERSION, 3])
    Path("a.csv").write_text(f"x,{VERSION}\\n")
    print("version", VERSION)
'''
LONG = '''
    """b: an output too long for the page (its complete output is a file of the record)."""

    # %% B-long
    VERSION = 1
    for i in range(6000):
        print(f"line {i} of version {VERSION}: " + "x" * 30)
'''
PLAIN = '''
    """plain: untouched by the rebuild; its record must stay byte for byte."""

    # %% B-print
    print("hello")
'''
# Every write site of a rebuild of the project above (see the counting pass).  A new write in the
# builder shows up here: make it go through fs (it then fails cleanly) and add its site.
SITES = [
    "capture.py:_cut:create_new",
    "execute.py:run_demo:adopt_dir>rename",
    "execute.py:run_demo:make_dirs",
    "folders.py:ensure_cache_dir:write_new",
    "lock.py:project_lock:open_for_update",
    "record_json.py:save_record:write_new",
    "search.py:_run_pagefind:",
    "spool.py:__init__:make_temp_dir",
    "spool.py:write:write_new",
    "state.py:save_state:write_atomic",
    "state.py:save_state:write_atomic>write_new",
    "store.py:commit:replace_dir",
    "store.py:staging:make_temp_dir",
    "swap.py:_make_folders:make_dirs",
    "swap.py:_staging_dir:make_temp_dir",
    "swap.py:_write_tree:copy_regular",
    "swap.py:_write_tree:link_or_copy",
    "swap.py:_write_tree:write_new",
    "swap.py:write_site:replace_dir",
    "thumbnails.py:_adopted:",
    "thumbnails.py:_store:write_atomic",
    "thumbnails.py:_store:write_atomic>write_new",
]
ERRNOS = [errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EIO]
SAYS = {errno.ENOSPC: "no space left on the device holding", errno.EDQUOT: "disk quota exceeded",
        errno.EROFS: "is on a read-only file system", errno.EACCES: "permission denied in",
        errno.EIO: "input/output error on the device holding"}
DRIVER = Path(__file__).with_name("fault_driver.py")


def drive(project: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``python -m site_builder ARGS`` in ``project`` with the fault driver's ``env``."""
    return run_cli(*args, cwd=project, env=env, timeout=240, script=DRIVER)


def snapshot(folder: Path, skip: str = "") -> dict[str, bytes]:
    """Every file below ``folder`` (relative path -> bytes), links as their target's text."""
    found = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if skip and (rel == skip or rel.startswith(skip + "/")):
            continue
        if path.is_symlink():
            found[rel] = b"-> " + os.readlink(path).encode()
        elif path.is_file():
            found[rel] = path.read_bytes()
    return found


def temporaries(project: Path) -> list[str]:
    """Whatever a build leaves behind that it meant to remove (walks the whole project)."""
    return sorted(p.relative_to(project).as_posix() for p in project.rglob("*")
                  if ".tmp-" in p.name or ".old-" in p.name or p.name.endswith(".builder"))


def linked_copy(project: Path, target: Path) -> None:
    """A copy of ``project`` whose files are hard links: the same inodes, so the saved state still
    describes its site and the rebuild reuses (links) unchanged pages, as in the original.  The build
    lock is copied: linked, the copies' builds (in two test processes at once) would wait for each other."""
    def link(source: str, copy: str) -> None:
        if Path(source).name == "build.lock":
            shutil.copyfile(source, copy)
        else:
            os.link(source, copy)

    shutil.copytree(project, target, symlinks=True, copy_function=link)


def prepare_rebuild(project: Path, changed: tuple[str, ...] = ("a", "b")) -> None:
    """Change the ``changed`` demos (they run again: a with a new figure, b with new output); drop
    the cache's .gitignore."""
    for name in changed:
        path = project / "demos" / f"{name}.py"
        text = path.read_text().replace("VERSION = 1", "VERSION = 2")
        path.unlink()  # a hard link to the original: never write through it
        path.write_text(text)
    (project / "_freeze" / ".cache" / ".gitignore").unlink()


def build_and_count(folder: Path) -> None:
    """In ``folder``: the project built once (the last good site and records), and the write sites
    of its rebuild (a linked copy's, in ``counting``) listed in ``writes.log``."""
    project = folder / "project"
    write_demo(project, "a", FIGURE)
    write_demo(project, "b", LONG)
    write_demo(project, "sec/plain", PLAIN)
    # Preloading off: only a's own run imports Matplotlib, so a rebuild that runs b alone does not
    # (the fork server would preload it for every build of a project whose demos import it).
    (project / "pyproject.toml").write_text("[tool.site_builder]\npreload = []\n", encoding="utf-8")
    first = run_cli("build", "-j", "1", cwd=project, timeout=240)
    assert first.returncode == 0, first.stderr
    counting = folder / "counting"
    linked_copy(project, counting)
    prepare_rebuild(counting)
    done = drive(counting, "build", "-j", "1", env={"FAULT_LOG": str(folder / "writes.log")})
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """A project built once (the last good site and records), and the write sites of its rebuild."""
    folder = shared_folder(tmp_path_factory, "write-failures", build_and_count)
    return {"project": folder / "project", "sites": sorted(set((folder / "writes.log").read_text().split("\n")) - {""})}


def test_the_counting_pass_finds_every_write_site(built: dict[str, object]) -> None:
    assert built["sites"] == SITES


@pytest.mark.parametrize("site", SITES)
def test_a_failed_write_ends_cleanly(built: dict[str, object], site: str, tmp_path: Path) -> None:
    code = ERRNOS[SITES.index(site) % len(ERRNOS)]
    project = tmp_path / "project"
    linked_copy(built["project"], project)
    site_before = snapshot(project / "build")
    records_before = snapshot(project / "_freeze", skip=".cache")
    recovers = code == errno.ENOSPC and SITES.index(site) % 10 == 0
    # Only a's new figure reaches the thumbnails' sites, and the next build below shows a's new
    # output: those rebuilds change a and b; the others' change b alone (one demo run, no Matplotlib).
    prepare_rebuild(project, ("a", "b") if recovers or site.startswith("thumbnails.py:") else ("b",))

    done = drive(project, "build", "-j", "1", env={"FAULT_SITE": site, "FAULT_ERRNO": str(code)})

    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, done.stderr
    assert SAYS[code] in errors[0] and " while " in errors[0] and "build again" in errors[0], errors[0]
    assert str(project) not in done.stderr  # where, relative to the project
    assert snapshot(project / "build") == site_before
    after = snapshot(project / "_freeze", skip=".cache")
    for rel, data in records_before.items():  # a record is the old one, or replaced whole by a new run's
        if not rel.startswith(("a/", "b/")):
            assert after.get(rel) == data, rel
    from site_builder.run.records.store import read_record

    for name in ("a", "b"):
        read_record(project / "_freeze" / name)  # complete: its files match what it lists
    assert temporaries(project) == []
    if recovers:  # space freed: the next build just works
        again = run_cli("build", "-j", "1", cwd=project, timeout=240)
        assert again.returncode == 0, again.stderr
        assert temporaries(project) == []
        assert "version 2" in (project / "build" / "a" / "index.html").read_text()


@pytest.mark.parametrize("code", ERRNOS)
def test_each_errno_is_said_in_the_users_words(code: int) -> None:
    from site_builder.fs import write_failure

    message = str(write_failure(OSError(code, os.strerror(code)), "saving the record of a", "_freeze/"))
    assert SAYS[code] in message and "_freeze/" in message
    assert "while saving the record of a; " in message and message.endswith("build again")
    assert message.split(" while ")[0].count("_freeze/") == 1  # where, said once


def test_a_killed_builds_temporaries_are_removed_by_the_next_build(project: Path) -> None:
    write_demo(project, "a", PLAIN)
    assert run_cli("build", cwd=project).returncode == 0
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # a pid that no process has any more
    left = [project / "_freeze" / f".a.tmp-{dead.pid}-x1y2", project / "_freeze" / f".a.tmp-{dead.pid}-x1y2.builder",
            project / f".build.tmp-{dead.pid}-abcd", project / f".build.tmp-{dead.pid}-spool-efgh"]
    for folder in left:
        (folder / "sub").mkdir(parents=True)
        (folder / "sub" / "big.bin").write_bytes(b"x" * 1000)
    (project / "_freeze" / ".cache" / f"site-0123.json.tmp-{dead.pid}").write_text("{")
    alive = project / "_freeze" / f".a.tmp-{os.getpid()}-live"  # a running build's: left alone
    alive.mkdir()
    (project / "_freeze" / "notes").mkdir()  # no section of an entry: not ours, left alone
    (project / "_freeze" / "notes" / f"x.tmp-{dead.pid}").write_text("mine")
    (project / f"notes.tmp-{dead.pid}").write_text("mine")  # not named as the builder names its own

    done = run_cli("build", cwd=project)

    assert done.returncode == 0, done.stderr
    assert "removed 5 temporary file(s) left by a build that was killed" in done.stderr
    assert not any(p.exists() for p in left)
    assert alive.is_dir() and (project / "_freeze" / "notes" / f"x.tmp-{dead.pid}").is_file()
    assert (project / f"notes.tmp-{dead.pid}").is_file()


@contextlib.contextmanager
def small_tmpfs(tmp_path: Path, size: str) -> Iterator[Path]:
    """A real tmpfs of ``size`` ("3m") mounted in ``tmp_path``, unmounted after; skips the
    test where mounting is not allowed (not root, or refused)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(disk)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"mount -t tmpfs is not permitted here: {mounted.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_a_demo_that_fills_the_disk_fails_as_a_demo_and_the_next_build_recovers(tmp_path: Path) -> None:
    """On a real 3 MB tmpfs (root only): the demo's 2.5 MB leave too little for the site."""
    with small_tmpfs(tmp_path, "3m") as disk:
        write_demo(disk, "a", '''
            """a: asks for more room than the disk has (tmpfs gives back what it took)."""
            import os

            # %% B-more
            with open("more.bin", "wb") as f:
                os.posix_fallocate(f.fileno(), 0, 10_000_000)
        ''')
        failed = run_cli("build", cwd=disk)
        assert failed.returncode == 1
        # the demo's own full disk is its failure, on its page
        assert "error: a: block B-more raised OSError" in failed.stderr, failed.stderr
        assert "Traceback" not in failed.stderr
        assert "No space left on device" in (disk / "build.failed" / "a" / "index.html").read_text()
        write_demo(disk, "a", '''
            """a: writes 2.5 MB, which leaves too little room for the site."""
            from pathlib import Path
            Path("big.bin").write_bytes(b"x" * 2_500_000)
        ''')
        full = run_cli("build", cwd=disk)
        assert full.returncode == 1
        assert "Traceback" not in full.stderr
        assert "error: no space left on the device holding" in full.stderr and "build again" in full.stderr
        assert temporaries(disk) == []
        write_demo(disk, "a", '''
            """a: small again."""
            print("small")
        ''')
        fixed = run_cli("build", cwd=disk)
        assert fixed.returncode == 0, fixed.stderr
        assert temporaries(disk) == []
        assert "small" in (disk / "build" / "a" / "index.html").read_text()


def test_pagefind_on_a_full_disk_is_a_write_failure_not_a_broken_search(tmp_path: Path) -> None:
    """Pagefind exits 0 with empty files when its writes fail: the builder notices."""
    from site_builder.site.publish.search import pagefind_binary, index_site

    if pagefind_binary() is None:
        pytest.skip("the Pagefind binary (pagefind[bin]) is not installed")
    with small_tmpfs(tmp_path, "1m") as disk:
        site = disk / "site"
        site.mkdir()
        words = " ".join(f"word{i}" for i in range(2000))
        (site / "index.html").write_text(f"<html><body data-pagefind-body><p>{words}</p></body></html>")
        room = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
        (disk / "fill").write_bytes(b"x" * (room - 4096))
        with pytest.raises(OSError) as raised:
            index_site(site)
        assert raised.value.errno == errno.ENOSPC


def test_a_build_killed_by_sigkill_leaves_folders_the_next_build_removes(project: Path,
                                                                        start_cli: Callable[..., Any]) -> None:
    import signal
    import time

    write_demo(project, "slow", '''
        """slow: runs long enough to be killed."""
        import time
        from pathlib import Path
        Path("partial.bin").write_bytes(b"x" * 100_000)
        time.sleep(60)
    ''')
    builder = start_cli("build", cwd=project, capture=False)
    deadline = time.monotonic() + 60
    while not list((project / "_freeze").glob(".slow.tmp-*/partial.bin")):
        assert time.monotonic() < deadline and builder.poll() is None
        time.sleep(0.05)
    builder.send_signal(signal.SIGKILL)
    builder.wait()
    assert list((project / "_freeze").glob(".slow.tmp-*"))  # what the killed build left
    write_demo(project, "slow", '''
        """slow: quick now."""
        print("done")
    ''')

    done = run_cli("build", cwd=project)

    assert done.returncode == 0, done.stderr
    assert "left by a build that was killed" in done.stderr
    assert temporaries(project) == []
