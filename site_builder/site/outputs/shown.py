"""A code cell's options applied to what its page shows (see source/cell_options.py).

The template folds or leaves out the code and output (``CellView.display``); here the
output streams a ``remove-stdout`` / ``remove-stderr`` tag drops are left out, and figures
get their ``fig-cap`` caption number, ``fig-alt`` text and ``label`` anchor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from site_builder.run.execute import BlockResult
from site_builder.source.cell_options import CellDisplay

_Artifact = TypeVar("_Artifact", bound=Any)  # render.ArtifactView (is_image, alt, caption)


@dataclass(frozen=True)
class FigureCaption:
    """How one figure of a cell is captioned on the page."""

    number: int  # "Figure N", counted through the page's captioned figures
    text: str  # the fig-cap text
    anchor: str  # its id ("" : none), from the cell's label (its first figure only; see label_ids)


@dataclass(frozen=True)
class FigureLayout:
    """How a cell's figures are laid out (Quarto's layout-ncol, layout-nrow, fig-subcap, tbl-cap)."""

    columns: int = 0  # figures side by side, so many a row (0: one a row)
    caption: FigureCaption | None = None  # fig-subcap: the figures are one, numbered, under this caption
    table: FigureCaption | None = None  # tbl-cap: "Table N" above its output


def shown_streams(block: BlockResult, display: CellDisplay) -> BlockResult:
    """``block`` without the output streams the cell's tags remove."""
    if display.stdout and display.stderr:
        return block
    kept = {"display", "stdout"} if display.stdout else {"display"}  # display() outputs are no stream
    kept |= {"stderr"} if display.stderr else set()
    return replace(block, output=tuple(c for c in block.output if c.stream in kept))


class FigureNumbers:
    """Numbers the captioned figures and tables of one page's cells, in page order; ``anchor``: a
    cell's label -> the id of its first captioned figure (the page's PageContext.anchor, see
    label_ids); ``number``: the page's next number of a kind (PageContext.number), so that the
    prose's figures and tables and the cells' are one sequence, as Quarto numbers them."""

    def __init__(self, anchor: Callable[[str], str] = lambda label: "",
                 number: Callable[[str], int] | None = None) -> None:
        counters: dict[str, int] = {}

        def own(kind: str) -> int:
            counters[kind] = counters.get(kind, 0) + 1
            return counters[kind]

        self.anchor, self.number = anchor, number or own

    def place(self, artifacts: tuple[_Artifact, ...], display: CellDisplay
              ) -> tuple[tuple[_Artifact, ...], FigureLayout]:
        """The cell's artifact views captioned (see caption), and the layout of its figures."""
        table = None
        if display.table_caption:
            anchor = self.anchor(display.label) if display.label.startswith("tbl-") else ""
            table = FigureCaption(self.number("table"), display.table_caption, anchor)
        images = sum(1 for view in artifacts if view.is_image)
        columns = display.columns or (-(-images // display.rows) if display.rows else 0)
        if not display.fig_subcaps:
            return self.caption(artifacts, display), FigureLayout(min(columns, 6), None, table)
        group = None
        if display.fig_cap and images:
            group = FigureCaption(self.number("figure"), display.fig_cap, self.anchor(display.label) if display.label else "")
        found, letter = [], 0
        for view in artifacts:
            if view.is_image:
                text = display.fig_subcaps[letter] if letter < len(display.fig_subcaps) else ""
                view = replace(view, subcaption=f"({chr(ord('a') + letter % 26)}) {text}".rstrip(),
                               alt=display.fig_alt or text or view.alt)
                letter += 1
            found.append(view)
        return tuple(found), FigureLayout(min(columns or len(display.fig_subcaps), 6), group, table)

    def caption(self, artifacts: tuple[_Artifact, ...], display: CellDisplay) -> tuple[_Artifact, ...]:
        """A cell's artifact views, its images numbered and captioned by its fig-cap, its fig-alt their alt."""
        if not (display.fig_cap or display.fig_alt):
            return artifacts
        found = []
        for view in artifacts:
            if view.is_image:
                caption = None
                if display.fig_cap:
                    first = not any(getattr(v, "caption", None) for v in found)
                    anchor = self.anchor(display.label) if first and display.label else ""
                    caption = FigureCaption(self.number("figure"), display.fig_cap, anchor)
                view = replace(view, caption=caption, alt=display.fig_alt or display.fig_cap or view.alt)
            found.append(view)
        return tuple(found)


def column_widths_css(section_id: str, widths: tuple[float, ...]) -> str:
    """The rules giving the tables a cell shows (its HTML and Markdown displays) Quarto's
    ``tbl-colwidths``, scoped to the cell's section; for the page's style sheet (the
    Content-Security-Policy runs no ``style`` attribute)."""
    scope = '[id="' + section_id.replace("\\", "\\\\").replace('"', '\\"') + '"] .value-html table'
    rules = [f"{scope} {{ table-layout: fixed; width: 100%; }}"]
    rules += [f"{scope} tr > :nth-child({n}) {{ width: {w:g}%; }}" for n, w in enumerate(widths, 1)]
    return "\n".join(rules)
