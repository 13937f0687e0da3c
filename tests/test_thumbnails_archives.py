"""The index's thumbnails (made once per figure, cached, a placeholder without figures) and
its "Download all" archives (every script, every notebook, reproducible byte for byte)."""

from __future__ import annotations

import io
import json
import re
import shutil
import struct
import zipfile
from pathlib import Path

import nbformat
import pytest

from tests.conftest import REPO, copy_of, run_cli, shared_folder, write_demo

PLOTS = '''
"""plots.py — two figures, the second one named as the thumbnail.

Purpose
-------
Show thumbnails.
"""
# sphinx_gallery_thumbnail_number = 2
import matplotlib.pyplot as plt

# %% B-first
plt.figure(figsize=(4, 3))
plt.plot([0, 1], [0, 1])

# %% B-second
plt.figure(figsize=(6, 2))
plt.bar([1, 2, 3], [3, 1, 2], color="tab:red")
'''

TEXT = '''
"""text.py — prints only.

Purpose
-------
No figure.
"""
# %% B-only
print("no figure here")
'''


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def thumbnail_tags(index: str) -> dict[str, str]:
    """Entry name -> the <img> or placeholder markup before its link."""
    items = re.findall(r'<li class="entry-item with-thumbnail" data-name="([^"]+)">(<[^>]+>)', index)
    return dict(items)


def build_project(project: Path) -> None:
    """This module's shared project, built in ``project``."""
    write_demo(project, "plots", PLOTS)
    write_demo(project, "text", TEXT)
    write_demo(project, "more/text", TEXT)
    result = run_cli("build", cwd=project)
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_folder(tmp_path_factory, "thumbnails-archives", build_project)


def test_index_shows_the_named_figure_as_a_small_lazy_image(project: Path) -> None:
    site = project / "build"
    tags = thumbnail_tags((site / "index.html").read_text())
    found = re.fullmatch(r'<img class="thumbnail" src="(_thumbnails/[0-9a-f]{32}\.png)" '
                         r'width="(\d+)" height="(\d+)" loading="lazy" alt="">', tags["plots"])
    assert found, tags["plots"]
    data = (site / found.group(1)).read_bytes()
    width, height = png_size(data)
    assert (width, height) == (int(found.group(2)), int(found.group(3)))
    assert width <= 320 and height <= 224
    assert width / height > 2.5  # the wide second figure (6 x 2), not the first (4 x 3)
    assert tags["text"] == '<span class="thumbnail thumbnail-none" aria-hidden="true">'
    assert tags["more/text"] == tags["text"]


def test_thumbnails_are_cached_and_not_made_again(project: Path, tmp_path: Path) -> None:
    project = copy_of(project, tmp_path)
    cached = list((project / "_freeze" / ".cache" / "thumbnails").glob("*.png"))
    assert len(cached) == 1
    # A cached thumbnail is used as it is: replace it, re-render the index, and see it published.
    marker = cached[0].read_bytes() + b"cached-marker"
    cached[0].write_bytes(marker)
    (project / "pyproject.toml").write_text('[tool.site_builder]\ntitle = "Another title"\n')
    result = run_cli("build", cwd=project)
    assert result.returncode == 0, result.stderr
    published = list((project / "build" / "_thumbnails").glob("*.png"))
    assert [p.read_bytes() for p in published] == [marker]


