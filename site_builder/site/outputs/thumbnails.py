"""Thumbnails for the index: one small PNG per entry, made from one of its figures.

The figure is the first one the demo made, or the one ``# sphinx_gallery_thumbnail_number = N``
names (1-based; negative counts from the last).  A thumbnail is made once per figure
content: it is cached in the records' cache folder (``_freeze/.cache/thumbnails/``) under
the figure's sha256, and published as ``_thumbnails/SHA.png``.  The demo's process makes it
from the pixels it has (run/child/outputs/figures.py) and writes it beside the figure; the
build that ran the demo moves it into the cache.  Otherwise (a figure counted from the end,
an animation's poster, a build from records, which are never trusted) it is made here from
the figure's PNG: the same bytes.

Making one needs Pillow (which Matplotlib brings).  Without it (a ``--frozen`` build on a
machine without Matplotlib) the index shows the full figure, scaled down by the page's CSS.
"""

from __future__ import annotations

import hashlib
import io
import logging
import struct
from dataclasses import dataclass
from pathlib import Path

from site_builder.fs import (
    UnsafeFileError,
    UnsafePathError,
    make_dirs,
    note_write,
    open_regular,
    safe_join,
    write_atomic,
    write_failure,
)
from site_builder.run.child.outputs.figures import THUMBNAIL_BOX, thumbnail_path, thumbnail_png
from site_builder.run.execute import Artifact
from site_builder.site.sitefiles import EntryBuild, SiteFile

log = logging.getLogger(__name__)

THUMBNAIL_DIR = "_thumbnails"  # in the site; never an entry name (names start with a letter or digit)
THUMBNAIL_VERSION = 3  # bump when the way thumbnails are made changes: the cached ones are then remade


@dataclass(frozen=True)
class Thumbnail:
    """An entry's picture on the index: a site path (relative to the index) and its size."""

    src: str
    width: int
    height: int


def chosen_figure(build: EntryBuild, warn: bool = True) -> Artifact | None:
    """The figure of ``build`` its thumbnail shows, or None when it made no figure; ``warn``
    about a thumbnail number past its figures."""
    figures = [a for b in build.result.blocks for a in b.artifacts if a.kind == "figure"]
    if not figures:
        return None
    number = build.script.thumbnail_number or 1
    index = number - 1 if number > 0 else len(figures) + number
    if not 0 <= index < len(figures):
        if warn:
            log.warning("%s: sphinx_gallery_thumbnail_number = %d, but it made %d figure(s): "
                        "the index shows the first", build.entry.name, number, len(figures))
        index = 0
    return figures[index]


def _png_size(data: bytes) -> tuple[int, int] | None:
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", data[16:24])


def _scaled(width: int, height: int, box: tuple[int, int]) -> tuple[int, int]:
    scale = min(box[0] / width, box[1] / height, 1.0)
    return max(1, round(width * scale)), max(1, round(height * scale))


def _make(figure: bytes) -> bytes | None:
    """The thumbnail PNG of the PNG ``figure``; None without Pillow or for an unreadable image."""
    try:
        from PIL import Image  # with Matplotlib; a frozen build may not have it
    except ImportError:
        return None
    try:
        with Image.open(io.BytesIO(figure)) as image:
            # An opaque figure stays RGB: resizing and encoding three channels, not four, is
            # 40% of the thumbnail's time (benchmarks/figures.py).
            alpha = image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info
            mode = "RGBA" if alpha else "RGB"
            if image.mode != mode:  # (the same mode would only copy the pixels: 4 ms of 2x figure)
                image = image.convert(mode)
            return thumbnail_png(image)
    except (OSError, ValueError) as exc:
        log.debug("no thumbnail: %s", exc)
        return None


def _made_by_demo(files_dir: Path, made: str) -> bytes | None:
    """The thumbnail the demo's process made at ``made``, when it made one."""
    try:
        with open_regular(files_dir, made) as f:
            return f.read()
    except (UnsafeFileError, UnsafePathError, OSError):
        return None


class Thumbnails:
    """Makes (or finds in the cache) the thumbnails of one site and lists their files."""

    def __init__(self, cache: Path | None) -> None:
        self.cache = cache / "thumbnails" if cache else None
        self.files: dict[str, SiteFile] = {}

    def of(self, build: EntryBuild, warn: bool = True, adopt: bool = False) -> Thumbnail | None:
        """The thumbnail of ``build``'s chosen figure; the figure itself when none can be made.
        ``adopt``: the demo has just run, and the thumbnail its process made leaves its record
        for the cache."""
        figure = chosen_figure(build, warn)
        if figure is None:
            return None
        try:
            data = (build.result.files_dir / figure.path).read_bytes()
        except OSError:
            return None
        sha = hashlib.sha256(data).hexdigest()
        made = thumbnail_path(figure.path)
        # Only a demo that has just run in this build made what lies there; a record's copy is
        # data, never published unchecked: the thumbnail is then made from the figure again.
        by_demo = _made_by_demo(build.result.files_dir, made) if adopt else None
        thumbnail = self._cached(sha) or self._store(sha, by_demo or _make(data))
        if adopt and by_demo is not None and self.cache is not None:
            self._adopted(build, made)
        size = _png_size(thumbnail) if thumbnail else None
        if thumbnail is None or size is None:
            if not (figure.width and figure.height):
                return None
            # The full figure, scaled by the page: it is published beside the entry's page anyway.
            width, height = _scaled(figure.width, figure.height, THUMBNAIL_BOX)
            return Thumbnail(f"{build.entry.name}/{figure.path}", width, height)
        path = f"{THUMBNAIL_DIR}/{sha[:32]}.png"
        self.files[path] = SiteFile(path, data=thumbnail)
        return Thumbnail(path, *size)

    def _cached(self, sha: str) -> bytes | None:
        if self.cache is None:
            return None
        try:
            return (self.cache / f"{sha}-{THUMBNAIL_VERSION}.png").read_bytes()
        except OSError:
            return None

    def _adopted(self, build: EntryBuild, made: str) -> None:
        """Take the demo's thumbnail out of its record, now that the cache holds it: a record
        stays what it was before the demo's process made thumbnails."""
        path = safe_join(build.result.files_dir, made)
        try:
            note_write(path)
            path.unlink(missing_ok=True)
        except OSError as exc:  # as for the cache: a failing disk fails the build here
            assert self.cache is not None
            shown = f"{self.cache.parent.parent.name}/{build.entry.name}/"
            raise write_failure(exc, "taking the demo's thumbnail from its record", shown) from None

    def _shown(self) -> str:
        assert self.cache is not None
        return f"{self.cache.parent.parent.name}/{self.cache.parent.name}/{self.cache.name}/"

    def _store(self, sha: str, thumbnail: bytes | None) -> bytes | None:
        if thumbnail is None or self.cache is None:
            return thumbnail
        target = self.cache / f"{sha}-{THUMBNAIL_VERSION}.png"
        try:
            make_dirs(self.cache)
            write_atomic(target, thumbnail)  # whole or absent, even if the build is killed
        except OSError as exc:  # a full disk fails the build here, not later with less said
            raise write_failure(exc, "caching a thumbnail", self._shown()) from None
        return thumbnail


def prepare(build: EntryBuild, cache: Path) -> None:
    """Make ``build``'s thumbnail into ``cache`` now: the build calls this as each demo ends,
    while others still run, so the index finds it made (60 figures: 1.5 s off the end)."""
    Thumbnails(cache).of(build, warn=False, adopt=True)  # the render says the warnings
