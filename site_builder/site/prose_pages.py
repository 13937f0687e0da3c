"""The site-wide side of MyST prose: every page's labels, and one page's prose context.

A ``{ref}`` may name a label of any entry, so render_site reads all labels before it
renders a page (myst_scan.collect_labels: no rendering). Images a page's prose shows are
files of its entry's folder, published under ``<entry>/_images/``.
"""

from __future__ import annotations

import logging
from pathlib import PurePosixPath
from urllib.parse import quote

from site_builder.fs import UnsafeFileError, UnsafePathError, open_regular
from site_builder.site.myst_scan import Label, PageProse, collect_labels
from site_builder.site.sitefiles import EntryBuild, SiteFile
from site_builder.source.entries import Entry

log = logging.getLogger(__name__)


def _doc_path(entry: Entry) -> str:
    """What a ``{doc}`` names the entry by: its source path without the suffix ("demos/basics/plot")."""
    return str(PurePosixPath(entry.rel_path).with_suffix(""))


def site_labels(pages: list[tuple[EntryBuild, str]]) -> tuple[dict[str, Label], dict[str, tuple[str, str]]]:
    """The labels and documents of the site, from each (build, page title).

    A label defined twice links to its first page (Sphinx warns and does the same).
    """
    labels: dict[str, Label] = {}
    docs: dict[str, tuple[str, str]] = {}
    for build, title in pages:
        name = build.entry.name
        docs.setdefault(_doc_path(build.entry), (name, title))
        if build.script.prose != "markdown":
            continue
        texts = [c.text for c in build.script.cells if c.kind == "markdown"]
        for label_name, label in collect_labels(name, texts).items():
            labels.setdefault(label_name, label)
    return labels, docs


def prose_page(entry: Entry, root: str, labels: dict[str, Label], docs: dict[str, tuple[str, str]]
               ) -> tuple[PageProse, dict[str, SiteFile]]:
    """The prose context of ``entry``'s page (``root``: from it to the site's root), and the
    images of its folder its prose shows, filled in as the page renders."""
    images: dict[str, SiteFile] = {}
    folder = entry.path.parent

    def publish_image(rel: str) -> str | None:
        try:
            open_regular(folder, rel).close()  # a regular file of the entry's folder, no link followed
        except (UnsafeFileError, UnsafePathError) as exc:
            log.warning("%s: the image %s of its prose is not published: %s", entry.name, rel, exc)
            return None
        images[rel] = SiteFile(path=f"{entry.name}/_images/{rel}", source=folder / rel, root=folder)
        return f"_images/{quote(rel)}"

    return PageProse(entry.name, _doc_path(entry), root, labels, docs, publish_image), images