def test_the_demos_process_makes_the_thumbnail_the_figure_would_give(project: Path, tmp_path: Path) -> None:
    from site_builder.site.outputs.thumbnails import _make

    figure = (project / "_freeze" / "plots" / "_site_builder" / "B-second-figure-1.png").read_bytes()
    assert not list((project / "_freeze").rglob("*.thumbnail.png"))  # taken into the cache by the build
    published = list((project / "build" / "_thumbnails").glob("*.png"))
    assert [p.read_bytes() for p in published] == [_make(figure)]  # the same bytes as made from the PNG
    # A shard's build leaves the one its demo made in the record, for the build that assembles the site.
    copy = copy_of(project, tmp_path)
    shutil.rmtree(copy / "_freeze" / "plots")
    shutil.rmtree(copy / "_freeze" / ".cache")
    assert run_cli("build", "--shard", "1/1", cwd=copy).returncode == 0
    made = copy / "_freeze" / "plots" / "_site_builder" / "B-second-figure-1.thumbnail.png"
    figure = (copy / "_freeze" / "plots" / "_site_builder" / "B-second-figure-1.png").read_bytes()
    assert made.read_bytes() == _make(figure)
    assert [p.name for p in (copy / "_freeze").rglob("*.thumbnail.png")] == [made.name]  # the named figure's only
    # The build that assembles the site reads it as data, like every record: a thumbnail planted
    # there is never published; the figure's own pixels give the same bytes as the demo's process.
    made.write_bytes(b"\x89PNG\r\n\x1a\nplanted, not the figure's thumbnail")
    assert run_cli("build", "--frozen", cwd=copy).returncode == 0
    assert [p.read_bytes() for p in (copy / "build" / "_thumbnails").glob("*.png")] == [_make(figure)]


