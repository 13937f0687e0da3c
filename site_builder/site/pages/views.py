"""The render stage's views: what the entry page's template shows of a cell, a file, a link.

Plain frozen dataclasses made by ``render`` and read by ``templates/``, with the small
formatters they need (CSV previews, the index's letter groups, artifact paths).
"""

from __future__ import annotations

import csv
import dataclasses
import io
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from markupsafe import Markup

from site_builder.fs import UnsafeFileError, open_regular
from site_builder.run.execute import BlockError
from site_builder.site.outputs.shown import FigureCaption, FigureLayout
from site_builder.site.outputs.displays import DisplayView
from site_builder.site.outputs.outcomes import OutputPart
from site_builder.site.prose.label_ids import PageIds
from site_builder.site.prose.markdown.context import PageContext
from site_builder.site.safety.html import clean_html
from site_builder.run.results import Verdict
from site_builder.site.sitefiles import EntryBuild, SiteInfo
from site_builder.source.parsed import Cell
from site_builder.source.cell_options import CellDisplay
from site_builder.site.highlight import CodePart

# CSV previews: the first rows of a file a demo wrote, read from at most this many bytes.
CSV_PREVIEW_ROWS = 5
CSV_PREVIEW_BYTES = 64 * 1024
CSV_PREVIEW_COLUMNS = 12


# ---------------------------------------------------------------- template views


@dataclass(frozen=True)
class CsvPreview:
    """The first rows of a CSV file, for a small table under the download link."""

    header: tuple[str, ...]  # empty when the first row holds numbers (no header)
    rows: tuple[tuple[str, ...], ...]
    more_rows: bool  # the file has rows after these
    more_columns: bool  # columns were left out on the right


@dataclass(frozen=True)
class ArtifactView:
    """One produced file as a cell lists it."""

    name: str  # file name shown
    href: str | None  # relative URL from the entry page; None when it could not be published
    is_image: bool
    size: str  # "12.3 kB"
    alt: str
    width: int | None
    height: int | None
    preview: CsvPreview | None = None
    caption: FigureCaption | None = None  # a figure's numbered fig-cap caption
    subcaption: str = ""  # "(a) its fig-subcap": one of the cell's figures shown as one
    # An animated figure: the URL of its movie (MP4 when ``video``, else an animated WebP or
    # PNG); ``href`` is then its poster frame (the poster), ``name`` and ``size`` the movie's.
    animation: str | None = None
    video: bool = False


@dataclass(frozen=True)
class EntryLink:
    """A neighbouring entry in dictionary order, for the previous/next links."""

    name: str
    summary: str


@dataclass(frozen=True)
class LetterGroup:
    """Entries of the index under one heading: an initial letter (flat site), or a section."""

    letter: str | Markup  # the heading: "A".."Z", "#" for names starting with a digit; a section's title
    anchor: str  # "letter-a", "letter-other"; "section-basics"
    entries: tuple[dict[str, object], ...]
    header: Markup | None = None  # a section's header text, rendered


@dataclass(frozen=True)
class CellView:
    """One cell of the entry page: prose, or a code block with what it did."""

    kind: str  # "code" or "markdown" (prose)
    name: str
    description: str  # a code block's description as text (On this page)
    html: Markup  # rendered prose ("" for code cells: see code)
    status: str  # BlockStatus; "not-run" when the run has no result for the block
    duration: str  # "" when not run
    outputs: tuple[OutputPart, ...]  # printed output and display() outputs; the head when it was cut
    omitted_lines: int
    omitted_bytes: str  # formatted size, "" when nothing was left out
    full_output: str | None  # relative URL of the complete output
    error: BlockError | None
    artifacts: tuple[ArtifactView, ...]
    outputs_tail: tuple[OutputPart, ...] = ()  # after the cut, when the output was cut
    note: str = ""  # why it did not run, that it ended the script, or should have raised
    code: tuple[CodePart, ...] = ()  # the code, in parts (one unless something is folded or hidden)
    value: DisplayView | None = None  # its last expression's value, when one is shown
    display: CellDisplay = CellDisplay()  # its options: code and output shown, folded or left out
    # what the page calls it: the block's name; a notebook cell's label ("" : none, it shows no name)
    label: str = ""
    anchor: str = ""  # where a link to it leads: its section, or the figure its label names
    section_id: str = ""  # its section's id
    block_id: str = ""  # the block's id, which the ids of its parts start with (label_ids.block_ids)
    description_html: Markup = Markup("")  # the description rendered (Markdown: citations, links, terms)
    layout: FigureLayout = FigureLayout()  # its figures side by side, as one captioned figure; its table's caption

    @property
    def has_output(self) -> bool:
        """True when the cell shows something under its code (output, displays, value, files)."""
        return bool(self.outputs or self.outputs_tail or self.omitted_lines or self.value or self.artifacts)


