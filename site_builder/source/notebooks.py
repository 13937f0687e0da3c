"""Parse stage for notebooks: an ``.ipynb`` or a Jupytext Markdown notebook -> the same Script.

Read and checked by notebook_input (``.md`` with jupytext: MyST ``{code-cell}`` or Jupytext
Markdown, as its front matter says). Stored outputs are never read: the cells run as a script's
blocks do, through IPython (``run/child/shell.py``), and nothing is compiled here: a cell that
cannot be compiled fails at its turn, as in Jupyter. Line numbers:
in a Markdown notebook, the file's own lines; in an ``.ipynb``, lines counted through its
code cells (the first cell's first line is line 1, each cell one line after the last),
as the page numbers them.
"""

from __future__ import annotations

import ast
import bisect
import functools
import re
import warnings
from pathlib import Path
from typing import Any

from site_builder.errors import ParseError
from site_builder.source import cell_options
from site_builder.source.syntax import ipython as ipython_syntax
from site_builder.source.parsed import Cell, Script, module_imports, option_warnings, requirements_of
from site_builder.source.entries import is_notebook_markdown
from site_builder.source.markdown_head import document_head
from site_builder.source.notebook_input import read_notebook

RAW_HTML = "raw-html"  # the tag of a prose cell that is a raw cell of HTML (text/html)
# The attachment types a page shows, in the order a bundle's is chosen (prose.images checks them).
ATTACHMENT_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/svg+xml")

# A MyST code cell's opening fence (``` or more, or ~~~), as jupytext reads it.
_CODE_CELL_FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})\s*\{code-cell\}")
_FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})")
_PYTHON_NAMES = ("python", "python3", "ipython", "ipython3")
# Kernels of other languages, by the start of their kernelspec name (for a kernelspec
# without a language, as MyST-NB pages write it: "kernelspec: {name: coconut}").
_OTHER_KERNELS = ("ir", "julia", "coconut", "bash", "javascript", "typescript", "deno", "xcpp", "ruby",
                  "haskell", "scala", "sas", "octave", "matlab", "rust", "evcxr", "gophernotes", "java",
                  "kotlin", "csharp", ".net", "sos", "wolfram", "gnuplot", "sparkmagic", "pysparkkernel")


def _check_kernel(notebook: Any, rel_path: str, entry: str) -> None:
    """Refuse a notebook whose kernel is not Python (its cells would not run here)."""
    kernel = notebook.metadata.get("kernelspec") or {}
    language = kernel.get("language") or (notebook.metadata.get("language_info") or {}).get("name") or ""
    name = kernel.get("name") or ""
    if not language and isinstance(name, str) and name.lower().startswith(_OTHER_KERNELS):
        language = name.split("-")[0]
    if isinstance(language, str) and language and language.lower() not in _PYTHON_NAMES:
        name = kernel.get("display_name") or kernel.get("name") or language
        raise ParseError(f"{entry}: {rel_path} is a {name} notebook (kernel language {language!r}); "
                         "only Python notebooks can be built")


def _markdown_lines(source: str) -> list[int]:
    """The 1-based line of the first content line of each MyST code cell of ``source``, in order."""
    lines = source.split("\n")
    found: list[int] = []
    i = 0
    while i < len(lines):
        match = _CODE_CELL_FENCE.match(lines[i])
        other = None if match else _FENCE.match(lines[i])
        if other is not None:  # another fenced block (it may show a code-cell as an example)
            fence = other["fence"]
            i += 1
            while i < len(lines) and not lines[i].startswith(fence[0] * len(fence)):
                i += 1
            i += 1
            continue
        if match is None:
            i += 1
            continue
        i += 1
        if i < len(lines) and lines[i].strip() == "---":  # YAML options block
            i += 1
            while i < len(lines) and lines[i].strip() != "---":
                i += 1
            i += 1
        else:
            while i < len(lines) and lines[i].startswith(":") and ":" in lines[i][1:]:
                i += 1  # ":key: value" options
            if i < len(lines) and not lines[i].strip() and i > 0 and lines[i - 1].startswith(":"):
                i += 1  # the blank line after them
        found.append(i + 1)
        fence = match["fence"]
        while i < len(lines) and not lines[i].startswith(fence[0] * len(fence)):
            i += 1
        i += 1
    return found


