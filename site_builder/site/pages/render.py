"""Render stage: entries, their parsed scripts and run results -> the site's files in memory.

Jinja2 templates hold the markup (``templates/``), Pygments highlights the code and
markdown-it and docutils render the prose (site/prose).  Nothing is written to disk here.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING
from urllib.parse import quote

import jinja2
from markupsafe import Markup, escape

from site_builder.errors import one_line
from site_builder.source.blocks import Cell, Script
from site_builder.source.gallery import hidden_lines
from site_builder.source.markdown_head import without_title
from site_builder.source.docstring import rst_head
from site_builder.source.entries import Entry, Section
from site_builder.run.execute import (
    BUILDER_DIR,
    Artifact,
    BlockResult,
    Display,
    RunResult,
)
from site_builder.site.formatting import format_duration, format_size, join_words  # noqa: F401 (re-exported)
from site_builder.site.downloads.archives import NOTEBOOKS_ZIP, SCRIPTS_ZIP
from site_builder.site.downloads.notebook import make_notebook, prepare_notebooks
from site_builder.site.publish.swap import site_mark
from site_builder.site.outputs.shown import FigureNumbers, shown_streams
from site_builder.source.cell_options import display_of
from site_builder.site.outputs.displays import DisplayView, PageAssets, display_view
from site_builder.site.outputs.interactive import plotly_files, records_plotly
from site_builder.site.outputs.outcomes import block_note, output_parts, unpublishable
from site_builder.site.outputs.quoted import page_glue, quoted_by_place
from site_builder.site.downloads.values import value_files
from site_builder.run.results import GluedValue
from site_builder.source.expressions.places import cell_place
from site_builder.site.prose import html as prose
from site_builder.site.pages.code_links import CodeLink, Highlighter, SiteCodeLinks
from site_builder.site.pages.api_index import API_PAGE, API_USAGE, api_groups, api_usage_json, entry_uses
from site_builder.site.prose.images import is_remote
from site_builder.site.prose.links import ProseLinks, SiteEntry, imported_names
from site_builder.site.prose.markdown.context import PageContext
from site_builder.site.prose.labels import Gate, Gates, SiteLabels, expand_gates, prose_page, say_warnings, text_line
from site_builder.site.references.page import attach_references
from site_builder.site.references.site import SiteReferences, entry_heading, entry_summary, site_references
from site_builder.site.pages.reference_pages import reference_files
from site_builder.site.pages.toc import page_toc
from site_builder.site.safety.svg import UnsafeSvgError, inert_svg
from site_builder.site.safety.text import finalize
from site_builder.site.pages.views import ArtifactView, CellView, CodePart, EntryLink, LetterGroup, cell_names, letter_groups, poster_of, reproducibility
from site_builder.site.pages.views import block_anchors, with_bibliography, with_late_links
from site_builder.site.pages.views import csv_preview, safe_rel_path  # noqa: F401 (csv_preview re-exported)
from site_builder.site.sitefiles import TEMPLATES_DIR, EntryBuild, SiteFile, SiteInfo  # noqa: F401 (re-exported)
from site_builder.site.sitefiles import home_build, notebook_path, ordered_builds, script_download
from site_builder.site.pages.timings import block_timings, entry_timings, environment_view, format_ran_at
from site_builder.site.pages.theme import pygments_css
from site_builder.site.outputs.thumbnails import Thumbnails

if TYPE_CHECKING:
    from site_builder.site.pages.early import EarlyPages

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


# ---------------------------------------------------------------- the renderer


@functools.lru_cache(maxsize=1)
def _jinja_environment() -> jinja2.Environment:
    """The templates' environment, kept for the life of the process.

    Compiling the templates costs far more than rendering them; Jinja still reloads a
    template whose file changed (auto_reload), so ``serve`` sees template edits.
    """
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES_DIR),
        autoescape=jinja2.select_autoescape(["html", "xml"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=True,
        finalize=finalize,
    )
    env.filters["duration"] = format_duration
    return env


class _Renderer:
    """Holds the per-call tools (Jinja environment, formatter, Markdown) for one site build."""

    def __init__(self, info: SiteInfo, notebooks: Mapping[str, Path] | None = None,
                 thumbnail_cache: Path | None = None) -> None:
        self.info = info
        self.thumbnails = Thumbnails(thumbnail_cache)
        self.notebooks = notebooks or {}  # entry -> a notebook file to publish as it is
        self.env = _jinja_environment()
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

    def code_parts(self, cell: Cell, docstring_lines: tuple[int, int] | None,
                   links: tuple[CodeLink, ...] = ()) -> tuple[CodePart, ...]:
        """The cell's code; the module docstring folded, ``sphinx_gallery_`` settings and ignored lines left out."""
        lines = cell.text.split("\n")
        fold = docstring_lines if cell.name == "setup" else None
        hidden = hidden_lines(lines)  # sphinx_gallery_ settings and start/end_ignore ranges
        if fold is None and not hidden:
            return (CodePart(Markup(self.highlighter.html(cell.text, cell.first_line, links))),)
        parts: list[CodePart] = []
        run: list[int] = []  # indices of the lines of the current part

        def flush(folded: int = 0) -> None:
            # Blank lines stay: the parts, joined, are the cell's code (minus gallery settings).
            if any(lines[i].strip() for i in run):
                text = "\n".join(lines[i] for i in run)
                start = cell.first_line + run[0]
                mine = tuple(k for k in links if start <= k.line < start + len(run))
                parts.append(CodePart(Markup(self.highlighter.html(text, start, mine)), folded))
            run.clear()

        for i in range(len(lines)):
            number = cell.first_line + i
            in_fold = fold is not None and fold[0] <= number <= fold[1]
            if in_fold and number == fold[0]:
                flush()
            if i not in hidden and (run or lines[i].strip() or i - 1 not in hidden):
                run.append(i)  # (blank lines right after a hidden setting go with it)
            if in_fold and number == fold[1]:
                flush(fold[1] - fold[0] + 1)
            elif i in hidden:
                flush()
        flush()
        return tuple(parts)

    def page(self, template: str, **context: object) -> bytes:
        return self.env.get_template(template).render(site=self.info, **context).encode("utf-8")

    # -------------------------------------------------------------- entries

    def entry_files(
        self, build: EntryBuild, prev: EntryLink | None = None, next: EntryLink | None = None,
        listing: dict[str, object] | None = None,
    ) -> list[SiteFile]:
        """The entry's page and files; with ``listing`` (the index's list of entries), the site's
        home page (index.html, its files still in the entry's folder, URLs prefixed)."""
        entry, script, result = build.entry, build.script, build.result
        name, stem = entry.name, entry.stem
        prefix = f"{quote(name)}/" if listing is not None else ""
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
            return prefix + quote(safe)

        by_name = {b.name: b for b in result.blocks}
        root = "../" * (name.count("/") + 1) if listing is None else ""
        page, images = prose_page(build, root, self.labels, self.info.typography)
        if prefix:  # its images are published in its folder (prose_page's rule)
            page.publish_image = _prefixed(prefix, page.publish_image)
            page.publish_video = _prefixed(prefix, page.publish_video)
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
            summary=self.summary(script),
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
            source_format=entry.format,
            ran_at=format_ran_at(result.started_at),
            run_duration=format_duration(result.duration),
            python=result.environment.get("python", ""),
            environment=environment_view(result.environment),
            canonical=self._url(f"{name}/index.html" if listing is None else "index.html"),
            prev=prev,
            next=next,
            api_used=entry_uses(self.code_links.used(result)),
            api_page=API_PAGE if self.info.api_docs else None,
            references=[] if placed else refs.references(),
            referred_by=refs.referred_by(),
        )
        if listing is not None:  # its files are the entry page's (rendered too, in its folder)
            return [SiteFile(path="index.html", data=html)]
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
            if page is not None:  # what its "attachment:NAME" images are
                page.attachments = {name: (mime, data) for name, mime, data in cell.attachments}
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
            code=self.code_parts(cell, script.docstring_lines if script else None, code_links),
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

    # -------------------------------------------------------------- site-wide files

    def _url(self, rel: str) -> str | None:
        if not self.info.site_url:
            return None
        return self.info.site_url.rstrip("/") + "/" + rel

    def stylesheet(self) -> bytes:
        # Background and token colours only: layout of .linenos lives in site.css.
        css = (TEMPLATES_DIR / "static" / "site.css").read_text(encoding="utf-8")
        return f"{css.rstrip()}\n\n{pygments_css()}".encode("utf-8")

    def timings_page(self, builds: list[EntryBuild]) -> bytes:
        """``timings/index.html``: every demo and every block, slowest first."""
        results = [b.result for b in builds]
        return self.page("timings.html", root="../", canonical=self._url("timings/index.html"),
                         entries=entry_timings(results), blocks=block_timings(results, block_anchors(builds)),
                         total=sum(r.duration for r in results))

    def api_files(self, builds: list[EntryBuild], entries: list[dict[str, object]]) -> list[SiteFile]:
        """``api/index.html`` and ``_downloads/api_usage.json``: where each documented object is used."""
        groups = api_groups({b.entry.name: self.code_links.used(b.result) for b in builds}, entries, block_anchors(builds))
        page = self.page("api.html", root="../", canonical=self._url(API_PAGE), groups=groups,
                         count=sum(len(g.uses) for g in groups), usage_json=API_USAGE)
        return [SiteFile(API_PAGE, page), SiteFile(API_USAGE, api_usage_json(groups, self.info.site_url))]

    def section_groups(self, builds: list[EntryBuild], entries: list[dict[str, object]]) -> list[LetterGroup]:
        """The index's groups when the demos folder has sections: top-level entries, then each section."""
        by_section: dict[str, list[dict[str, object]]] = {}
        for build, view in zip(builds, entries):
            by_section.setdefault(build.entry.section, []).append(view)
        headers = {s.name: s for s in self.info.sections}
        groups: list[LetterGroup] = []
        for name, items in by_section.items():  # in site order
            if not name:
                groups.append(LetterGroup("", "section-top", tuple(items)))
                continue
            title, html = self.section_header(headers.get(name, Section(name)))
            groups.append(LetterGroup(title, "section-" + name.replace("/", "-"), tuple(items), html))
        return groups

    def section_header(self, section: Section) -> tuple[str | Markup, Markup | None]:
        """(title, rendered header text or None) of a section; the folder name when it has no title."""
        text, id_prefix = section.header, "section-" + section.name.replace("/", "-") + "-"
        # on the index, at the site's root
        page = PageContext(links=ProseLinks(self.info.api_docs, {}, self.linkable, ""), typography=self.info.typography)
        if section.header_kind == "md":
            first, _, rest = text.lstrip().partition("\n")
            if not first.startswith("# "):
                first, rest = "", text
            title = self.prose(first[2:].strip(), "markdown").removeprefix("<p>").removesuffix("</p>")
            return title or section.name, self.prose(rest, "markdown", id_prefix, page) if rest.strip() else None
        head = rst_head(text)  # reST, as Sphinx-Gallery reads README.txt
        body = head.intro if head else text
        title = prose.plain(head.title, "rst") if head else section.name
        return title, self.prose(body, "rst", id_prefix, page) if body.strip() else None

    def site_files(self, builds: list[EntryBuild]) -> list[SiteFile]:
        home = home_build(builds)  # index.qmd (.md, .ipynb) at the top: the home page, above the list
        listed = [b for b in builds if b is not home]
        entries = [
            {"name": b.entry.name, "label": self.heading(b) if b.script.title else b.entry.name,
             "summary": self.summary(b.script), "ok": b.result.ok, "thumbnail": self.thumbnails.of(b)}
            for b in listed
        ]
        sectioned = any(b.entry.section for b in listed)
        listing = dict(entries=entries, lead=self.info.index_intro.replace("{count}", str(len(entries))),
                       groups=self.section_groups(listed, entries) if sectioned else letter_groups(entries),
                       sectioned=sectioned, thumbnails=any(e["thumbnail"] for e in entries),
                       archives={"scripts": SCRIPTS_ZIP, "notebooks": NOTEBOOKS_ZIP},
                       api_page=API_PAGE if self.info.api_docs else None)
        files = [
            *(self.entry_files(home, listing=listing) if home is not None else [
                SiteFile("index.html", self.page("index.html", root="", canonical=self._url("index.html"), **listing))]),
            *self.thumbnails.files.values(),
            SiteFile("404.html", self.page("404.html", root=self._url("") or "", canonical=None)),
            # Static assets are copied, never hard-linked: a link would let an edit of the
            # template folder change an already published site.
            SiteFile("static/site.css", self.stylesheet()),
            SiteFile("static/site.js", (TEMPLATES_DIR / "static" / "site.js").read_bytes()),
            SiteFile("static/theme.js", (TEMPLATES_DIR / "static" / "theme.js").read_bytes()),
            SiteFile("static/previews.js", (TEMPLATES_DIR / "static" / "previews.js").read_bytes()),
            SiteFile("static/favicon.svg", (TEMPLATES_DIR / "static" / "favicon.svg").read_bytes()),
            *(plotly_files() if any(records_plotly(b.result) for b in builds) else []),
            SiteFile(".nojekyll", b""),
            site_mark(),
            SiteFile("timings/index.html", self.timings_page(builds)),
        ]
        if self.info.api_docs:
            files += self.api_files(builds, entries)
        connections = reference_files(self.references, self.page, self._url)
        files += connections
        if self.info.site_url:
            urls = [self._url("index.html"), *(self._url(f"{e['name']}/index.html") for e in entries)]
            urls += [self._url(API_PAGE)] if self.info.api_docs else []
            urls += [self._url(f.path) for f in connections]
            files.append(SiteFile("sitemap.xml", self.page("sitemap.xml", urls=urls)))
        return files


