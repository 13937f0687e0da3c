"""Render stage: entries, their parsed scripts and run results -> the site's files in memory.

Entry pages come from ``renderer`` (those ``early`` made while demos ran are taken as they
are); this module adds the site-wide files: the index, the timings and API pages, the
references' pages, static assets, the sitemap.  Nothing is written to disk here.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from pathlib import Path

from markupsafe import Markup

from site_builder.source.parsed import Script
from site_builder.source.docstring import rst_head
from site_builder.source.entries import Section
from site_builder.site.formatting import format_duration, format_size, join_words  # noqa: F401 (re-exported)
from site_builder.site.downloads.archives import NOTEBOOKS_ZIP, SCRIPTS_ZIP
from site_builder.site.downloads.notebook import prepare_notebooks
from site_builder.site.publish.spool import Spool
from site_builder.site.publish.swap import site_mark
from site_builder.site.outputs.interactive import plotly_files, records_plotly
from site_builder.site.prose import html as prose
from site_builder.site.pages.api_index import API_PAGE, API_USAGE, api_groups, api_usage_json
from site_builder.site.prose.links import ProseLinks
from site_builder.site.prose.markdown.context import PageContext
from site_builder.site.pages.reference_pages import reference_files
from site_builder.site.pages.views import LetterGroup, letter_groups
from site_builder.site.pages.views import block_anchors
from site_builder.site.pages.views import csv_preview  # noqa: F401 (re-exported)
from site_builder.site.sitefiles import TEMPLATES_DIR, EntryBuild, SiteFile, SiteInfo  # noqa: F401 (re-exported)
from site_builder.site.sitefiles import home_build, is_section_home, ordered_builds
from site_builder.site.pages.timings import block_timings, entry_timings
from site_builder.site.pages.theme import pygments_css
from site_builder.site.pages.early import EarlyPages
from site_builder.site.pages.renderer import PageRenderer, neighbours


def stylesheet() -> bytes:
    # Background and token colours only: layout of .linenos lives in site.css.
    css = (TEMPLATES_DIR / "static" / "site.css").read_text(encoding="utf-8")
    return f"{css.rstrip()}\n\n{pygments_css()}".encode("utf-8")


def timings_page(renderer: PageRenderer, builds: list[EntryBuild]) -> SiteFile:
    """``timings/index.html``: every demo and every block, slowest first."""
    results = [b.result for b in builds]
    return renderer.page_file("timings/index.html", "timings.html", root="../", canonical=renderer.url("timings/index.html"),
                     entries=entry_timings(results), blocks=block_timings(results, block_anchors(builds)),
                     total=sum(r.duration for r in results))


def api_files(renderer: PageRenderer, builds: list[EntryBuild], entries: list[dict[str, object]]) -> list[SiteFile]:
    """``api/index.html`` and ``_downloads/api_usage.json``: where each documented object is used."""
    groups = api_groups({b.entry.name: renderer.code_links.used(b.result) for b in builds}, entries, block_anchors(builds))
    page = renderer.page("api.html", root="../", canonical=renderer.url(API_PAGE), groups=groups,
                     count=sum(len(g.uses) for g in groups), usage_json=API_USAGE)
    return [SiteFile(API_PAGE, page), SiteFile(API_USAGE, api_usage_json(groups, renderer.info.site_url))]


def section_groups(renderer: PageRenderer, builds: list[EntryBuild], entries: list[dict[str, object]],
                   titles: Mapping[str, str] | None = None, own: str = "") -> list[LetterGroup]:
    """The index's groups when the demos folder has sections: top-level entries, then each section
    (``titles``: a section's title from its page, SECTION/index.qmd, when it has no README); on the
    page of the section ``own``, its entries come first with no heading (the page's title is it)."""
    by_section: dict[str, list[dict[str, object]]] = {}
    for build, view in zip(builds, entries):
        by_section.setdefault(build.entry.section, []).append(view)
    headers = {s.name: s for s in renderer.info.sections}
    groups: list[LetterGroup] = []
    for name, items in by_section.items():  # in site order
        if not name or name == own:
            groups.append(LetterGroup("", "section-top", tuple(items)))
            continue
        title, html = section_header(renderer, headers.get(name, Section(name)))
        if title == name and titles and titles.get(name):
            title = titles[name]
        groups.append(LetterGroup(title, "section-" + name.replace("/", "-"), tuple(items), html))
    return groups


def section_header(renderer: PageRenderer, section: Section) -> tuple[str | Markup, Markup | None]:
    """(title, rendered header text or None) of a section; the folder name when it has no title."""
    text, id_prefix = section.header, "section-" + section.name.replace("/", "-") + "-"
    # on the index, at the site's root
    page = PageContext(links=ProseLinks(renderer.info.api_docs, {}, renderer.linkable, ""), typography=renderer.info.typography)
    if section.header_kind == "md":
        first, _, rest = text.lstrip().partition("\n")
        if not first.startswith("# "):
            first, rest = "", text
        title = renderer.prose(first[2:].strip(), "markdown").removeprefix("<p>").removesuffix("</p>")
        return title or section.name, renderer.prose(rest, "markdown", id_prefix, page) if rest.strip() else None
    head = rst_head(text)  # reST, as Sphinx-Gallery reads README.txt
    body = head.intro if head else text
    title = prose.plain(head.title, "rst") if head else section.name
    return title, renderer.prose(body, "rst", id_prefix, page) if body.strip() else None


def site_files(renderer: PageRenderer, builds: list[EntryBuild]) -> list[SiteFile]:
    home = home_build(builds)  # index.qmd (.md, .ipynb) at the top: the home page, above the list
    listed = [b for b in builds if b is not home]
    # a section's index.qmd (.md, .ipynb): its page, SECTION/index.html, listed first in its section
    sections = {b.entry.section: b for b in listed if is_section_home(b.entry.name, b.entry.format)}
    entries = [
        {"name": b.entry.name, "label": renderer.heading(b) if b.script.title else b.entry.name,
         "summary": renderer.summary(b.script), "ok": b.result.ok, "thumbnail": renderer.thumbnails.of(b),
         "href": f"{b.entry.section}/index.html" if sections.get(b.entry.section) is b else ""}
        for b in listed
    ]
    titles = {name: renderer.heading(b) for name, b in sections.items() if b.script.title}
    sectioned = any(b.entry.section for b in listed)
    listing = _listing(renderer, listed, entries, sectioned, titles)
    section_pages = []
    for name, page in sections.items():
        members = [(b, e) for b, e in zip(listed, entries)
                   if b is not page and (b.entry.section + "/").startswith(name + "/")]
        section_pages += renderer.entry_files(page, listing=_listing(
            renderer, [b for b, _ in members], [e for _, e in members], True, titles, own=name), at=name)
    files = [
        *(renderer.entry_files(home, listing=listing) if home is not None else [
            renderer.page_file("index.html", "index.html", root="", canonical=renderer.url("index.html"), **listing)]),
        *section_pages,
        *renderer.thumbnails.files.values(),
        SiteFile("404.html", renderer.page("404.html", root=renderer.url("") or "", canonical=None)),
        # Static assets are copied, never hard-linked: a link would let an edit of the
        # template folder change an already published site.
        SiteFile("static/site.css", stylesheet()),
        SiteFile("static/site.js", (TEMPLATES_DIR / "static" / "site.js").read_bytes()),
        SiteFile("static/theme.js", (TEMPLATES_DIR / "static" / "theme.js").read_bytes()),
        SiteFile("static/previews.js", (TEMPLATES_DIR / "static" / "previews.js").read_bytes()),
        SiteFile("static/favicon.svg", (TEMPLATES_DIR / "static" / "favicon.svg").read_bytes()),
        *(plotly_files() if any(records_plotly(b.result) for b in builds) else []),
        SiteFile(".nojekyll", b""),
        site_mark(),
        timings_page(renderer, builds),
    ]
    if renderer.info.api_docs:
        files += api_files(renderer, builds, entries)
    connections = reference_files(renderer.references, renderer.page, renderer.url)
    files += connections
    if renderer.info.site_url:
        urls = [renderer.url("index.html"), *(renderer.url(f"{e['name']}/index.html") for e in entries)]
        urls += [renderer.url(API_PAGE)] if renderer.info.api_docs else []
        urls += [renderer.url(f.path) for f in connections]
        urls += [renderer.url(f"{name}/index.html") for name in sections]
        files.append(SiteFile("sitemap.xml", renderer.page("sitemap.xml", urls=urls)))
    return files


def _listing(renderer: PageRenderer, listed: list[EntryBuild], entries: list[dict[str, object]], sectioned: bool,
             titles: Mapping[str, str], own: str = "") -> dict[str, object]:
    """What the list of entries (templates/_entry_list.html) shows of ``listed``."""
    return dict(entries=entries, lead=renderer.info.index_intro.replace("{count}", str(len(entries))),
                groups=section_groups(renderer, listed, entries, titles, own) if sectioned else letter_groups(entries),
                sectioned=sectioned, thumbnails=any(e["thumbnail"] for e in entries),
                archives={"scripts": SCRIPTS_ZIP, "notebooks": NOTEBOOKS_ZIP},
                api_page=API_PAGE if renderer.info.api_docs else None)


def prepare(scripts: Iterable[Script]) -> None:
    """Pay rendering's fixed costs now: imports, compiled templates, highlighted code,
    the notebooks' Markdown of reST prose.

    The build calls this while demos run and the builder would only wait, so the pages
    are written sooner once the last demo ends; render_site finds everything warm.
    """
    scripts = list(scripts)
    renderer = PageRenderer(SiteInfo())
    # the pages and what they extend, include and import (those compile when first rendered)
    for template in renderer.env.list_templates(filter_func=lambda name: "/" not in name
                                                and name.endswith((".html", ".xml"))):
        renderer.env.get_template(template)
    for script in scripts:
        for cell in script.code_cells:
            renderer.highlighter.parts(cell, script.docstring_lines)
    pygments_css()  # the stylesheet's code colours
    prepare_notebooks(scripts)


def render_site(
    builds: list[EntryBuild], info: SiteInfo, *, only: Collection[str] | None = None,
    site_pages: bool = True, notebooks: Mapping[str, Path] | None = None,
    thumbnail_cache: Path | None = None, early: EarlyPages | None = None,
    spool: Spool | None = None,
) -> list[SiteFile]:
    """Return every file of the site (pages, downloads, artifacts, static assets).

    A rebuild (rebuild_plan.py) renders ``only`` the named entries (links still see them all),
    the site-wide files only when ``site_pages``, and publishes ``notebooks`` as they are;
    thumbnails are cached in ``thumbnail_cache``; ``early``: pages rendered while demos ran;
    ``spool``: where each rendered entry file and large page goes as it is made (on disk).
    """
    renderer = PageRenderer(info, notebooks, thumbnail_cache)
    renderer.spool = spool
    ordered = ordered_builds(builds, info)
    renderer.site_entries(ordered)
    files: list[SiteFile] = []
    around = neighbours(ordered)
    renderer.learn_labels(ordered)
    for build in ordered:
        name = build.entry.name
        if only is not None and name not in only:
            continue
        page = early.page_for(build, info, ordered) if early is not None and name not in renderer.notebooks else None
        if page is not None:
            page.say_records()
            made = page.files
        else:
            made = renderer.entry_files(build, *around.get(name, (None, None)))
        files.extend(map(spool.keep, made) if spool is not None else made)
    if site_pages:
        files.extend(site_files(renderer, ordered))
    return list({f.path: f for f in files}.values())  # plotly.js: once, whichever pages need it
