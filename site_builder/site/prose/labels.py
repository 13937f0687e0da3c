"""The site-wide side of MyST prose: every page's labels, and one page's prose context.

A ``{ref}`` may name a label of any entry, so render_site reads all labels before it
renders a page (label_definitions: the resolve pass, no rendering); each
gets an id of the label namespace (label_ids). So do the anchors a notebook's raw HTML
names (``<a id>``), after its labels: a ``#name`` link leads to them from any cell of the
page (they are the page's own, never a ``{ref}`` target elsewhere). Images a page's prose shows are files of its
entry's folder, published under ``<entry>/_images/`` when prose.images allows. A
sphinx-exercise ``{solution-start}`` whose ``{solution-end}`` is in a later cell folds the
cells between (GateView: the template opens the ``<details>`` and closes it).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath

from site_builder.site.prose.images import VIDEO_EXTENSIONS, ProseImages
from site_builder.site.prose.label_ids import ID_RULE, PageIds, is_id_label
from site_builder.site.prose.markdown.boxes import exercise_title, solution_of, solution_title
from site_builder.site.prose.markdown.context import Label, PageContext
from site_builder.site.prose.markdown.context import Definition
from site_builder.site.prose.markdown.resolve import parse_resolved
from site_builder.site.sitefiles import EntryBuild, SiteFile
from site_builder.source.parsed import Cell, Script
from site_builder.source.cell_options import display_of
from site_builder.source.docstring import head_labels
from site_builder.source.entries import Entry
from site_builder.source.syntax.markdown import directive_of, parse

log = logging.getLogger(__name__)


def label_definitions(texts: list[str], typography: bool = False, languages: Sequence[str] = (),
                      notebook: bool = False, before: Callable[[int, PageContext], None] | None = None
                      ) -> list[Definition]:
    """The labels one page's prose texts define, in page order, numbered as rendering numbers
    them (``Definition.source``: the text's index), and, in a notebook's prose, the anchors its
    raw HTML names (``kind`` "html"); a name may come twice.  ``languages``: each text's
    ("markdown" when not given; "rst": read by prose.rst); ``before``: what comes before each
    text on the page (a code cell's numbered figures), given the text's index and the context."""
    page = PageContext(typography=typography, notebook=notebook)
    for source, text in enumerate(texts):
        page.source = source
        if before is not None:
            before(source, page)
        if not text.strip():
            continue
        if source < len(languages) and languages[source] == "rst":
            from site_builder.site.prose.rst import rst_definitions  # docutils: only for reST

            rst_definitions(text, page)
        else:
            parse_resolved(text, page)
    return page.definitions


def _doc_path(entry: Entry) -> str:
    """What a ``{doc}`` names the entry by: its source path without the suffix ("demos/basics/plot")."""
    rel = entry.rel_path
    if "//" in rel or rel.startswith("./") or "/./" in rel or rel.endswith(("/", "/.")) or rel in ("", "."):
        return str(PurePosixPath(rel).with_suffix(""))
    # a path in normal form (the usual one): what pathlib gives, without its parsing (every page's
    # document, on every build that changed something)
    folder, slash, name = rel.rpartition("/")
    dot = name.rfind(".")
    return folder + slash + (name[:dot] if 0 < dot < len(name) - 1 else name)


@dataclass
class SiteLabels:
    """The labels of the whole site, each page's own, what is wrong with them, and its documents."""

    first: dict[str, Label] = field(default_factory=dict)  # name -> its first definition in the site
    pages: dict[str, dict[str, Label]] = field(default_factory=dict)  # entry -> its own (the first of each name)
    problems: dict[str, list[str]] = field(default_factory=dict)  # entry -> what its page warns
    html_ids: dict[str, dict[str, str]] = field(default_factory=dict)  # entry -> raw HTML's anchors' ids
    docs: dict[str, tuple[str, str]] = field(default_factory=dict)  # doc path -> (entry, title)


# what one page defines (see page_labels): its labels, its raw HTML's anchors' ids, what is wrong with them
PageLabels = tuple[dict[str, Label], dict[str, str], list[str]]


def site_labels(pages: Iterable[tuple[Entry, str, PageLabels]]) -> SiteLabels:
    """The labels and documents of the site, from each (entry, page title, its page_labels),
    before any page renders.

    A ``{ref}`` links to its own page's label first; from another page, to the first page
    defining it (Sphinx does the same, and warns).
    """
    site = SiteLabels()
    for entry, title, (own, html_ids, page_problems) in pages:
        name = entry.name
        site.docs.setdefault(_doc_path(entry), (name, title))
        problems = list(page_problems)  # the page's own, kept as they are (see references.index)
        site.pages[name] = own
        site.html_ids[name] = html_ids
        for label_name, label in own.items():
            first = site.first.setdefault(label_name, label)
            if first is not label:
                problems.append(f"{name}: the label {label_name} at {label.where} is defined on {first.entry} too, "
                                f"at {first.where}: {{ref}} on this page links to this one, other pages' to {first.entry}'s")
        if problems:
            site.problems[name] = problems
    return site


def page_labels(build: EntryBuild, typography: bool = False) -> PageLabels:
    """The labels one page defines (prose, a code cell's ``#| label`` of a captioned figure),
    each with an id of the label namespace (label_ids), the ids of its raw HTML's anchors
    (after the labels: theirs never move for one), and what is wrong with them."""
    entry, script = build.entry, build.script
    ids = PageIds(c.name for c in script.cells if c.kind == "code")
    own: dict[str, Label] = {}
    anchors: list[tuple[str, str]] = []
    problems = [_renamed_block(entry, cell, *ids.renamed[cell.name]) for cell in script.code_cells
                if cell.name in ids.renamed]
    first: dict[str, str] = {}  # a label -> where it is first defined
    for kind, label_name, text, number, where in _definitions(entry, script, typography):
        if kind == "html":
            anchors.append((label_name, where))
            continue
        anchor = _allocated(entry, "label", label_name, where, first, ids, problems)
        if anchor:
            own[label_name] = Label(entry.name, anchor, text, where, number)
    first_html: dict[str, str] = {}
    html_ids = {name: anchor for name, where in anchors
                if (anchor := _allocated(entry, "HTML id", name, where, first_html, ids, problems))}
    return own, html_ids, problems


def _allocated(entry: Entry, what: str, name: str, where: str, first: dict[str, str], ids: PageIds,
               problems: list[str]) -> str:
    """The id of the label (or HTML id) ``name`` defined at ``where`` ("" for one that cannot be an
    id or came before, in ``first``, which notes where each is); what is wrong goes to ``problems``."""
    if not is_id_label(name):
        problems.append(f"{entry.name}: the {what} {name!r} at {where} cannot be an id ({ID_RULE}): "
                        "nothing links to it")
    elif name in first:
        problems.append(f"{entry.name}: the {what} {name} is defined twice on the page, at {first[name]} "
                        f"and at {where}: links lead to the first")
    else:
        anchor, clash = ids.allocate(name)
        if clash:
            problems.append(f"{entry.name}: the {what} {name} at {where} would take the id of {clash}: "
                            f"its id is {anchor}")
        first[name] = where
        return anchor
    return ""


def _renamed_block(entry: Entry, cell: Cell, anchor: str, why: str) -> str:
    """What the page says of a block whose name cannot be its id."""
    where = entry.place(cell.marker_line) if cell.marker_line else entry.rel_path
    return f"{entry.name}: block {cell.name!r} ({where}) cannot have its name as its id ({why}): its id is {anchor}"


def _definitions(entry: Entry, script: Script, typography: bool) -> Iterator[tuple[str, str, str, str, str]]:
    """(kind, label, what a reference shows, its number, where) of every label the page defines,
    and every anchor its raw HTML names (kind "html"), in page order."""
    intro, intro_language = (script.intro, script.prose) if script.title else (script.purpose, "markdown")
    texts = [intro] + [c.text if c.kind == "markdown" else "" for c in script.cells]
    languages = [intro_language] + [script.prose for _ in script.cells]
    cells = (None, *script.cells)

    def cell_labels(source: int, page: PageContext) -> None:
        """A code cell's captioned figure or table takes the page's next number (the prose's
        figures and the cells' are one sequence); its label is defined there."""
        cell = cells[source]
        if cell is None or cell.kind != "code":
            return
        display = display_of(cell.tags, (*cell.metadata_options, *cell.options))
        if display.label.startswith("tbl-") and display.table_caption:  # its table's caption (tbl-cap)
            number = page.number("table")
            page.define(display.label, f"Table {number}", str(number))
        elif display.fig_cap:  # the label: the id of its first captioned figure
            number = page.number("figure")
            if display.label:
                page.define(display.label, f"Figure {number}", str(number))
        elif display.label:  # a labelled cell (:name:, #| label:): its section, named by its label
            page.define(display.label, display.label)

    found = label_definitions(texts, typography, languages, notebook=is_notebook(entry), before=cell_labels)
    if script.title and script.prose == "rst":  # a label before the title names the page: its title shows
        top = set(head_labels(intro))
        found = [replace(d, text=script.title) if d.source == 0 and d.name in top else d for d in found]
    for d in found:
        cell = cells[d.source]
        where = f"{entry.rel_path}, block {cell.name}" if cell is not None and cell.kind == "code" else _place(
            entry, cell, d.source, texts[d.source], d.line)
        yield d.kind, d.name, d.text, d.number, where


def text_line(entry: Entry, text: str) -> int:
    """The 1-based line of the entry's source where ``text`` (a docstring's section, a MyST
    notebook's cell) begins, as it is in the file; 0 when it is not there as written."""
    start = entry.source.find(text) if entry.format != "ipynb" and text.strip() else -1
    return entry.source.count("\n", 0, start) + 1 if start >= 0 else 0


def _place(entry: Entry, cell: Cell | None, number: int, text: str, line: int) -> str:
    """Where line ``line`` of ``text`` (a cell's, or the docstring's when ``cell`` is None) is, for messages."""
    if cell is not None and cell.first_line > 0:
        return entry.place(cell.first_line + line)
    start = text_line(entry, text)
    if start:  # the docstring, a MyST notebook's cell: as it is in the file
        return entry.place(start + line)
    return f"{entry.rel_path}, cell {number}, line {line + 1}"


def is_notebook(entry: Entry) -> bool:
    """Whether the entry's prose is a notebook's (every notebook format), read as JupyterLab
    reads it: raw HTML rendered, ``#Heading-Text`` links; a script's prose (the project's own
    Markdown, house style or Sphinx-Gallery) shows raw HTML as text."""
    return entry.format != "py"


def prose_page(build: EntryBuild, root: str, site: SiteLabels, typography: bool = False
               ) -> tuple[PageContext, dict[str, SiteFile]]:
    """The prose context of ``build``'s page (``root``: from it to the site's root), and the
    images of its folder its prose shows (prose.images' rule), filled in as the page renders.
    Says what is wrong with the page's labels (warnings, as the page renders)."""
    entry = build.entry
    for problem in site.problems.get(entry.name, ()):
        log.warning("%s", problem)
    images = ProseImages(entry)
    own = site.pages.get(entry.name, {})
    ids = PageIds(c.name for c in build.script.cells if c.kind == "code")
    html_ids = dict(site.html_ids.get(entry.name, {}))
    ids.taken.update([*(label.anchor for label in own.values()), *html_ids.values()])
    page = PageContext(entry.name, _doc_path(entry), root, site.first, docs=site.docs,
                       publish_image=images.publish, own=own,
                       publish_attachment=images.publish_attachment,
                       publish_video=lambda src: images.publish(src, VIDEO_EXTENSIONS), ids=ids, typography=typography,
                       notebook=is_notebook(entry), html_ids=html_ids, table_widths=build.script.table_widths)
    if page.notebook and build.script.title:  # the title heading is the page's <h1>: its links lead to the top
        page.jupyter_heading(build.script.title, "main")
    return page, images.files


def say_warnings(page: PageContext, entry: Entry) -> None:
    """Log what the page's prose could not resolve, each with its entry, file and line."""
    for warning in page.warnings:
        where = entry.place(warning.line) if warning.line else entry.rel_path  # an included file's own line
        if warning.place:  # a .ipynb's cell: its lines are the cell's
            where = f"{entry.rel_path}, {warning.place}" + (f", line {warning.line}" if warning.line else "")
        log.warning("%s: %s: %s", entry.name, where, warning.message)


# ---------------------------------------------------------------- gates across cells

GATES = ("solution-start", "solution-end", "exercise-start", "exercise-end")


@dataclass(frozen=True)
class Gate:
    """A ``{solution-start}`` (or ``-end``, or exercise's) whose partner is in another cell."""

    opens: bool
    kind: str  # "solution" or "exercise"
    args: str
    options: dict[str, str]


def gate_split(text: str) -> list[str | Gate]:
    """``text`` cut at the gated directives whose partner is not in it (paired ones stay)."""
    lines = text.split("\n")
    found: list[tuple[int, int, Gate]] = []
    for token in parse(text):
        syntax = directive_of(token) if token.level == 0 and token.map else None
        if syntax is not None and syntax.name in GATES:
            assert token.map is not None
            kind, _, end = syntax.name.partition("-")
            found.append((token.map[0], token.map[1], Gate(end == "start", kind, syntax.argument, syntax.options)))
    unpaired, j = [], 0
    while j < len(found):
        gate = found[j][2]
        if gate.opens and j + 1 < len(found) and not found[j + 1][2].opens and found[j + 1][2].kind == gate.kind:
            j += 2  # start and end in this text: one directive (see resolve._gathered)
            continue
        unpaired.append(found[j])
        j += 1
    parts: list[str | Gate] = []
    start = 0
    for first, last, gate in unpaired:
        if "\n".join(lines[start:first]).strip():
            parts.append("\n".join(lines[start:first]))
        parts.append(gate)
        start = last
    if "\n".join(lines[start:]).strip():
        parts.append("\n".join(lines[start:]))
    return parts


@dataclass(frozen=True)
class GateView:
    """Where a solution or exercise spanning cells starts or ends, for the page template."""

    opens: bool
    element: str  # "details" (a solution: folded) or "div" (an exercise box)
    title: str = ""  # "Solution to Exercise 2", "Exercise 3 (title)"
    anchor: str = ""
    kind: str = "gate"
    html: str = ""  # a solution's link to its exercise; no headings (On this page reads them from html)


def expand_gates(cells: tuple[Cell, ...], prose_language: str) -> Iterator[tuple[int, Cell | Gate]]:
    """The cells (with their index), Markdown ones cut at gated directives whose end is in another cell."""
    for index, cell in enumerate(cells):
        if cell.kind != "markdown" or prose_language != "markdown" or "-start}" not in cell.text and "-end}" not in cell.text:
            yield index, cell
            continue
        for part in gate_split(cell.text):
            yield index, replace(cell, text=part) if isinstance(part, str) else part


class Gates:
    """Turns the gates of one page into views, numbering exercises in page order, balanced at the end."""

    def __init__(self, page: PageContext) -> None:
        self.page, self.open = page, []  # type: list[str]

    def view(self, gate: Gate) -> GateView | None:
        """The view of ``gate``; None for an end nothing opened."""
        if not gate.opens:
            if not self.open or self.open[-1] != gate.kind:
                return None
            self.open.pop()
            return GateView(False, "details" if gate.kind == "solution" else "div")
        self.open.append(gate.kind)
        label = gate.options.get("label") or gate.options.get("name") or ""
        anchor = self.page.anchor(label) if label else ""
        if gate.kind == "exercise":
            title, _text = exercise_title("exercise", gate.args, gate.options, self.page)
            return GateView(True, "div", title, anchor)
        return GateView(True, "details", solution_title(gate.args, self.page), anchor,
                        html=solution_of(gate.args, self.page))

    def closing(self) -> list[GateView]:
        """Ends for the gates still open when the page ends."""
        views = [GateView(False, "details" if kind == "solution" else "div") for kind in reversed(self.open)]
        self.open = []
        return views