def _tags(metadata: dict[str, Any]) -> tuple[str, ...]:
    """A cell's tags (the builder's spelling), JupyterLab's hidden input/output as tags."""
    tags = metadata.get("tags") or []
    found = [cell_options.canonical_tag(t) for t in tags if isinstance(t, str)]
    jupyter = metadata.get("jupyter") or {}
    if isinstance(jupyter, dict):
        found += ["hide-input"] * bool(jupyter.get("source_hidden"))
        found += ["hide-output"] * bool(jupyter.get("outputs_hidden"))
    return tuple(dict.fromkeys(found))


def _line_of(where: dict[str, list[int]], text: str, start: int) -> int:
    """The 1-based line (from ``start``) where ``text`` begins, 0 when not found (a Markdown
    cell's line, for the warnings about its prose); ``where``: each line's 0-based indexes, in
    order (a lookup, not a scan from ``start``: a notebook's cells are found in linear time)."""
    first = text.split("\n", 1)[0]
    found = where.get(first, []) if first.strip() else []
    at = bisect.bisect_left(found, start)
    return found[at] + 1 if at < len(found) else 0


def _metadata_options(metadata: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """A cell's label and figure caption from its metadata: MyST's ``:name:`` and ``:caption:``,
    MyST-NB's ``mystnb: figure: {name, caption}``."""
    mystnb = metadata.get("mystnb") if isinstance(metadata.get("mystnb"), dict) else {}
    figure = mystnb.get("figure") if isinstance(mystnb.get("figure"), dict) else {}
    found = {"label": metadata.get("name") or metadata.get("label") or figure.get("name"),
             "fig-cap": metadata.get("caption") or figure.get("caption")}
    return tuple((key, " ".join(value.split())) for key, value in found.items() if isinstance(value, str) and value.strip())


def notebook_cells(notebook: Any, source: str, rel_path: str, entry: str) -> tuple[list[Cell], str]:
    """The notebook's cells as Cells, and the text their line numbers count in."""
    is_markdown = not rel_path.lower().endswith(".ipynb")
    starts = _markdown_lines(source) if is_markdown else []
    code_sources = [c.source for c in notebook.cells if c.cell_type == "code"]
    text_lines = source.split("\n")
    where: dict[str, list[int]] = {}
    for i, line in enumerate(text_lines if is_markdown else ()):
        where.setdefault(line, []).append(i)
    exact = is_markdown and len(starts) == len(code_sources) and all(
        text_lines[start - 1:start - 1 + len(code.split("\n"))] == code.split("\n")
        for start, code in zip(starts, code_sources) if code)
    run_source_lines: list[str] = []  # the .ipynb's numbering: its code cells, one after the other
    cells: list[Cell] = []
    ordinal = 0
    cursor = 0  # a Markdown notebook's line where the next cell is looked for
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            line = _line_of(where, cell.source, cursor) if is_markdown else 0
            cursor = max(cursor, line)
            cells.append(Cell("markdown", "", cell.source, line, None, attachments=_attachments(cell)))
            continue
        if cell.cell_type == "raw" and _raw_format(cell) == "text/html":  # MyST-NB shows it as HTML
            cells.append(Cell("markdown", "", cell.source, 0, None, tags=(RAW_HTML,)))
            continue
        if cell.cell_type != "code":
            continue  # other raw cells: Jupyter Book leaves them out of the page too
        ordinal += 1
        lines = cell.source.split("\n")
        if exact:
            first = starts[ordinal - 1]
            cursor = first + len(lines) - 1
        else:
            first = len(run_source_lines) + 1
            run_source_lines += [*lines, ""]
        options, taken = cell_options.split_options(lines)
        text = "\n".join(lines[taken:]).rstrip("\n")
        first += taken
        cells.append(Cell("code", f"block-{ordinal}", text, first, first - taken, tags=_tags(cell.metadata),
                          options=options, metadata_options=_metadata_options(cell.metadata)))
    return cells, source if exact or not cells else "\n".join(run_source_lines)


def parse_page(source: str, rel_path: str) -> Script:
    """The Script of a Markdown page that is no notebook: one prose cell, the whole file; no code."""
    cells = (Cell("markdown", "", source.removeprefix("\ufeff"), 1, None),)
    head = document_head(cells, rel_path)
    return Script(summary=head.summary, title=head.title, title_at=head.title_at, purpose="", docstring="",
                  cells=cells, requirements=(), prose="markdown")


def _raw_format(cell: Any) -> str:
    """A raw cell's format, as JupyterLab (``raw_mimetype``) or nbformat (``format``) writes it."""
    found = cell.metadata.get("format") or cell.metadata.get("raw_mimetype") or ""
    return "text/html" if found in ("html", "text/html") else str(found)


def _attachments(cell: Any) -> tuple[tuple[str, str, str], ...]:
    """A Markdown cell's attached images (name, MIME type, data), the first image type of each
    bundle in the order a page prefers them; the schema has made each bundle a mapping."""
    found = []
    for name, bundle in (cell.get("attachments") or {}).items():
        mime = next((m for m in ATTACHMENT_TYPES if m in bundle), None)
        data = bundle.get(mime) if mime else None
        if isinstance(data, list) and all(isinstance(part, str) for part in data):
            data = "".join(data)
        if isinstance(data, str):
            found.append((str(name), mime, data))
    return tuple(found)


def parse_notebook(source: str, rel_path: str, entry: str, *, local_dir: Path | None = None) -> Script:
    """The Script of a notebook: its cells (Markdown prose, code blocks); ParseError on bad input."""
    if rel_path.lower().endswith(".md") and not is_notebook_markdown(source):
        return parse_page(source, rel_path)
    notebook = read_notebook(source, rel_path, entry)
    _check_kernel(notebook, rel_path, entry)
    cells, run_source = notebook_cells(notebook, source, rel_path, entry)
    imports = cell_imports(cells)
    head = document_head(cells, rel_path)
    return Script(
        summary=head.summary, title=head.title, title_at=head.title_at, purpose="", docstring="", cells=tuple(cells),
        requirements=requirements_of(imports, local_dir),
        warnings=tuple(option_warnings(cells, rel_path, entry)),
        prose="markdown", imports=imports,
        run_source="" if run_source == source else run_source,
        aliases=front_matter_list(notebook.metadata.get("aliases")),
        bibliography=front_matter_list(notebook.metadata.get("bibliography")),
        exports=front_matter_list(notebook.metadata.get("export")),
    )


def cell_imports(cells: list[Cell]) -> tuple[str, ...]:
    """The modules the code cells import at their top level, in cell order."""
    found: list[str] = []
    for cell in cells:
        if cell.kind == "code":
            # Nothing is compiled here: as in Jupyter, a cell that cannot be compiled fails at its
            # turn (ran by IPython, its magics too), and the cells before it run. Each cell is read
            # alone (no padding with the lines before it: linear in the number of cells).
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # SyntaxWarnings are the run's business
                    found += module_imports(ast.parse(ipython_syntax.as_python(cell.text)))
            except (SyntaxError, ValueError):
                pass  # it imports nothing we can know of
    return tuple(dict.fromkeys(found))


def front_matter_list(value: Any) -> tuple[str, ...]:
    """A front matter key's names: a list of strings, or one string (comma-separated for aliases)."""
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list):
        return ()
    names = (" ".join(v.split()) for v in value if isinstance(v, str))
    return tuple(dict.fromkeys(n for n in names if n))


