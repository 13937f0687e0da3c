"""The one rule for the files prose shows as images, whatever the prose's format.

Markdown's ``![alt](src)``, MyST's ``{image}`` and ``{figure}``, reST's ``.. image::`` and
``.. figure::`` all name a file by a path; prose is data, so that path may name anything of
the entry's folder.  A file is published (under ``<entry>/_images/``) only when it is an
image by its extension and by its content, the same kind by both (PNG, JPEG, GIF, WebP and
AVIF by their magic bytes; SVG parsed and written anew by the SVG sanitiser), a regular file
reached without following a link, and neither hidden nor inside a hidden folder.  Anything
else is a warning naming the entry and the path; the page shows the image's alt text.
A notebook cell's attachments (``attachment:NAME``) follow the same rule: published when their
content is the image their MIME type says, under a name made of their content's hash.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
import posixpath
from dataclasses import dataclass, field
from urllib.parse import quote, unquote, urlsplit

from site_builder.fs import UnsafeFileError, UnsafePathError, open_regular
from site_builder.site.safety.svg import UnsafeSvgError, clean_svg, inert_svg
from site_builder.site.sitefiles import SiteFile
from site_builder.source.entries import Entry

log = logging.getLogger(__name__)

IMAGES_DIR = "_images"  # where an entry's prose images go, beside its page
# The kind of image each extension names.
IMAGE_EXTENSIONS = {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG", ".jpe": "JPEG", ".gif": "GIF",
                    ".webp": "WebP", ".avif": "AVIF", ".svg": "SVG"}
# The kind of image each MIME type of a notebook's attachments names, and the extension it gets.
ATTACHMENT_KINDS = {"image/png": ("PNG", ".png"), "image/jpeg": ("JPEG", ".jpg"), "image/gif": ("GIF", ".gif"),
                    "image/webp": ("WebP", ".webp"), "image/avif": ("AVIF", ".avif"),
                    "image/svg+xml": ("SVG", ".svg")}
ATTACHMENTS_DIR = "attachments"  # below IMAGES_DIR: an attachment's file is named by its content's hash
# Videos a page links to (Quarto's {{< video >}}), checked the same way.
VIDEO_EXTENSIONS = {".mp4": "MP4", ".m4v": "MP4", ".webm": "WebM"}
_HEAD_BYTES = 32
_SHOWN_SRC = 80  # characters of a refused image's path a warning shows


def image_kind(head: bytes) -> str | None:
    """The kind of raster image ``head`` (a file's first bytes) starts, by its magic bytes; None for others."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "PNG"
    if head.startswith(b"\xff\xd8\xff"):
        return "JPEG"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "GIF"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WebP"
    # ISO BMFF: a "ftyp" box whose major brand is AVIF's (a still image or a sequence)
    if head[4:8] == b"ftyp" and head[8:12] in (b"avif", b"avis"):
        return "AVIF"
    if head[4:8] == b"ftyp":  # any other ISO BMFF brand: an MP4 movie (isom, mp41, mp42, avc1...)
        return "MP4"
    if head.startswith(b"\x1a\x45\xdf\xa3"):  # Matroska/EBML
        return "WebM"
    return None


def local_image_path(src: str) -> str | None:
    """``src`` (an image reference as prose writes it) as a path relative to the entry's
    folder, or None when it names none: remote, absolute, another scheme, or leaving it."""
    if not src or urlsplit(src).scheme or src.startswith(("/", "\\")) or "\\" in src:
        return None
    path = posixpath.normpath(unquote(src.split("#")[0].split("?")[0]))
    return None if path.startswith("..") or path == "." else path


def is_remote(src: str) -> bool:
    """An image from the web: shown as a link to it (the page loads nothing from elsewhere)."""
    return urlsplit(src.strip()).scheme in ("http", "https")


@dataclass
class ProseImages:
    """The images one entry's prose shows, published as its page renders (``files``: by path in the folder)."""

    entry: Entry
    files: dict[str, SiteFile] = field(default_factory=dict)
    refused: set[str] = field(default_factory=set)  # said once per page

    def publish(self, src: str, kinds: dict[str, str] = IMAGE_EXTENSIONS) -> str | None:
        """The URL (from the page) of the image ``src`` names, published; None, with a warning
        naming the entry and the path, when it is not an image this site publishes
        (``kinds``: VIDEO_EXTENSIONS for a video's file)."""
        if is_remote(src):
            return None  # the prose renderers make it a link
        rel = local_image_path(src)
        if rel in self.files:
            return f"{IMAGES_DIR}/{quote(rel)}"
        if src in self.refused:
            return None
        why = self._refusal(src, rel, kinds)
        if why:
            self.refused.add(src)
            shown = src if len(src) <= _SHOWN_SRC else src[:_SHOWN_SRC - 1] + "…"  # a data: URL is long
            log.warning("%s: the image %s of its prose is not published: %s", self.entry.name, shown, why)
            return None
        return f"{IMAGES_DIR}/{quote(rel)}"

    def publish_attachment(self, name: str, mime: str, data: str) -> str | None:
        """The URL (from the page) of the attachment ``name`` of a Markdown cell (its MIME type
        and data), published; None, with a warning, when it is not an image this site publishes."""
        content, why = attachment_content(mime, data)
        if content is None:
            shown = name if len(name) <= _SHOWN_SRC else name[:_SHOWN_SRC - 1] + "…"
            if f"attachment:{shown}" not in self.refused:
                self.refused.add(f"attachment:{shown}")
                log.warning("%s: the image attachment:%s of its prose is not published: %s",
                            self.entry.name, shown, why)
            return None
        rel = f"{ATTACHMENTS_DIR}/{hashlib.sha256(content).hexdigest()[:20]}{ATTACHMENT_KINDS[mime][1]}"
        self.files[rel] = SiteFile(path=f"{self.entry.name}/{IMAGES_DIR}/{rel}", data=content)
        return f"{IMAGES_DIR}/{rel}"

    def _refusal(self, src: str, rel: str | None, kinds: dict[str, str] = IMAGE_EXTENSIONS) -> str | None:
        """Why the file ``rel`` of the entry's folder is not published as an image (None: it is, now)."""
        folder = self.entry.path.parent
        if rel is None and src.startswith("attachment:"):
            return "only a notebook's Markdown cells have attachments"
        if rel is None and src.startswith("data:"):
            return "an image written into the prose (a data: URL) is not published (only image files of the entry's folder are)"
        if rel is None:
            return "only images of the entry's folder (or from the web, shown as links) are shown"
        if any(part.startswith(".") for part in rel.split("/")):
            return "hidden files (names starting with '.', such as .htaccess) are never published"
        for other in self.files:  # some hosts cannot tell them apart
            if other.lower() == rel.lower():
                return f"its name differs only in case from {other}, published already"
        wanted = kinds.get(posixpath.splitext(rel)[1].lower())
        if wanted is None:
            return f"it is not {'a video' if kinds is VIDEO_EXTENSIONS else 'an image'} ({', '.join(sorted(set(kinds.values())))} are)"
        try:
            with open_regular(folder, rel) as f:  # a regular file, reached without following a link
                head = f.read(_HEAD_BYTES)
        except UnsafeFileError as exc:
            return exc.reason
        except (OSError, UnsafePathError) as exc:
            return f"it cannot be read ({exc})"
        site_path = f"{self.entry.name}/{IMAGES_DIR}/{rel}"
        if wanted == "SVG":
            try:
                self.files[rel] = SiteFile(path=site_path, data=inert_svg(folder, rel))
            except UnsafeSvgError as exc:
                return f"it is not an SVG image this site can publish: {exc}"
            return None
        found = image_kind(head)
        if found != wanted:
            what = "video" if kinds is VIDEO_EXTENSIONS else "image"
            return f"its content is not a {wanted} {what}" + (f" but {found}" if found else "")
        self.files[rel] = SiteFile(path=site_path, source=folder / rel, root=folder)
        return None


def attachment_content(mime: str, data: str) -> tuple[bytes | None, str]:
    """The bytes to publish of an attachment (SVG made inert), or None and why not."""
    if not mime:
        return None, "the cell has no attachment of that name with an image type (PNG, JPEG, GIF, WebP, AVIF, SVG)"
    wanted = ATTACHMENT_KINDS[mime][0]
    if wanted == "SVG":
        try:
            return clean_svg(data.encode("utf-8", "replace")), ""
        except UnsafeSvgError as exc:
            return None, f"it is not an SVG image this site can publish: {exc}"
    try:
        content = base64.b64decode(data)
    except (binascii.Error, ValueError):
        return None, f"its {mime} data is not base64"
    found = image_kind(content[:_HEAD_BYTES])
    if found != wanted:
        return None, f"its content is not a {wanted} image" + (f" but {found}" if found else "")
    return content, ""
