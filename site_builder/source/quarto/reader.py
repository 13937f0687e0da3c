"""A ``.qmd`` document -> the Script a notebook becomes, and the notebook its page offers."""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

from site_builder.errors import ParseError
from site_builder.source.cell_options import column_widths
from site_builder.source.parsed import Cell, Script, option_warnings, requirements_of
from site_builder.source.markdown_head import document_head
from site_builder.source.notebooks import cell_imports
from site_builder.source.quarto.document import Split, document_cells, split_document
from site_builder.source.quarto.front import FrontMatter, read_front
from site_builder.source.quarto.shortcodes import VARIABLES_FILE, remap_places, with_values
from site_builder.source.syntax.yaml_guard import load_plain_yaml


def parse_quarto(source: str, rel_path: str, entry: str, *, local_dir: Path | None = None,
                 origins: tuple[tuple[str, int], ...] = (), variables: str = "") -> Script:
    """The Script of the Quarto document ``source``; ParseError when it cannot be built; its
    messages name an included line's own file and line (``origins``: source.entries.Entry's);
    ``variables``: the project's _variables.yml (Entry.variables)."""
    try:
        script = _parse(source, rel_path, entry, local_dir, variables)
    except ParseError as exc:
        if origins:  # the same error (its block, line, type kept), naming the included file
            exc.args = (remap_places(str(exc), rel_path, origins), *exc.args[1:])
        raise
    if not origins:
        return script
    return replace(script, warnings=tuple(remap_places(w, rel_path, origins) for w in script.warnings))


def _parse(source: str, rel_path: str, entry: str, local_dir: Path | None, variables: str) -> Script:
    where = f"{entry}: {rel_path}"
    found = split_document(source, where)
    front = read_front(found.front, where, lambda: _modified(local_dir, rel_path))
    values = _variables_of(variables)
    problems = [] if isinstance(values, dict) else [
        f"{where}: {VARIABLES_FILE} is no YAML mapping (or uses anchors): its variables are left out"]
    cells = [replace(cell, text=with_values(cell.text, found.front, values)) if cell.kind == "markdown" else cell
             for cell in document_cells(source, found, front.defaults)]
    imports = cell_imports(cells)
    head = document_head(cells, rel_path)
    if front.title:  # the front matter's title is the page's; a heading in the prose stays in it
        head = replace(head, title=front.title, title_at=None)
    return Script(
        summary=front.description or head.summary, title=head.title, title_at=head.title_at, purpose="",
        docstring="", cells=tuple(cells), requirements=requirements_of(imports, local_dir),
        warnings=(*found.warnings, *front.warnings, *problems, *option_warnings(cells, rel_path, entry)),
        prose="markdown", imports=imports, aliases=front.aliases, bibliography=front.bibliography,
        subtitle=front.subtitle, authors=front.authors, date=front.date, abstract=front.abstract,
        table_widths=column_widths(dict(front.defaults).get("tbl-colwidths", "")),
    )


@functools.lru_cache(maxsize=4)
def _variables_of(text: str) -> object:
    """The project's _variables.yml read (once for every document of a build: they share it; only read)."""
    return load_plain_yaml(text) if text.strip() else {}


def outline_quarto(source: str, rel_path: str, entry: str) -> Script:
    """What can be shown of a document that failed to parse: its prose and cells, as far as they
    can be read (an unreadable front matter or another language's cell: its prose alone)."""
    where = f"{entry}: {rel_path}"
    try:
        found = split_document(source, where)
        front = read_front(found.front, where, lambda: None)
    except ParseError:
        found, front = Split(), FrontMatter()  # its text as prose
    cells = document_cells(source, found, ())
    head = document_head(cells, rel_path)
    return Script(summary=head.summary, purpose="", docstring="", cells=tuple(cells), requirements=(),
                  title=front.title or head.title, title_at=None if front.title else head.title_at)


def quarto_notebook(source: str, rel_path: str, variables: str = "") -> Any:
    """The document as an nbformat 4 notebook (its prose and code cells, no outputs), for downloads."""
    import nbformat

    try:
        script = parse_quarto(source, rel_path, "", variables=variables)
    except ParseError:
        script = outline_quarto(source, rel_path, "")
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for cell in script.cells:
        notebook.cells.append(nbformat.v4.new_code_cell(_with_options(cell)) if cell.kind == "code"
                              else nbformat.v4.new_markdown_cell(cell.text))
    if script.title and not script.title_at:
        notebook.cells.insert(0, nbformat.v4.new_markdown_cell(f"# {script.title}"))
    return notebook


def _with_options(cell: Cell) -> str:
    """A code cell's text with its ``#|`` lines (the document's defaults too: they are the cell's)."""
    own = [f"#| {key}: {value}" for key, value in cell.options]
    return "\n".join([*own, cell.text]) if own else cell.text


def _modified(local_dir: Path | None, rel_path: str) -> dt.date | None:
    """The day the document was last modified (``date: last-modified``), None when unknown."""
    if local_dir is None:
        return None
    try:
        return dt.date.fromtimestamp((local_dir / PurePosixPath(rel_path).name).stat().st_mtime)
    except OSError:
        return None
