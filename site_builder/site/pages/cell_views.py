"""A page's cells as the template shows them: prose, code (highlighted, folded), outputs, files.

:class:`CellViews` is the part of the entry pages' renderer (renderer.py) that makes each
cell's view; it uses the renderer's ``info``, ``prose`` and ``highlighter``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from markupsafe import Markup, escape

from site_builder.source.parsed import Cell, Script
from site_builder.source.markdown_head import without_title
from site_builder.source.notebooks import RAW_HTML
from site_builder.run.child.protocol import Outcome
from site_builder.run.execute import Artifact, BlockResult, Display, RunResult
from site_builder.site.formatting import format_duration, format_size
from site_builder.site.outputs.shown import FigureNumbers, column_widths_css, shown_streams
from site_builder.source.cell_options import display_of
from site_builder.site.outputs.displays import DisplayView, PageAssets, display_view
from site_builder.site.outputs.outcomes import block_note, output_parts
from site_builder.source.expressions.places import cell_place
from site_builder.site.prose.markdown.context import PageContext
from site_builder.site.pages.views import ArtifactView, CellView, cell_names, poster_of
from site_builder.site.pages.views import csv_preview
from site_builder.site.sitefiles import SiteInfo
from site_builder.site.highlight import CodeLink, Highlighter

# Publishes one file of the run folder and returns its URL relative to the entry page.
Publish = Callable[[str], "str | None"]


class CellViews:
    """The cells' views of one entry page (a base of PageRenderer)."""

    info: SiteInfo
    highlighter: Highlighter

    def prose(self, text: str, language: str, id_prefix: str = "", page: PageContext | None = None,
              first_line: int = 0) -> Markup:
        raise NotImplementedError

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

    def cell_view(
        self, cell: Cell, block: BlockResult | None, publish: Publish, files_dir: Path | None = None,
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
            if RAW_HTML in cell.tags:  # a raw cell of HTML: all of it HTML, as {raw} html shows it
                fence = "`" * max([3, *(len(run) + 1 for run in re.findall("`+", text))])
                text = f"{fence}{{raw}} html\n{text}\n{fence}"
            if page is not None:  # what its "attachment:NAME" images are
                page.attachments = {name: (mime, data) for name, mime, data in cell.attachments}
            return CellView(kind="markdown", name="", description="",
                            html=self.cell_prose(text, language, index, page, cell.first_line),
                            status="ok", duration="", outputs=(), omitted_lines=0, omitted_bytes="",
                            full_output=None, error=None, artifacts=())
        if block is None:
            block = BlockResult(name=cell.name, status=Outcome.NOT_RUN, duration=0.0)
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
        names = cell_names(cell, display, notebook, artifacts, page)
        if display.table_widths and assets is not None:  # tbl-colwidths: rules of the page's style sheet
            assets.css.append(column_widths_css(names["section_id"], display.table_widths))
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
            **names,
        )

    def artifact_views(self, block: BlockResult, publish: Publish, files_dir: Path | None) -> tuple[ArtifactView, ...]:
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
    def artifact_view(art: Artifact, publish: Publish, files_dir: Path | None = None) -> ArtifactView:
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