def test_without_pillow_the_full_figure_is_scaled_by_the_page(project: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(project / "demos", copy / "demos")
    shutil.copytree(project / "_freeze", copy / "_freeze", ignore=shutil.ignore_patterns(".cache"))
    fake = tmp_path / "fake"  # a PIL that cannot be imported, as where Matplotlib is not installed
    (fake / "PIL").mkdir(parents=True)
    (fake / "PIL" / "__init__.py").write_text("raise ImportError('no Pillow here')\n")
    result = run_cli("build", "--frozen", cwd=copy, env={"PYTHONPATH": f"{fake}:{REPO}"})
    assert result.returncode == 0, result.stderr
    tags = thumbnail_tags((copy / "build" / "index.html").read_text())
    found = re.fullmatch(r'<img class="thumbnail" src="(plots/_site_builder/B-second-figure-1\.png)" '
                         r'width="(\d+)" height="(\d+)" loading="lazy" alt="">', tags["plots"])
    assert found, tags["plots"]
    assert (copy / "build" / found.group(1)).is_file() and int(found.group(2)) <= 320
    assert not (copy / "build" / "_thumbnails").exists()


def test_download_all_archives_hold_every_script_and_notebook(project: Path) -> None:
    site = project / "build"
    index = (site / "index.html").read_text()
    assert '<a href="_downloads/scripts.zip" download>' in index
    assert '<a href="_downloads/notebooks.zip" download>' in index
    with zipfile.ZipFile(site / "_downloads" / "scripts.zip") as scripts:
        assert scripts.namelist() == ["more/text.py", "plots.py", "text.py"]
        assert scripts.read("plots.py") == (project / "demos" / "plots.py").read_bytes()
        assert {i.external_attr >> 16 for i in scripts.infolist()} == {0o100644}
        assert {i.date_time for i in scripts.infolist()} == {(1980, 1, 1, 0, 0, 0)}
    with zipfile.ZipFile(site / "_downloads" / "notebooks.zip") as notebooks:
        assert notebooks.namelist() == ["more/text.ipynb", "plots.ipynb", "text.ipynb"]
        assert notebooks.read("more/text.ipynb") == (site / "more" / "text" / "text.ipynb").read_bytes()
        assert json.loads(notebooks.read("plots.ipynb"))["nbformat"] == 4
        nbformat.validate(nbformat.reads(notebooks.read("plots.ipynb").decode(), as_version=4))  # figures' outputs


def test_archives_are_byte_identical_across_builds(project: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(project / "demos", copy / "demos")
    shutil.copytree(project / "_freeze", copy / "_freeze", ignore=shutil.ignore_patterns(".cache"))
    env = {"SOURCE_DATE_EPOCH": "1700000000"}
    first = run_cli("build", "--frozen", cwd=copy, env=env)
    assert first.returncode == 0, first.stderr
    saved = {n: (copy / "build" / "_downloads" / n).read_bytes() for n in ("scripts.zip", "notebooks.zip")}
    shutil.rmtree(copy / "build")
    second = run_cli("build", "--frozen", cwd=copy, env=env)
    assert second.returncode == 0, second.stderr
    for name, data in saved.items():
        assert (copy / "build" / "_downloads" / name).read_bytes() == data, name
    with zipfile.ZipFile(io.BytesIO(saved["scripts.zip"])) as scripts:
        assert scripts.infolist()[0].date_time == (2023, 11, 14, 22, 13, 20)


def test_archives_are_the_bytes_zipfile_writes_with_notebooks_deflated_while_demos_ran(project: Path) -> None:
    # The notebooks of a cold build are deflated as each page renders, the archive assembled
    # at the end: the same bytes as zipfile's, member for member.
    from site_builder.site.downloads.archives import zipfile_zip

    for name in ("scripts.zip", "notebooks.zip"):
        data = (project / "build" / "_downloads" / name).read_bytes()
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = {n: archive.read(n) for n in archive.namelist()}
        assert data == zipfile_zip(members), name


def test_an_archive_is_zipfiles_bytes_for_any_member(monkeypatch: pytest.MonkeyPatch) -> None:
    from site_builder.site.downloads.archives import zipfile_zip, deflate, reproducible_zip

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000001")  # an odd second: DOS time holds two
    members = {"b/été.ipynb": "données".encode() * 500, "a.py": b"", "z.py": bytes(range(256)) * 300}
    expected = zipfile_zip(members)
    with zipfile.ZipFile(io.BytesIO(expected)) as archive:
        assert {i.date_time for i in archive.infolist()} == {(2023, 11, 14, 22, 13, 20)}  # DOS time: even seconds
    assert reproducible_zip(members) == expected
    stale = {"a.py": deflate(b"print('before the edit')\n"), "z.py": deflate(members["z.py"])}
    assert reproducible_zip(members, stale) == expected  # a member deflated from other bytes is deflated again
    monkeypatch.setattr("site_builder.site.downloads.archives._ZIP64_LIMIT", 1000)  # as if 2 GB: zipfile writes it
    assert reproducible_zip(members) == expected
    with zipfile.ZipFile(io.BytesIO(expected)) as archive:
        assert archive.testzip() is None
        assert archive.read("b/été.ipynb") == members["b/été.ipynb"]


def test_a_published_archive_lends_its_members_to_the_next_one(tmp_path: Path) -> None:
    """The members read back from a published archive give the bytes of one made afresh; a
    member whose bytes changed is deflated again, and a damaged archive lends nothing."""
    from site_builder.site.downloads.archives import published_members, reproducible_zip

    members = {"b/été.py": "données".encode() * 500, "a.py": b"", "z.py": bytes(range(256)) * 300}
    published = tmp_path / "scripts.zip"
    published.write_bytes(reproducible_zip(members))
    lent = published_members(published)
    assert {name: m.data for name, m in lent.items()} == members
    edited = {**members, "a.py": b"print('after the edit')\n", "new.py": b"x = 1\n"}
    assert reproducible_zip(edited, lent) == reproducible_zip(edited)
    raw = bytearray(published.read_bytes())
    raw[raw.index(b"PK\x01\x02") - 5] ^= 0xFF  # inside z.py's deflated bytes
    published.write_bytes(bytes(raw))
    assert published_members(published) == {}
    published.write_bytes(b"not a zip")
    assert published_members(published) == {}


def test_a_published_archive_known_by_its_digest_lends_its_unchanged_members_as_stored(tmp_path: Path) -> None:
    """An archive the last build wrote (its saved digest) lends the members said unchanged as they
    are stored, giving the bytes of an archive made afresh; with another digest, or another size
    said, every member is inflated and checked as before (the state is data)."""
    from site_builder.site.downloads.archives import (
        PublishedArchive, archive_digest, published_members, reproducible_zip,
    )

    members = {"b/été.py": "données".encode() * 500, "a.py": b"", "z.py": bytes(range(256)) * 300}
    published = tmp_path / "scripts.zip"
    published.write_bytes(reproducible_zip(members))
    sizes = {name: len(data) for name, data in members.items()}
    lent = published_members(PublishedArchive(published, archive_digest(published.read_bytes()), sizes))
    edited = {**members, "a.py": b"print('after the edit')\n", "new.py": b"x = 1\n"}
    taken = {**edited, "b/été.py": lent["b/été.py"], "z.py": lent["z.py"]}
    assert reproducible_zip(taken, lent) == reproducible_zip(edited)
    inflated = published_members(published)
    for digest in ("0" * 64, archive_digest(b"")):  # not the archive's: each member inflated and checked
        assert published_members(PublishedArchive(published, digest, sizes)) == inflated
    wrong_size = published_members(PublishedArchive(published, archive_digest(published.read_bytes()),
                                                    {**sizes, "z.py": 1}))
    assert wrong_size["z.py"] == inflated["z.py"]


@pytest.mark.parametrize("edit", ["first", "middle", "last", "grown", "shrunk", "added", "removed", "renamed"])
def test_an_archive_made_from_a_published_one_is_the_archive_made_afresh(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: str) -> None:
    """The unchanged members of the archive the last build wrote are copied from it, runs of them
    at once, around the members edited, added or removed: the archive has the bytes of one made
    afresh; published with another timestamp, its members' records are written anew."""
    from site_builder.site.downloads.archives import (
        PublishedArchive, archive_digest, published_members, reproducible_zip, zipfile_zip,
    )

    members = {f"{'ü/' if i % 7 == 3 else ''}demo{i:02d}.py": f"print({i})\n".encode() * (i + 1) for i in range(40)}
    names = sorted(members)
    edited = dict(members)
    if edit in ("first", "middle", "last"):
        name = names[{"first": 0, "middle": 20, "last": -1}[edit]]
        edited[name] = edited[name].replace(b"print", b"PRINT")  # the same size: no record moves
    elif edit in ("grown", "shrunk"):
        edited[names[20]] = edited[names[20]] * 3 if edit == "grown" else b""  # every later record moves
    elif edit == "added":
        edited["demo20a.py"] = b"x = 1\n"
    elif edit == "removed":
        del edited[names[20]]
    else:
        edited["demo99.py"] = edited.pop(names[0])
    published = tmp_path / "scripts.zip"
    for stamp in ("1700000000", "1600000000"):  # the last build's timestamp, then another one
        monkeypatch.setenv("SOURCE_DATE_EPOCH", stamp)
        published.write_bytes(reproducible_zip(members))
        monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
        digest = archive_digest(published.read_bytes())
        unchanged = {name: len(data) for name, data in members.items() if edited.get(name) == data}
        lent = published_members(PublishedArchive(published, digest, unchanged))
        taken = {name: lent[name] if name in unchanged else data for name, data in edited.items()}
        assert reproducible_zip(taken, lent) == zipfile_zip(edited) == reproducible_zip(edited), stamp
        with zipfile.ZipFile(io.BytesIO(reproducible_zip(taken, lent))) as archive:
            assert archive.testzip() is None
            assert {name: archive.read(name) for name in archive.namelist()} == edited


def test_a_published_member_inflating_past_its_stated_size_is_never_inflated_whole(tmp_path: Path) -> None:
    """The published folder is data: a member whose deflated bytes hold far more than its stated
    size (8 MB of zeros said to be 10 bytes) lends nothing, and is not inflated past that size."""
    import struct
    import tracemalloc

    from site_builder.site.downloads.archives import published_members, reproducible_zip

    published = tmp_path / "scripts.zip"
    raw = bytearray(reproducible_zip({"bomb.py": bytes(8 << 20)}))
    struct.pack_into("<I", raw, raw.index(b"PK\x01\x02") + 24, 10)  # the central directory's size
    published.write_bytes(bytes(raw))
    tracemalloc.start()
    try:
        assert published_members(published) == {}
        assert tracemalloc.get_traced_memory()[1] < 1 << 20
    finally:
        tracemalloc.stop()
