"""Parse stage: a demo's source text -> its docstring parts and its cells (blocks)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True)
class Cell:
    """One cell of a demo: a named code block or a Markdown prose cell."""

    kind: Literal["code", "markdown"]
    name: str  # "setup", "B-train", ...; markdown cells: "" (they have no anchor of their own)
    text: str  # code: the block's source lines (no marker line, trailing blank lines dropped);
    #            markdown: the Markdown text with the leading "# " comment prefix removed
    first_line: int  # 1-based line number in the script of the first line of ``text``
    marker_line: int | None  # 1-based line of the "# %%" marker; None for setup
    description: str = ""  # from the docstring's Blocks section, "" when none
    tags: tuple[str, ...] = ()  # Jupytext cell metadata tags, e.g. ("raises-exception",)


@dataclass(frozen=True)
class Script:
    """Everything the parse stage learns from one demo's source."""

    summary: str  # first line of the module docstring ("" when no docstring)
    purpose: str  # the docstring's Purpose section, Markdown ("" when none)
    docstring: str  # the whole module docstring
    cells: tuple[Cell, ...]  # in script order; cells[0] is the setup block
    requirements: tuple[str, ...]  # third-party top-level imports, display names ("NumPy", ...)
    warnings: tuple[str, ...] = field(default=())  # one-line messages (Blocks list mismatches)

    @property
    def code_cells(self) -> tuple[Cell, ...]:
        """The code cells only, in script order."""
        return tuple(c for c in self.cells if c.kind == "code")


def parse(source: str, rel_path: str, entry: str) -> Script:
    """Split ``source`` into cells and read its docstring; raise ParseError on bad input."""
    raise NotImplementedError