def cell_names(cell: Cell, display: CellDisplay, notebook: bool, artifacts: tuple[ArtifactView, ...] = (),
               page: PageContext | None = None) -> dict[str, str]:
    """What the page calls a code cell, where links to it lead, its section's id and its block's:
    a script's block by its name; a notebook's cell by its label (``:name:``, ``#| label``) or
    nothing (its ``block-N`` stays an id only). A block's id is its name unless that cannot be
    an id of the page (label_ids.block_ids); a label's is of the label namespace: its captioned
    figure's (``artifacts``, captioned already), else the cell's section's."""
    block = (page.ids if page is not None else PageIds([cell.name])).block_id.get(cell.name, cell.name)
    if not notebook:
        return {"label": cell.name, "anchor": block, "section_id": block, "block_id": block}
    if not display.label:
        return {"label": "", "anchor": block, "section_id": block, "block_id": block}
    figure = next((a.caption.anchor for a in artifacts if a.caption is not None and a.caption.anchor), "")
    if figure or display.fig_cap or display.table_caption or page is None:  # the caption holds the label's id
        table = page.anchor(display.label) if display.table_caption and page is not None else ""
        return {"label": display.label, "anchor": figure or table or block, "section_id": block, "block_id": block}
    anchor = page.anchor(display.label) or block
    return {"label": display.label, "anchor": anchor, "section_id": anchor, "block_id": block}


def block_anchors(builds: Iterable[EntryBuild]) -> dict[str, dict[str, str]]:
    """Entry -> block name -> the block's id on the entry's page (label_ids.block_ids), for the
    pages that link to blocks (timings, the API index)."""
    return {b.entry.name: PageIds(c.name for c in b.script.code_cells).block_id for b in builds}


def with_late_links(page: PageContext, purpose: Markup | None, cells: list[CellView]
                    ) -> tuple[Markup | None, list[CellView]]:
    """The page's introduction and cells with the ``#name`` links their prose rendered before the
    heading they lead to was known (a notebook's table of contents) pointing at its id."""
    late = page.late_fragments()
    if not late:
        return purpose, cells

    def relinked(html: Markup) -> Markup:
        # cleaned again with the same allow-list: safe to mark up
        return Markup(clean_html(str(html), fragments=late, media=True)) if 'href="#' in html else html

    cells = [dataclasses.replace(c, html=relinked(c.html)) if isinstance(c, CellView) and c.kind == "markdown" else c
             for c in cells]
    return (relinked(purpose) if purpose is not None else None), cells


BIBLIOGRAPHY_HERE = '<div class="bibliography-here"></div>'  # templates/_prose_myst.html's bibliography_here


def with_bibliography(purpose: Markup | None, cells: list[CellView], references: Callable[[], Markup]
                      ) -> tuple[Markup | None, list[CellView], bool]:
    """The introduction and cells with the References list (``references()``) where the prose's
    first ``{bibliography}`` stands (later ones show nothing), and whether it was placed there."""
    placed = False

    def place(html: Markup) -> Markup:
        nonlocal placed
        if BIBLIOGRAPHY_HERE not in html:
            return html
        text = str(html)
        if not placed:
            placed = True
            text = text.replace(BIBLIOGRAPHY_HERE, str(references()), 1)
        return Markup(text.replace(BIBLIOGRAPHY_HERE, ""))  # the list and cleaned prose: safe

    purpose = place(purpose) if purpose is not None else None
    cells = [dataclasses.replace(c, html=place(c.html)) if isinstance(c, CellView) and c.kind == "markdown" else c
             for c in cells]
    return purpose, cells, placed