def outline_notebook(source: str, rel_path: str, entry: str) -> Script:
    """What can be shown of a notebook that failed to parse: its cells, as far as it can be read."""
    if rel_path.lower().endswith(".md") and not is_notebook_markdown(source):
        return parse_page(source, rel_path)
    try:
        notebook = read_notebook(source, rel_path, entry)
        cells, _ = notebook_cells(notebook, source, rel_path, entry)
    except ParseError:
        cells = []
    head = document_head(cells, rel_path)  # its title, never its path, even when it fails
    return Script(summary=head.summary, purpose="", docstring="", cells=tuple(cells), requirements=(),
                  title=head.title, title_at=head.title_at)


# A build asks twice for each notebook it publishes (its page's download, the scripts archive), and
# serve's rebuilds again for the unchanged ones: the script depends on the text and the file name alone.
@functools.lru_cache(maxsize=64)
def notebook_as_script(source: str, rel_path: str) -> bytes:
    """The notebook as a Jupytext percent script (``# %%`` cells, options kept), for its download."""
    import jupytext

    try:
        notebook = read_notebook(source, rel_path, "")
    except ParseError as error:  # the page says why; the download must not take the build down
        return f"# This notebook could not be read as a notebook: {error}\n".encode("utf-8")
    for cell in notebook.cells:
        cell.outputs = [] if cell.cell_type == "code" else cell.get("outputs", None) or []
        if cell.cell_type != "code":
            cell.pop("outputs", None)
    return jupytext.writes(notebook, fmt="py:percent").encode("utf-8")
