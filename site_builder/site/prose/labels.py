"""The site-wide side of MyST prose: every page's labels, and one page's prose context.

A ``{ref}`` may name a label of any entry, so render_site reads all labels before it
renders a page (markdown.resolve.labels_of: the resolve pass, no rendering). Images a page's prose shows are
files of its entry's folder, published under ``<entry>/_images/``. A sphinx-exercise
``{solution-start}`` whose ``{solution-end}`` is in a later cell folds the cells between
(GateView: the template opens the ``<details>`` and closes it).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from urllib.parse import quote

from site_builder.fs import UnsafeFileError, UnsafePathError, open_regular
from site_builder.site.prose.markdown.boxes import exercise_title, solution_title
from site_builder.site.prose.markdown.context import Label, PageContext
from site_builder.site.prose.markdown.resolve import labels_of
from site_builder.site.sitefiles import EntryBuild, SiteFile
from site_builder.source.blocks import Cell
from site_builder.source.entries import Entry
from site_builder.source.markdown_syntax import directive_of, parse

log = logging.getLogger(__name__)


def _doc_path(entry: Entry) -> str:
    """What a ``{doc}`` names the entry by: its source path without the suffix ("demos/basics/plot")."""
    return str(PurePosixPath(entry.rel_path).with_suffix(""))


def site_labels(pages: list[tuple[EntryBuild, str]], typography: bool = False
                ) -> tuple[dict[str, Label], dict[str, tuple[str, str]]]:
    """The labels and documents of the site, from each (build, page title).

    A label defined twice links to its first page (Sphinx warns and does the same).
    """
    labels: dict[str, Label] = {}
    docs: dict[str, tuple[str, str]] = {}
    for build, title in pages:
        name = build.entry.name
        docs.setdefault(_doc_path(build.entry), (name, title))
        if build.script.prose != "markdown":
            continue
        texts = [c.text for c in build.script.cells if c.kind == "markdown"]
        for label_name, label in labels_of(name, texts, typography).items():
            labels.setdefault(label_name, label)
    return labels, docs


def prose_page(entry: Entry, root: str, labels: dict[str, Label], docs: dict[str, tuple[str, str]],
               typography: bool = False) -> tuple[PageContext, dict[str, SiteFile]]:
    """The prose context of ``entry``'s page (``root``: from it to the site's root), and the
    images of its folder its prose shows, filled in as the page renders."""
    images: dict[str, SiteFile] = {}
    folder = entry.path.parent

    def publish_image(rel: str) -> str | None:
        try:
            open_regular(folder, rel).close()  # a regular file of the entry's folder, no link followed
        except (UnsafeFileError, UnsafePathError) as exc:
            log.warning("%s: the image %s of its prose is not published: %s", entry.name, rel, exc)
            return None
        images[rel] = SiteFile(path=f"{entry.name}/_images/{rel}", source=folder / rel, root=folder)
        return f"_images/{quote(rel)}"

    return PageContext(entry.name, _doc_path(entry), root, labels, docs, publish_image, typography=typography), images


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


def say_warnings(page: PageContext, entry: Entry) -> None:
    """Log what the page's prose could not resolve, each with its entry, file and line."""
    for warning in page.warnings:
        where = f"{entry.rel_path}:{warning.line}" if warning.line else entry.rel_path
        log.warning("%s: %s: %s", entry.name, where, warning.message)


@dataclass(frozen=True)
class GateView:
    """Where a solution or exercise spanning cells starts or ends, for the page template."""

    opens: bool
    element: str  # "details" (a solution: folded) or "div" (an exercise box)
    title: str = ""  # "Solution to Exercise 2", "Exercise 3 (title)"
    anchor: str = ""
    kind: str = "gate"
    html: str = ""  # no prose of its own (On this page reads prose headings from html)


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
        label = gate.options.get("label", "")
        if gate.kind == "exercise":
            title, _text = exercise_title("exercise", gate.args, gate.options, self.page)
            return GateView(True, "div", title, label)
        return GateView(True, "details", solution_title(gate.args, self.page), label)

    def closing(self) -> list[GateView]:
        """Ends for the gates still open when the page ends."""
        views = [GateView(False, "details" if kind == "solution" else "div") for kind in reversed(self.open)]
        self.open = []
        return views
