"""Render stage: entries, their parsed scripts and run results -> the site's files in memory.

Jinja2 templates hold the markup (``templates/``), Pygments highlights the code and
Python-Markdown renders the prose.  Nothing is written to disk here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from site_builder.blocks import Script
from site_builder.entries import Entry
from site_builder.execute import RunResult


@dataclass(frozen=True)
class EntryBuild:
    """One entry with everything known about it: source, parsed script, run result."""

    entry: Entry
    script: Script
    result: RunResult


@dataclass(frozen=True)
class SiteFile:
    """One file of the site: literal bytes, or an existing file to copy as is."""

    path: str  # POSIX path inside the site folder, e.g. "attention/index.html"
    data: bytes | None = None
    source: Path | None = None


@dataclass(frozen=True)
class SiteInfo:
    """Site-wide settings the templates need."""

    title: str = "Dictionary of Applied Machine Learning"
    site_url: str | None = None  # e.g. "https://example.org/dictionary/"; None: no sitemap


def render_site(builds: list[EntryBuild], info: SiteInfo) -> list[SiteFile]:
    """Return every file of the site (pages, downloads, artifacts, static assets)."""
    raise NotImplementedError
