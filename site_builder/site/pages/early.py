"""Entry pages rendered as each demo finishes, while the others still run.

A page needs only its own result and what every entry's parsed script says (titles, labels,
previous/next), all known before any demo runs; so the builder, idle while children run,
renders it then, and only the site-wide files are left once the last demo ends. render_site
takes an early page only when it was made from the very result and site it is given.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from site_builder.run.execute import RunResult
from site_builder.site.downloads.archives import Deflated, deflate, notebook_paths
from site_builder.site.pages.renderer import PageRenderer, neighbours
from site_builder.source.expressions.places import pastes_from_other_entries
from site_builder.site.logs import captured_records
from site_builder.site.sitefiles import EntryBuild, SiteFile, SiteInfo, ordered_builds

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EarlyPage:
    """One entry's files, rendered from ``result``, and what rendering them logged (held back)."""

    result: RunResult
    files: list[SiteFile]
    records: tuple[logging.LogRecord, ...]

    def say_records(self) -> None:
        """Log what rendering the page logged, now: in site order, as if it were rendered now."""
        for record in self.records:
            logging.getLogger(record.name).handle(record)


class EarlyPages:
    """The pages of one build rendered early; ``builds``: every entry of the site (any result)."""

    def __init__(self, info: SiteInfo, builds: list[EntryBuild], thumbnail_cache: Path | None = None) -> None:
        self.info = info
        self.renderer = PageRenderer(info, None, thumbnail_cache)
        ordered = ordered_builds(builds, info)
        self.renderer.site_entries(ordered)
        self.renderer.learn_labels(ordered)
        self.site = [(b.entry.name, b.script) for b in ordered]  # what the pages' links were made from
        self.neighbours = neighbours(ordered)
        self.pages: dict[str, EarlyPage] = {}
        self.deflated: dict[str, Deflated] = {}  # notebooks, by archive member, for the archive
        self.checked: list[EntryBuild] | None = None  # the last site page_for found the same as self.site

    def render(self, build: EntryBuild) -> None:
        """Render ``build``'s page now; a page that fails is left to render_site (which says why)."""
        name = build.entry.name
        if name not in self.neighbours or pastes_from_other_entries(build.script):
            return
        try:
            with captured_records(hold=True) as held:
                files = self.renderer.entry_files(build, *self.neighbours[name])
        except Exception:  # the final render raises it where a build always has
            log.debug("%s: not rendered early", name, exc_info=True)
            return
        self.pages[name] = EarlyPage(build.result, files, tuple(held))
        site_path, member = notebook_paths(build)
        for file in files:
            if file.path == site_path and file.data is not None:
                self.deflated[member] = deflate(file.data)

    def page_for(self, build: EntryBuild, info: SiteInfo, ordered: list[EntryBuild]) -> EarlyPage | None:
        """The early page of ``build`` when it was made from this result, settings and site, else None;
        taken: these pages hold it no longer (its files go where render_site keeps them)."""
        page = self.pages.pop(build.entry.name, None)
        if page is None or page.result is not build.result or info is not self.info:
            return None
        # compared once per site (render_site asks for each of its entries with the same list)
        if ordered is not self.checked:
            if self.site != [(b.entry.name, b.script) for b in ordered]:
                self.pages.clear()  # another site: none of them holds
                return None
            self.checked = ordered
        return page