def prepare(scripts: Iterable[Script]) -> None:
    """Pay rendering's fixed costs now: imports, compiled templates, highlighted code, nbformat.

    The build calls this while demos run and the builder would only wait, so the pages
    are written sooner once the last demo ends; render_site finds everything warm.
    """
    renderer = _Renderer(SiteInfo())
    for template in ("entry.html", "index.html", "404.html", "timings.html", "sitemap.xml", "api.html"):
        renderer.env.get_template(template)
    for script in scripts:
        for cell in script.code_cells:
            renderer.code_parts(cell, script.docstring_lines)
    prepare_notebooks()


def neighbours(ordered: list[EntryBuild]) -> dict[str, tuple[EntryLink | None, EntryLink | None]]:
    """Each entry's (previous, next) pages in the site's order (the home page is none of them)."""
    home = home_build(ordered)
    links = [EntryLink(b.entry.name, b.script.summary) for b in ordered if b is not home]
    return {link.name: (links[i - 1] if i > 0 else None, links[i + 1] if i + 1 < len(links) else None)
            for i, link in enumerate(links)}


def render_site(
    builds: list[EntryBuild], info: SiteInfo, *, only: Collection[str] | None = None,
    site_pages: bool = True, notebooks: Mapping[str, Path] | None = None,
    thumbnail_cache: Path | None = None, early: EarlyPages | None = None,
) -> list[SiteFile]:
    """Return every file of the site (pages, downloads, artifacts, static assets).

    A rebuild (rebuild_plan.py) renders ``only`` the named entries (links still see them all),
    the site-wide files only when ``site_pages``, and publishes ``notebooks`` as they are;
    thumbnails are cached in ``thumbnail_cache``; ``early``: pages rendered while demos ran.
    """
    renderer = _Renderer(info, notebooks, thumbnail_cache)
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
            files.extend(page.files)
        else:
            files.extend(renderer.entry_files(build, *around.get(name, (None, None))))
    if site_pages:
        files.extend(renderer.site_files(ordered))
    return list({f.path: f for f in files}.values())  # plotly.js: once, whichever pages need it


def _prefixed(prefix: str, publish: Callable[[str], str | None] | None) -> Callable[[str], str | None] | None:
    """``publish`` (a prose file's URL from its entry's page) giving URLs from the site's root instead."""
    if publish is None:
        return None

    def at_root(src: str) -> str | None:
        url = publish(src)
        return prefix + url if url is not None and not is_remote(url) else url

    return at_root
