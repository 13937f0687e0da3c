"""The files of a run published beside an entry's page: what its demo wrote (figures, displays'
images, data files), and the figures another entry glued that its prose pastes.

``FilePublisher.of(files_dir)`` gives the ``publish`` function the page's views use: a file of
that run -> its URL from the page, or None (warned) when it cannot be published. The page's
own run publishes at the file's path; another entry's under ``_site_builder/glued/ENTRY/``, so
that no name of the page's own can clash with it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from site_builder.run.child.files import BUILDER_DIR
from site_builder.site.outputs.outcomes import unpublishable
from site_builder.site.pages.views import safe_rel_path
from site_builder.site.safety.svg import UnsafeSvgError, inert_svg
from site_builder.site.sitefiles import SiteFile

log = logging.getLogger(__name__)

GLUED_DIR = f"{BUILDER_DIR}/glued"  # another entry's files, beside the page that pastes them


@dataclass
class FilePublisher:
    """The files one page publishes, by their path beside it (``published``)."""

    entry: str  # the page's entry
    page_paths: set[str]  # the page's own files (index.html, downloads): never taken
    prefix: str = ""  # before every URL ("NAME/" on the home page, which shows an entry's page)
    published: dict[str, SiteFile] = field(default_factory=dict)

    def of(self, files_dir: Path, other: str = "") -> Callable[[str], str | None]:
        """``publish(rel)`` for the files of the run in ``files_dir`` (``other``: another entry's)."""
        under = f"{GLUED_DIR}/{other}/" if other else ""

        def publish(rel: str) -> str | None:
            safe = safe_rel_path(rel)
            why = unpublishable(files_dir, rel, safe, self.page_paths, self.published)
            if why:
                owner = f"the demo of {other}" if other else "the demo"
                log.warning("%s: the file %s %s wrote is not published: %s", self.entry, rel, owner, why)
                return None
            assert safe is not None
            path = under + safe
            if safe.lower().endswith(".svg"):  # opened on its own, an SVG runs its scripts
                try:
                    self.published[path] = SiteFile(path=f"{self.entry}/{path}", data=inert_svg(files_dir, safe))
                except UnsafeSvgError as exc:
                    log.warning("%s: the SVG file %s is not published: %s", self.entry, rel, exc)
                    return None
            else:
                self.published[path] = SiteFile(path=f"{self.entry}/{path}", source=files_dir / safe,
                                                root=files_dir)
            return self.prefix + quote(path)

        return publish