# ---------------------------------------------------------------- small formatters


def reproducibility(info: SiteInfo, seeded: bool, verdict: Verdict | None) -> str:
    """The page's sentence on reproducing its numbers: exactness is claimed only on the evidence of
    a ``check`` whose runs agreed (``verdict``), never after one that found a difference."""
    if verdict is not None and verdict.differed:
        return info.reproduce_differs.replace("{date}", verdict.date)
    if verdict is not None and verdict.agreed and seeded:
        return info.reproduce_verified.replace("{runs}", str(verdict.runs)).replace("{date}", verdict.date)
    return info.reproduce_unverified if seeded else ""


def poster_of(movie: str) -> str:
    """The figure an animation's file belongs to: B-x-animation-1.mp4 -> B-x-figure-1.png."""
    folder, _, name = movie.rpartition("/")
    head, _, number = name.rpartition(".")[0].rpartition("-animation-")
    stem = f"{head}-figure-{number}"
    return f"{folder}/{stem}.png" if folder else f"{stem}.png"


def safe_rel_path(path: str) -> str | None:
    """``path`` when it is a clean relative POSIX path inside its folder, else None."""
    p = PurePosixPath(path)
    if not path or p.is_absolute() or any(part in ("", ".", "..") for part in path.split("/")):
        return None
    return p.as_posix()


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def csv_preview(path: Path, delimiter: str = ",") -> CsvPreview | None:
    """The first rows of a CSV file (bounded read); None when it is empty or unreadable."""
    try:
        with open_regular(path.parent, path.name) as f:
            head = f.read(CSV_PREVIEW_BYTES + 1)
    except (OSError, UnsafeFileError):
        return None
    complete = len(head) <= CSV_PREVIEW_BYTES
    lines = head[:CSV_PREVIEW_BYTES].decode("utf-8", errors="replace").splitlines()
    if not complete:
        lines = lines[:-1]  # the last line may be cut in the middle
    try:
        rows = [row for row in csv.reader(io.StringIO("\n".join(lines)), delimiter=delimiter) if row]
    except csv.Error:
        return None
    if not rows:
        return None
    # A first row of words above a row with numbers is a header (np.savetxt(header=...) writes one).
    has_header = len(rows) > 1 and not any(map(_is_number, rows[0])) and any(map(_is_number, rows[1]))
    header = tuple(rows[0]) if has_header else ()
    body = rows[1:] if has_header else rows
    width = max(len(r) for r in [rows[0], *body[:CSV_PREVIEW_ROWS]])
    return CsvPreview(
        header=header[:CSV_PREVIEW_COLUMNS],
        rows=tuple(tuple(r[:CSV_PREVIEW_COLUMNS]) for r in body[:CSV_PREVIEW_ROWS]),
        more_rows=len(body) > CSV_PREVIEW_ROWS or not complete,
        more_columns=width > CSV_PREVIEW_COLUMNS,
    )


def letter_groups(entries: list[dict[str, object]]) -> list[LetterGroup]:
    """Index entries (sorted by name) grouped by initial letter; digits go under "#"."""
    groups: dict[str, list[dict[str, object]]] = {}
    for e in entries:
        initial = str(e["name"])[:1].upper()
        groups.setdefault(initial if initial.isalpha() else "#", []).append(e)
    return [
        LetterGroup(letter, "letter-other" if letter == "#" else f"letter-{letter.lower()}", tuple(items))
        for letter, items in sorted(groups.items(), key=lambda kv: (kv[0] != "#", kv[0]))
    ]
