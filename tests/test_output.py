"""Atomic writing of the site: safe joins, swap, failed builds kept aside."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from site_builder.errors import UsageError
from site_builder.fs import UnsafePathError, recover, safe_join
from site_builder.site.publish.swap import check_writable, failed_dir, remove_site, write_site
from site_builder.site.pages.render import SiteFile


@pytest.mark.parametrize("bad", ["../x", "/etc/passwd", "a/../../x", "", "a//b", "a\\..\\b"])
def test_safe_join_refuses_escapes(tmp_path: Path, bad: str) -> None:
    with pytest.raises(UnsafePathError):
        safe_join(tmp_path, bad)


def test_safe_join_accepts_nested(tmp_path: Path) -> None:
    assert safe_join(tmp_path, "a/b/c.html") == tmp_path / "a" / "b" / "c.html"


def test_write_then_replace(tmp_path: Path) -> None:
    out = tmp_path / "build"
    write_site(out, [SiteFile("index.html", b"one"), SiteFile("a/index.html", b"a")])
    assert (out / "index.html").read_bytes() == b"one"
    write_site(out, [SiteFile("index.html", b"two")])
    assert (out / "index.html").read_bytes() == b"two"
    assert not (out / "a").exists()  # the new site replaces the old one whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build"]  # no staging left behind


def test_failed_build_keeps_last_good_site(tmp_path: Path) -> None:
    out = tmp_path / "build"
    write_site(out, [SiteFile("index.html", b"good")])
    kept = write_site(out, [SiteFile("index.html", b"broken")], publish=False)
    assert kept == failed_dir(out)
    assert (out / "index.html").read_bytes() == b"good"
    assert (kept / "index.html").read_bytes() == b"broken"
    write_site(out, [SiteFile("index.html", b"fixed")])
    assert not failed_dir(out).exists()  # a good build clears the stale failure


def test_copies_source_files(tmp_path: Path) -> None:
    src = tmp_path / "data.csv"
    src.write_bytes(b"a,b\n1,2\n")
    out = tmp_path / "build"
    write_site(out, [SiteFile("e/data.csv", source=src)])
    assert (out / "e" / "data.csv").read_bytes() == b"a,b\n1,2\n"


def test_unsafe_file_leaves_previous_site(tmp_path: Path) -> None:
    out = tmp_path / "build"
    write_site(out, [SiteFile("index.html", b"good")])
    with pytest.raises(UnsafePathError):
        write_site(out, [SiteFile("index.html", b"x"), SiteFile("../evil", b"x")])
    assert (out / "index.html").read_bytes() == b"good"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build"]


def test_paths_clashing_but_for_case_skip_the_second_never_fail_the_build(tmp_path: Path) -> None:
    write_site(tmp_path / "build", [SiteFile("A.html", b"1"), SiteFile("a.html", b"2")])
    assert (tmp_path / "build" / "A.html").read_bytes() == b"1"
    assert not (tmp_path / "build" / "a.html").exists()


def test_recover_after_kill_between_renames(tmp_path: Path) -> None:
    out = tmp_path / "build"
    old = tmp_path / ".build.old-123"
    old.mkdir()
    (old / "index.html").write_bytes(b"good")
    recover(out)
    assert (out / "index.html").read_bytes() == b"good"


def test_messages_name_folders_from_the_project_root(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "a").write_text("a file where a folder should be")
    with pytest.raises(UsageError) as refused:
        check_writable(tmp_path / "out" / "a" / "site", tmp_path)
    assert "cannot create the output folder out/a/site: out/a is a file, not a folder" in str(refused.value)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "mine.txt").write_text("not a site")
    with caplog.at_level(logging.WARNING):
        remove_site(tmp_path / "notes", "notes/")
    assert (tmp_path / "notes" / "mine.txt").is_file()
    assert "notes/ was left alone" in caplog.text and str(tmp_path) not in caplog.text
