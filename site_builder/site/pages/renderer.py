"""The entry pages' renderer: an entry, its parsed script and run result -> the page's files in memory.

One renderer makes an entry's page early (``early``, as its demo finishes) or at the end
(``render``); Jinja2 templates hold the markup (``templates/``), Pygments highlights the code
and markdown-it and docutils render the prose (site/prose).  Nothing is written to disk here.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from markupsafe import Markup, escape

from site_builder.errors import one_line
from site_builder.source.blocks import Cell, Script
from site_builder.source.markdown_head import without_title
from site_builder.source.entries import Entry
from site_builder.run.execute import (
    BUILDER_DIR,
    Artifact,
    BlockResult,
    Display,
    RunResult,
)
from site_builder.site.formatting import format_duration, format_size, join_words
from site_builder.site.downloads.notebook import make_notebook
from site_builder.site.outputs.shown import FigureNumbers, shown_streams
from site_builder.source.cell_options import display_of
from site_builder.site.outputs.displays import DisplayView, PageAssets, display_view
from site_builder.site.outputs.interactive import plotly_files
from site_builder.site.outputs.outcomes import block_note, output_parts, unpublishable
from site_builder.site.outputs.quoted import page_glue, quoted_by_place
from site_builder.site.downloads.values import value_files
from site_builder.run.results import GluedValue
from site_builder.source.expressions.places import cell_place
from site_builder.site.prose import html as prose
from site_builder.site.pages.code_links import SiteCodeLinks
from site_builder.site.highlight import CodeLink, Highlighter
from site_builder.site.pages.api_index import API_PAGE, entry_uses
from site_builder.site.prose.links import ProseLinks, SiteEntry, imported_names
from site_builder.site.prose.markdown.context import PageContext
from site_builder.site.prose.labels import Gate, Gates, SiteLabels, expand_gates, prose_page, say_warnings, text_line
from site_builder.site.references.page import attach_references
from site_builder.site.references.site import SiteReferences, entry_heading, entry_summary, site_references
from site_builder.site.pages.toc import page_toc
from site_builder.site.safety.svg import UnsafeSvgError, inert_svg
from site_builder.site.pages.views import ArtifactView, CellView, EntryLink, cell_names, poster_of
from site_builder.site.pages.views import with_late_links
from site_builder.site.pages.views import csv_preview, safe_rel_path
from site_builder.site.sitefiles import EntryBuild, SiteFile, SiteInfo
from site_builder.site.sitefiles import notebook_path, script_download
from site_builder.site.pages.timings import environment_view, format_ran_at
from site_builder.site.outputs.thumbnails import Thumbnails
from site_builder.site.templates import jinja_environment

log = logging.getLogger(__name__)
# The reproducibility sentence is only claimed for scripts that visibly seed an RNG.
# The CSS rules the page's values keep (value_html.py), beside the page in the builder's own
# folder, where no file a demo writes can take its name; Plotly figures' data files with it.
VALUE_STYLES = f"{BUILDER_DIR}/values.css"
# Source formats whose file is offered as it is, beside the .py and .ipynb every page offers.
SOURCE_DOWNLOADS = ("md", "qmd")
# Publishes one file of the run folder and returns its URL relative to the entry page.
_Publish = Callable[[str], "str | None"]
_SEEDED = re.compile(
    r"seed\s*\(\s*[^)\s]|default_rng\s*\(\s*[^)\s]|RandomState\s*\(\s*[^)\s]|random_state\s*=\s*\d"
)


class PageRenderer:
    """Renders entry pages, early (as a demo finishes) or final: the per-build tools (Jinja environment,
    highlighter, prose links, the site's labels and references) for one site."""

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
        self.glued: dict[str, tuple[GluedValue, ...]] = {}  # entry -> what its glue() kept

    def site_entries(self, builds: Iterable[EntryBuild]) -> None:
        """Remember the site's entries: prose cross-references between entries link to their pages."""

        def title(build: EntryBuild) -> Callable[[], str]:
            return functools.cache(lambda: self.heading(build) if build.script.title else build.entry.name)

        self.linkable = tuple(SiteEntry(b.entry.name, title(b)) for b in builds)
        self.glued = {b.entry.name: b.result.glued for b in builds if b.result.glued}  # {glue}`other::name`

    def prose_links(self, entry: Entry) -> ProseLinks:
        """What the prose of ``entry``'s page links to: its imports' documentation, the other entries."""
        return ProseLinks(self.info.api_docs, imported_names(entry.source), self.linkable,
                          "../" * (entry.name.count("/") + 1))

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

    # -------------------------------------------------------------- entries

    def entry_files(
        self, build: EntryBuild, prev: EntryLink | None = None, next: EntryLink | None = None
    ) -> list[SiteFile]:
        entry, script, result = build.entry, build.script, build.result
        name, stem = entry.name, entry.stem
        page_paths = {"index.html", f"{stem}.py", f"{stem}.ipynb", *([f"{stem}.{entry.format}"] * (entry.format in SOURCE_DOWNLOADS))}
        published: dict[str, SiteFile] = {}

        def publish(rel: str) -> str | None:
            safe = safe_rel_path(rel)
            why = unpublishable(result.files_dir, rel, safe, page_paths, published)
            if why:
                log.warning("%s: the file %s the demo wrote is not published: %s", name, rel, why)
                return None
            assert safe is not None
            if safe.lower().endswith(".svg"):  # opened on its own, an SVG runs its scripts
                try:
                    published[safe] = SiteFile(path=f"{name}/{safe}", data=inert_svg(result.files_dir, safe))
                except UnsafeSvgError as exc:
                    log.warning("%s: the SVG file %s is not published: %s", name, rel, exc)
                    return None
            else:
                published[safe] = SiteFile(path=f"{name}/{safe}", source=result.files_dir / safe,
                                           root=result.files_dir)
            return quote(safe)

        by_name = {b.name: b for b in result.blocks}
        root = "../" * (name.count("/") + 1)
        page, images = prose_page(build, root, self.labels, self.info.typography)
        page.links = self.prose_links(entry)
        page.quoted = quoted_by_place(result.quoted)
        page.glued = page_glue(result.glued, self.glued, publish)
        refs = attach_references(page, self.references, entry)
        code_links = self.code_links.of(result)
        figures, gates, assets = FigureNumbers(page.anchor), Gates(page), PageAssets(entry=name)
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
            summary=self.summary(script),
            entry_intro=self.info.entry_intro.split("{entry}") if self.info.entry_intro else [],
            entry_href=self.info.entry_url.replace("{name}", quote(name)) if self.info.entry_url else None,
            requirements=join_words(list(script.requirements)),
            writes_files=demo_files,
            seeded=bool(_SEEDED.search(entry.source)),
            value_styles=VALUE_STYLES if css else None,
            figure_data=plotly_data,
            cells=cells,
            toc=page_toc(cells),
            document=entry.format != "py",
            failure=one_line(result.failure) if result.failure else None,
            shown_only=result.shown_only,
            source_format=entry.format,
            ran_at=format_ran_at(result.started_at),
            run_duration=format_duration(result.duration),
            python=result.environment.get("python", ""),
            environment=environment_view(result.environment),
            canonical=self.url(f"{name}/index.html"),
            prev=prev,
            next=next,
            api_used=entry_uses(self.code_links.used(result)),
            api_page=API_PAGE if self.info.api_docs else None,
            references=refs.references(),
            referred_by=refs.referred_by(),
        )
        return [
            SiteFile(path=f"{name}/index.html", data=html),
            SiteFile(path=f"{name}/{stem}.py", data=script_download(entry)),
            *([SiteFile(path=f"{name}/{stem}.{entry.format}", data=entry.source_bytes)]
              if entry.format in SOURCE_DOWNLOADS else []),
            self.notebook_file(name, script, result, from_notebook=entry.format != "py"),
            *published.values(),
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

    def cell_prose(self, text: str, language: str, index: int, page: PageContext | None, first_line: int) -> Markup:
        """A prose cell's HTML; a cell whose lines are not the file's (a .ipynb's) is "cell N" in warnings."""
        if page is None or first_line:
            return self.prose(text, language, f"prose-{index}-", page, first_line=first_line)
        page.place = f"cell {index + 1}"
        try:
            return self.prose(text, language, f"prose-{index}-", page, first_line=1)
        finally:
            page.place = ""

    def description(self, cell: Cell, page: PageContext | None, script: Script | None) -> Markup:
        """A block's description (the docstring's Blocks section: Markdown) as inline HTML."""
        if not cell.description.strip():
            return Markup("")
        at = script.docstring.find(cell.description) if script is not None and script.docstring_lines else -1
        line = script.docstring_lines[0] + script.docstring.count("\n", 0, at) if at >= 0 and script else 0
        html = self.prose(cell.description, "markdown", f"{cell.name}-description-", page, first_line=line)
        if html.startswith("<p>") and html.endswith("</p>") and html.count("</p>") == 1:
            return Markup(html.removeprefix("<p>").removesuffix("</p>"))
        return Markup(escape(html.striptags()))  # blocks (a list, raw HTML as text): their words

    def summary(self, script: Script) -> str:
        """The one-line summary as plain text (reST markup resolved, Markdown's typography applied)."""
        return entry_summary(script, self.info.typography)

    def cell_view(
        self, cell: Cell, block: BlockResult | None, publish: _Publish, files_dir: Path | None = None,
        result: RunResult | None = None, script: Script | None = None, index: int = 0,
        figures: FigureNumbers | None = None, notebook: bool = False, page: PageContext | None = None,
        code_links: tuple[CodeLink, ...] = (), assets: PageAssets | None = None,
    ) -> CellView:
        if page is not None and script is not None:
            page.after = cell_place(script, index)  # the run's values this cell's prose quotes
        if cell.kind == "markdown":
            language = script.prose if script else "markdown"
            title_at = script.title_at if notebook and script else None
            # the page's h1 shows the title: its heading is left out of the prose
            text = without_title(cell.text, *title_at[1:]) if title_at and title_at[0] == index else cell.text
            return CellView(kind="markdown", name="", description="",
                            html=self.cell_prose(text, language, index, page, cell.first_line),
                            status="ok", duration="", outputs=(), omitted_lines=0, omitted_bytes="",
                            full_output=None, error=None, artifacts=())
        if block is None:
            block = BlockResult(name=cell.name, status="not-run", duration=0.0)
        display = display_of(cell.tags, (*cell.metadata_options, *cell.options))
        block = shown_streams(block, display)
        sizes = {a.path: (a.width, a.height) for a in block.artifacts if a.kind == "display"}

        def view(shown: Display) -> DisplayView:
            return display_view(shown, publish, sizes, assets)

        head, tail = output_parts(block, self.info.output_fold_lines, view)
        # A notebook's raises-exception allows an error (Jupyter Book); a script's asserts one.
        expects_error = "raises-exception" in cell.tags and not notebook
        note = f"Not run ({display.why_not_run})." if not display.runs else (
            block_note(block, result, expects_error) if result else "")
        artifacts, layout = (figures or FigureNumbers()).place(self.artifact_views(block, publish, files_dir), display)
        description = self.description(cell, page, script)
        return CellView(
            kind="code",
            name=cell.name,
            description=description.striptags(),
            description_html=description,
            html=Markup(""),
            code=self.highlighter.parts(cell, script.docstring_lines if script else None, code_links),
            status=block.status,
            duration="" if block.status == "not-run" else format_duration(block.duration),
            outputs=head,
            outputs_tail=tail,
            note=note,
            omitted_lines=block.omitted_lines,
            omitted_bytes=format_size(block.omitted_bytes) if block.omitted_bytes else "",
            full_output=publish(block.full_output) if block.full_output else None,
            error=block.error,
            artifacts=artifacts,
            value=view(block.value) if block.value is not None and self.info.values else None,
            display=display,
            layout=layout,
            **cell_names(cell, display, notebook, artifacts, page),
        )

    def artifact_views(self, block: BlockResult, publish: _Publish, files_dir: Path | None) -> tuple[ArtifactView, ...]:
        """The block's files as the cell lists them: a display's files are shown with it, and an
        animation takes the place of its figure (X-figure-K.png, its poster frame)."""
        movies = {poster_of(a.path): a for a in block.artifacts if a.kind == "animation"}
        views = []
        for art in block.artifacts:
            if art.kind in ("display", "animation"):
                continue
            view = self.artifact_view(art, publish, files_dir)
            movie = movies.get(art.path) if art.kind == "figure" else None
            href = publish(movie.path) if movie is not None and view.href is not None else None
            if movie is not None and href is not None:
                view = dataclasses.replace(view, animation=href, video=movie.path.endswith(".mp4"),
                                           name=PurePosixPath(movie.path).name, size=format_size(movie.size))
            views.append(view)
        return tuple(views)

    @staticmethod
    def artifact_view(art: Artifact, publish: _Publish, files_dir: Path | None = None) -> ArtifactView:
        suffix = PurePosixPath(art.path).suffix.lower()
        preview = None
        href = publish(art.path)  # checks the file first: only a published file is previewed
        if href is not None and art.kind == "file" and suffix in (".csv", ".tsv") and files_dir is not None:
            preview = csv_preview(files_dir / art.path, "\t" if suffix == ".tsv" else ",")
        return ArtifactView(
            name=PurePosixPath(art.path).name,
            href=href,
            is_image=art.kind in ("figure", "image"),
            size=format_size(art.size),
            alt=art.alt or PurePosixPath(art.path).name,
            width=art.width,
            height=art.height,
            preview=preview,
        )

    def url(self, rel: str) -> str | None:
        """The absolute URL of the site's file ``rel``, or None without a site_url."""
        if not self.info.site_url:
            return None
        return self.info.site_url.rstrip("/") + "/" + rel


def neighbours(ordered: list[EntryBuild]) -> dict[str, tuple[EntryLink | None, EntryLink | None]]:
    """Each entry's (previous, next) pages in the site's order."""
    links = [EntryLink(b.entry.name, b.script.summary) for b in ordered]
    return {link.name: (links[i - 1] if i > 0 else None, links[i + 1] if i + 1 < len(links) else None)
            for i, link in enumerate(links)}
