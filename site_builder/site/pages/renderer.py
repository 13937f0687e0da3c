"""The entry pages' renderer: an entry, its parsed script and run result -> the page's files in memory.

One renderer makes an entry's page early (``early``, as its demo finishes) or at the end
(``render``); Jinja2 templates hold the markup (``templates/``), the one highlighter
(site/highlight.py) the code, markdown-it and docutils the prose (site/prose).  Nothing is
written to disk here.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from urllib.parse import quote

from markupsafe import Markup

from site_builder.errors import one_line
from site_builder.source.parsed import Script
from site_builder.source.entries import Entry
from site_builder.run.child.files import BUILDER_DIR
from site_builder.run.execute import RunResult
from site_builder.site.formatting import format_duration, join_words
from site_builder.site.downloads.notebook import make_notebook
from site_builder.site.outputs.shown import FigureNumbers
from site_builder.site.outputs.displays import PageAssets
from site_builder.site.outputs.interactive import plotly_files
from site_builder.site.outputs.published import FilePublisher
from site_builder.site.outputs.quoted import LazyMapping, quoted_by_place, run_values, summary_with_values
from site_builder.site.downloads.values import value_files
from site_builder.site.prose import html as prose
from site_builder.site.pages.code_links import SiteCodeLinks
from site_builder.site.pages.api_index import API_PAGE, entry_uses
from site_builder.site.prose.images import is_remote
from site_builder.site.prose.links import ProseLinks, SiteEntry, imported_names
from site_builder.site.prose.markdown.context import PageContext
from site_builder.site.prose.labels import Gate, Gates, SiteLabels, expand_gates, prose_page, say_warnings, text_line
from site_builder.site.references.page import attach_references
from site_builder.site.references.site import SiteReferences, entry_heading, entry_summary, site_references
from site_builder.site.pages.toc import page_toc
from site_builder.site.pages.views import EntryLink, reproducibility
from site_builder.site.pages.views import with_bibliography, with_late_links
from site_builder.site.sitefiles import EntryBuild, SiteFile, SiteInfo
from site_builder.site.sitefiles import home_build, notebook_path, script_download
from site_builder.site.pages.timings import environment_view, format_ran_at
from site_builder.site.outputs.thumbnails import Thumbnails
from site_builder.site.publish.spool import Spool
from site_builder.site.pages.cell_views import CellViews
from site_builder.site.highlight import Highlighter
from site_builder.site.templates import jinja_environment

log = logging.getLogger(__name__)
# The reproducibility sentence is only claimed for scripts that visibly seed an RNG.
# The CSS rules the page's values keep (value_html.py), beside the page in the builder's own
# folder, where no file a demo writes can take its name; Plotly figures' data files with it.
VALUE_STYLES = f"{BUILDER_DIR}/values.css"
# Source formats whose file is offered as it is, beside the .py and .ipynb every page offers.
SOURCE_DOWNLOADS = ("md", "qmd")
_SEEDED = re.compile(
    r"seed\s*\(\s*[^)\s]|default_rng\s*\(\s*[^)\s]|RandomState\s*\(\s*[^)\s]|random_state\s*=\s*\d"
)


class PageRenderer(CellViews):
    """Renders entry pages, early (as a demo finishes) or final: the per-build tools (Jinja environment,
    highlighter, prose links, the site's labels and references) for one site; its cells' views
    are :class:`CellViews`'."""

    def __init__(self, info: SiteInfo, notebooks: Mapping[str, Path] | None = None,
                 thumbnail_cache: Path | None = None) -> None:
        self.info = info
        self.thumbnails = Thumbnails(thumbnail_cache)
        self.notebooks = notebooks or {}  # entry -> a notebook file to publish as it is
        self.env = jinja_environment()
        self.highlighter = Highlighter()
        self.code_links = SiteCodeLinks(info.api_docs)  # entry -> block -> its code links
        self.linkable: tuple[SiteEntry, ...] = ()  # the entries prose may link to (site_entries)
        self.labels = SiteLabels()  # MyST labels and documents of the whole site (see prose_page)
        self.references = SiteReferences()  # works cited, terms, who refers to whom (references.site)
        self.glued: Mapping[str, RunResult] = {}  # entry -> its run, when its glue() kept values
        self.spool: Spool | None = None  # where large pages are written as they render (publish/spool.py)

    def site_entries(self, builds: Iterable[EntryBuild]) -> None:
        """Remember the site's entries: prose cross-references between entries link to their pages."""

        titles: dict[str, str] = {}  # one cache for the site: a functools.cache per entry costs 40 us to make

        def title(build: EntryBuild) -> str:
            name = build.entry.name
            if name not in titles:
                titles[name] = self.heading(build) if build.script.title else name
            return titles[name]

        self.linkable = tuple(SiteEntry(b.entry.name, functools.partial(title, b)) for b in builds)
        glued = {b.entry.name: b for b in builds if b.glued_key}  # {glue}`other::name`: read when pasted
        self.glued = LazyMapping(glued, lambda name: glued[name].result)

    def prose_links(self, entry: Entry) -> ProseLinks:
        """What the prose of ``entry``'s page links to: its imports' documentation, the other entries."""
        # its imports name API targets, which only inventories resolve: no parse of its source without one
        aliases = imported_names(entry.source) if self.info.api_docs else {}
        return ProseLinks(self.info.api_docs, aliases, self.linkable, "../" * (entry.name.count("/") + 1))

    def prose(self, text: str, language: str, id_prefix: str = "", page: PageContext | None = None,
              first_line: int = 0) -> Markup:
        # Sanitised by prose.render (nh3): safe to mark up.
        page = page if page is not None else PageContext(typography=self.info.typography)
        return Markup(prose.render(text, language, id_prefix=id_prefix, page=page, first_line=first_line))

    def learn_labels(self, builds: list[EntryBuild]) -> None:
        """Read the labels every page's prose defines, so a ``{ref}`` finds them on any page, and
        what each page cites and refers to (its References list, "Referred to by", terms)."""
        self.references = site_references(builds, self.info)
        self.labels = self.references.labels

    def page(self, template: str, **context: object) -> bytes:
        return self.env.get_template(template).render(site=self.info, **context).encode("utf-8")

    def page_file(self, path: str, template: str, **context: object) -> SiteFile:
        """The site's file ``path``, ``template`` rendered; into the spool part by part when there
        is one: a page listing every entry is never one text in memory."""
        if self.spool is None:
            return SiteFile(path, self.page(template, **context))
        parts = self.env.get_template(template).generate(site=self.info, **context)
        return self.spool.write(path, (part.encode("utf-8") for part in parts))

    # -------------------------------------------------------------- entries

    def entry_files(
        self, build: EntryBuild, prev: EntryLink | None = None, next: EntryLink | None = None,
        listing: dict[str, object] | None = None, at: str = "",
    ) -> list[SiteFile]:
        """The entry's page and files; with ``listing`` (the index's list of entries), the site's
        home page (index.html, its files still in the entry's folder, URLs prefixed), or with
        ``at`` (a section) that section's page (SECTION/index.html)."""
        entry, script, result = build.entry, build.script, build.result
        name, stem = entry.name, entry.stem
        prefix = f"{quote(name.removeprefix(at + '/') if at else name)}/" if listing is not None else ""
        listing_page = f"{at}/index.html" if at else "index.html"
        downloads = [] if entry.is_page else [
            f"{stem}.py", f"{stem}.ipynb", *([f"{stem}.{entry.format}"] * (entry.format in SOURCE_DOWNLOADS))]
        page_paths = {"index.html", *downloads}
        files = FilePublisher(name, page_paths, prefix)
        publish = files.of(result.files_dir)
        by_name = {b.name: b for b in result.blocks}
        root = "../" * (name.count("/") + 1) if listing is None else "../" * (at.count("/") + 1) if at else ""
        page, images = prose_page(build, root, self.labels, self.info.typography)
        if prefix:  # its images are published in its folder (prose_page's rule)
            page.publish_image = _prefixed(prefix, page.publish_image)
            page.publish_video = _prefixed(prefix, page.publish_video)
        page.links = self.prose_links(entry)
        page.quoted = quoted_by_place(result.quoted)
        assets = PageAssets(entry=name)
        page.show_value, page.glued = run_values(result, self.glued, files, assets)
        refs = attach_references(page, self.references, entry)
        code_links = self.code_links.of(result)
        figures, gates = FigureNumbers(page.anchor, page.number), Gates(page)
        purpose = self.introduction(build, page)  # first: its labels and numbers come first on the page
        abstract = self.prose(script.abstract, "markdown", "abstract-", page,
                              first_line=entry.source.count("\n", 0, max(entry.source.find("abstract:"), 0)) + 1
                              ) if script.abstract else None
        cells = [gates.view(cell) if isinstance(cell, Gate) else
                 self.cell_view(cell, by_name.get(cell.name), publish, result.files_dir, result, script, i,
                                figures, notebook=entry.format != "py", page=page,
                                code_links=code_links.get(cell.name, ()), assets=assets)
                 for i, cell in expand_gates(script.cells, script.prose)]
        cells = [c for c in cells if c is not None] + gates.closing()
        purpose, cells = with_late_links(page, purpose, cells)
        listed = self.env.get_template("_references.html").module.references_list  # type: ignore[attr-defined]
        purpose, cells, placed = with_bibliography(purpose, cells, lambda: Markup(listed(refs.placed_list())))
        say_warnings(page, entry)
        css = "\n".join(c for c in assets.css if c)
        extra = [SiteFile(f"{name}/{VALUE_STYLES}", f"{css}\n".encode("utf-8"))] if css else []
        plotly_data = [f"{BUILDER_DIR}/plotly-{n}.js" for n in range(1, len(assets.figures) + 1)]
        extra += [SiteFile(f"{name}/{rel}", data) for rel, data in zip(plotly_data, assets.figures)]
        if plotly_data:
            extra += plotly_files()  # the same file from every page that needs it: written once
        demo_files = any(
            not a.path.startswith(f"{BUILDER_DIR}/") and a.kind != "figure"
            for b in result.blocks
            for a in b.artifacts
        )
        html = self.page(
            "entry.html",
            root=root,
            name=name,
            stem=stem,
            script=script,
            heading=self.heading(build),
            page_title=self.heading(build) if script.title else name,
            purpose=purpose,
            abstract=abstract,
            authors=join_words(list(script.authors)),
            summary=summary_with_values(self.summary(script), result.quoted),
            entry_intro=self.info.entry_intro.split("{entry}") if self.info.entry_intro else [],
            entry_href=self.info.entry_url.replace("{name}", quote(name)) if self.info.entry_url else None,
            requirements=join_words(list(script.requirements)),
            writes_files=demo_files,
            reproducibility=reproducibility(self.info, bool(_SEEDED.search(entry.source)), result.verdict),
            value_styles=prefix + VALUE_STYLES if css else None,
            figure_data=[prefix + rel for rel in plotly_data],
            prefix=prefix,
            listing=listing,
            **{k: v for k, v in (listing or {}).items() if k != "api_page"},  # the entry's own api_page
            cells=cells,
            toc=page_toc(cells),
            document=entry.format != "py",
            failure=one_line(result.failure) if result.failure else None,
            shown_only=result.shown_only,
            is_page=entry.is_page,
            source_format=entry.format,
            ran_at=format_ran_at(result.started_at),
            run_duration=format_duration(result.duration),
            python=result.environment.get("python", ""),
            environment=environment_view(result.environment),
            canonical=self.url(f"{name}/index.html" if listing is None else listing_page),
            prev=prev,
            next=next,
            api_used=entry_uses(self.code_links.used(result)),
            api_page=API_PAGE if self.info.api_docs else None,
            references=[] if placed else refs.references(),
            referred_by=refs.referred_by(),
        )
        if listing is not None:  # its files are the entry page's (rendered too, in its folder)
            return [SiteFile(path=listing_page, data=html)]
        # a page (Markdown, no notebook) has nothing to download: it is its own text
        return [
            SiteFile(path=f"{name}/index.html", data=html),
            *([] if entry.is_page else [
                SiteFile(path=f"{name}/{stem}.py", data=script_download(entry)),
                *([SiteFile(path=f"{name}/{stem}.{entry.format}", data=entry.source_bytes)]
                  if entry.format in SOURCE_DOWNLOADS else []),
                self.notebook_file(name, script, result, from_notebook=entry.format != "py"),
            ]),
            *files.published.values(),
            *images.values(),
            *extra,
            *value_files(name, result),
        ]

    def notebook_file(self, name: str, script: Script, result: RunResult, from_notebook: bool = False) -> SiteFile:
        path = notebook_path(name)
        if name in self.notebooks:
            return SiteFile(path=path, source=self.notebooks[name])
        return SiteFile(path=path, data=make_notebook(name, script, result, values=self.info.values,
                                                      from_notebook=from_notebook))

    def heading(self, build: EntryBuild) -> str:
        """The page's title: the docstring's reST title as text, else the entry_heading setting."""
        return entry_heading(build, self.info)

    def introduction(self, build: EntryBuild, page: PageContext | None = None) -> Markup | None:
        """The docstring body under a reST title, else the house style's Purpose section."""
        script = build.script
        text, language = (script.intro, script.prose) if script.title else (script.purpose, "markdown")
        if not text.strip():
            return None
        if page is not None:
            page.after = None  # the docstring's prose quotes the values after the whole run
        return self.prose(text, language, "intro-", page, first_line=text_line(build.entry, text))

    def summary(self, script: Script) -> str:
        """The one-line summary as plain text (reST markup resolved, Markdown's typography applied)."""
        return entry_summary(script, self.info.typography)

    def url(self, rel: str) -> str | None:
        """The absolute URL of the site's file ``rel``, or None without a site_url."""
        if not self.info.site_url:
            return None
        return self.info.site_url.rstrip("/") + "/" + rel


def neighbours(ordered: list[EntryBuild]) -> dict[str, tuple[EntryLink | None, EntryLink | None]]:
    """Each entry's (previous, next) pages in the site's order (the home page is none of them)."""
    home = home_build(ordered)  # a section's page (SECTION/index.qmd) is one: its own page in its folder
    links = [EntryLink(b.entry.name, b.script.summary) for b in ordered if b is not home]
    return {link.name: (links[i - 1] if i > 0 else None, links[i + 1] if i + 1 < len(links) else None)
            for i, link in enumerate(links)}


def _prefixed(prefix: str, publish: Callable[[str], str | None] | None) -> Callable[[str], str | None] | None:
    """``publish`` (a prose file's URL from its entry's page) giving URLs from the site's root instead."""
    if publish is None:
        return None

    def at_root(src: str) -> str | None:
        url = publish(src)
        return prefix + url if url is not None and not is_remote(url) else url

    return at_root
