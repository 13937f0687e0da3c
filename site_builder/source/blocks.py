"""Parse stage: an entry's source text -> its Script (docstring parts, cells), by the entry's format.

One parser, dispatching on the file's suffix as Sphinx-Gallery does: a Python script
(``scripts``: Jupytext percent cells, Sphinx-Gallery comment blocks) or a notebook
(``notebooks``: ``.ipynb``, Jupytext/MyST ``.md``) or a Quarto document (``quarto``: ``.qmd``).  What
it gives, Cell and Script, is defined in ``parsed``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from site_builder.source.parsed import Script
from site_builder.source.notebooks import outline_notebook, parse_notebook
from site_builder.source.scripts import outline_script, parse_script

if TYPE_CHECKING:
    from site_builder.source.entries import Entry

__all__ = ["is_notebook_path", "outline", "parse", "parse_entry"]

NOTEBOOK_SUFFIXES = (".ipynb", ".md", ".qmd")


def is_notebook_path(rel_path: str) -> bool:
    """True when the file at ``rel_path`` is read as a notebook (``.ipynb``, Jupytext ``.md``, Quarto ``.qmd``)."""
    return rel_path.lower().endswith(NOTEBOOK_SUFFIXES)


def parse(
    source: str, rel_path: str, entry: str, *, local_dir: Path | None = None,
    prose: Literal["auto", "markdown", "rst"] = "auto", origins: tuple[tuple[str, int], ...] = (),
    variables: str = "",
) -> Script:
    """Split ``source`` into cells and read its docstring (or front matter); raise ParseError on bad input.

    ``local_dir`` is the entry's folder: modules found there are not requirements;
    ``prose`` the language of a script's prose ("auto": see scripts.prose_language; a
    notebook's is Markdown); ``origins``: a .qmd's includes (Entry.origins), named by its messages;
    ``variables``: its project variables (Entry.variables).
    """
    if rel_path.lower().endswith(".qmd"):
        from site_builder.source.quarto.reader import parse_quarto  # imported by a project with .qmd entries only

        return parse_quarto(source, rel_path, entry, local_dir=local_dir, origins=origins, variables=variables)
    if is_notebook_path(rel_path):
        return parse_notebook(source, rel_path, entry, local_dir=local_dir)
    return parse_script(source, rel_path, entry, local_dir=local_dir, prose=prose)


def parse_entry(entry: Entry, prose: str) -> Script:
    """``entry``'s Script, its prose setting ``prose`` (see :func:`parse`; ParseError on bad input)."""
    return parse(entry.source, entry.rel_path, entry.name, local_dir=entry.path.parent, origins=entry.origins,
                 variables=entry.variables, prose=prose)


def outline(source: str, rel_path: str, entry: str) -> Script:
    """What can be shown of an entry that failed to parse: its cells, as far as they can be read.

    Used for the failed build's page of that entry; nothing is compiled or checked.
    """
    if rel_path.lower().endswith(".qmd"):
        from site_builder.source.quarto.reader import outline_quarto

        return outline_quarto(source, rel_path, entry)
    outliner: Callable[[str, str, str], Script] = outline_notebook if is_notebook_path(rel_path) else outline_script
    return outliner(source, rel_path, entry)
