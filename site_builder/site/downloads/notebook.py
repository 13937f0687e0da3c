"""A demo as a Jupyter notebook: one code cell per block, its name and description above it.

Prose is Markdown there (reST prose converted, rst_markdown.py); lines the page hides
(sphinx_gallery_ settings, start/end_ignore ranges) are left out, as Sphinx-Gallery does.

Written as nbformat writes it (the same bytes, without importing nbformat) and deterministic:
cell ids come from the cell order and the outputs from the run record, so the same run gives
the same bytes.

Outputs are as careful as the page: a notebook viewer renders what it is given, on whatever
origin it runs.  A form the page shows goes through the page's sanitiser (HTML through nh3,
SVG through svg.py, Markdown rendered as the page renders it, LaTeX only when the page can
render it); forms the page does not show (``application/javascript``, vendor types that
carry code for their renderer) are dropped.
"""

from __future__ import annotations

import ast
import base64
import json
from collections.abc import Iterable
from pathlib import Path

from site_builder.source.parsed import Cell, Script
from site_builder.source.gallery import shown_code
from site_builder.source.notebooks import RAW_HTML
from site_builder.json_text import indented
from site_builder.fs import UnsafeFileError, UnsafePathError, open_regular
from site_builder.run.execute import BlockResult, Display, RunResult
from site_builder.site.outputs.displays import IMAGE_TYPES, latex_html, markdown_html
from site_builder.site.prose.images import attachment_content
from site_builder.site.outputs.interactive import PLOTLY_MIME
from site_builder.site.safety.html import clean_html
from site_builder.site.safety.svg import UnsafeSvgError, clean_svg

KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}
NBFORMAT, NBFORMAT_MINOR = 4, 5  # the format nbformat.v4 writes (4.5: cells have ids)
LINE_SPLIT_MIMES = ("application/javascript", "image/svg+xml")  # split into lines as text/* is


def _without_docstring(cell: Cell, docstring: str) -> str:
    """The setup cell's code minus the module docstring (it becomes the first Markdown cell)."""
    if not docstring or cell.first_line != 1:
        return cell.text
    try:
        body = ast.parse(cell.text).body
    except SyntaxError:
        return cell.text
    first = body[0] if body else None
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str) and first.end_lineno is not None):
        return cell.text
    return "\n".join(cell.text.splitlines()[first.end_lineno:]).strip("\n")


def _markdown(text: str, attachments: tuple[tuple[str, str, str], ...] = ()) -> dict[str, object]:
    cell: dict[str, object] = {"cell_type": "markdown", "metadata": {}, "source": text}
    kept = {}  # the images the page shows, as the page shows them (SVG made inert); nothing else
    for name, mime, data in attachments:
        content, _ = attachment_content(mime, data)
        if content is not None:
            kept[name] = {mime: content.decode("utf-8") if mime == "image/svg+xml" else data}
    if kept:
        cell["attachments"] = kept
    return cell


def _code(cell: Cell, text: str, outputs: list[dict[str, object]]) -> dict[str, object]:
    """A code cell keeping the block's options: its tags in the metadata, its ``#|`` lines on top."""
    metadata: dict[str, object] = {"tags": list(cell.tags)} if cell.tags else {}
    options = "".join(f"#| {key}: {value}\n" for key, value in cell.options)
    return {"cell_type": "code", "metadata": metadata, "execution_count": None, "source": options + text,
            "outputs": outputs}


def _outputs(block: BlockResult | None, values: bool = True, files_dir: Path | None = None) -> list[dict[str, object]]:
    """Outputs of one block as it last ran: its streams and ``display_data`` outputs in order, with
    the truncation note where the cut is, then the value of its last expression as an
    ``execute_result``, then its figures (an animation's poster frame), as Jupyter shows them."""
    if block is None:
        return []
    chunks: list[tuple[str, str | Display]] = [
        ("display", c.display) if c.display is not None else (c.stream, c.text) for c in block.output]
    if block.omitted_lines or block.omitted_bytes:
        at = block.omitted_at if block.omitted_at is not None else len(chunks)
        chunks.insert(at, ("stdout", f"… {block.omitted_lines} lines left out …\n"))
    outputs: list[dict[str, object]] = []
    for stream, content in chunks:
        if isinstance(content, Display):
            data = _bundle(content, files_dir)
            if data:
                outputs.append({"output_type": "display_data", "data": data, "metadata": {}})
        elif content:
            outputs.append({"output_type": "stream", "name": stream, "text": content})
    if values and block.value is not None and (data := _bundle(block.value, files_dir)):
        outputs.append({"output_type": "execute_result", "execution_count": None, "data": data,
                        "metadata": {}})
    for art in block.artifacts if files_dir is not None else ():
        if art.kind != "figure":  # an animation's figure is its poster frame
            continue
        figure = Display(data={"text/plain": art.alt or "<Figure>"}, files={"image/png": art.path})
        data = _bundle(figure, files_dir)
        if "image/png" in data:
            size = {"width": art.width, "height": art.height} if art.width and art.height else {}
            outputs.append({"output_type": "display_data", "data": data,
                            "metadata": {"image/png": size} if size else {}})
    return outputs


def _bundle(display: Display, files_dir: Path | None) -> dict[str, object]:
    """A Display as a notebook's MIME bundle: the forms the page could show, sanitised as the
    page sanitises them, the files read back; nothing else (no script ever)."""
    data: dict[str, object] = {}
    for mime, text in display.data.items():
        form = _safe_form(mime, text)
        if form is not None:
            data[mime] = form
    if "text/html" not in data and "text/markdown" in display.data:
        html = markdown_html(display.data["text/markdown"])  # raw HTML in it shown as text, as on the page
        if html:
            data["text/html"] = html
    for mime, path in display.files.items() if files_dir is not None else ():
        try:
            with open_regular(files_dir, path) as f:
                content = f.read()
        except (UnsafeFileError, UnsafePathError, OSError):
            continue
        if mime == "image/svg+xml":
            try:
                data[mime] = clean_svg(content).decode("utf-8")
            except (UnsafeSvgError, UnicodeDecodeError):
                data.pop(mime, None)
        elif mime in IMAGE_TYPES:
            data[mime] = base64.b64encode(content).decode("ascii")
    return data


def _safe_form(mime: str, text: str) -> object | None:
    """One text form of a bundle as the download carries it, or None when it is left out."""
    if mime == "text/plain":
        return text
    if mime == "text/html":
        return clean_html(text).strip() or None  # sanitised as on the page: a viewer may trust it
    if mime == "text/latex":
        return text if latex_html(text) else None  # a formula the page renders (no \\href, \\require...)
    if mime == "image/svg+xml":
        try:
            return clean_svg(text.encode("utf-8")).decode("utf-8")
        except UnsafeSvgError:
            return None
    if mime in IMAGE_TYPES:  # base64 of a raster image
        try:
            base64.b64decode(text, validate=True)
        except ValueError:
            return None
        return text
    if mime in ("application/json", PLOTLY_MIME):  # data the page shows (pretty-printed, or drawn)
        try:
            return json.loads(text)
        except ValueError:
            return None
    return None  # text/markdown becomes HTML (below); javascript and other vendor types never


def _block_heading(cell: Cell) -> str:
    text = f"### `{cell.name}`"
    return f"{text}\n\n{cell.description}" if cell.description else text


def _rst_to_markdown():  # type: ignore[no-untyped-def]
    # docutils only for a script with reST prose (prose.py keeps it out of Markdown-only sites)
    from site_builder.site.downloads.rst_markdown import rst_to_markdown

    return rst_to_markdown


def prepare_notebooks(scripts: Iterable[Script] = ()) -> None:
    """Convert the reST prose of ``scripts`` for their notebooks now (make_notebook then finds
    it converted)."""
    for script in scripts:
        if script.prose == "rst":
            to_markdown = _rst_to_markdown()
            to_markdown(script.docstring.strip())
            for cell in script.cells:
                if cell.kind == "markdown" and RAW_HTML not in cell.tags:
                    to_markdown(cell.text, 1)


def make_notebook(name: str, script: Script, result: RunResult | None, values: bool = True,
                  from_notebook: bool = False) -> bytes:
    """The demo as ``.ipynb`` bytes (nbformat 4); outputs from ``result`` when given,
    with the blocks' values unless ``values`` is off. ``from_notebook``: the entry is a notebook
    already, its cells kept as they are (no title or block headings added)."""
    by_name = {b.name: b for b in result.blocks} if result else {}
    docstring = script.docstring.strip()
    to_markdown = _rst_to_markdown() if script.prose == "rst" else None
    if to_markdown is not None:  # Jupyter shows Markdown: the reST becomes Markdown (its title too)
        docstring = to_markdown(docstring)
    intro = docstring if script.title and docstring else (f"# {name}\n\n{docstring}" if docstring else f"# {name}")
    # Plain dicts: nbformat's new_*_cell validate each cell (slow) and pick random cell ids (the
    # same demo must give the same bytes).
    cells = [] if from_notebook else [_markdown(intro)]
    for cell in script.cells:
        if cell.kind == "markdown" and RAW_HTML in cell.tags:  # a raw cell it was, Jupyter shows as text
            cells.append({"cell_type": "raw", "metadata": {"format": "text/html"}, "source": cell.text})
            continue
        if cell.kind == "markdown":
            cells.append(_markdown(to_markdown(cell.text, 1) if to_markdown is not None else cell.text, cell.attachments))
            continue
        code = shown_code(_without_docstring(cell, script.docstring) if cell.name == "setup" else cell.text)
        if not from_notebook and (cell.name != "setup" or cell.description):
            cells.append(_markdown(_block_heading(cell)))
        cells.append(_code(cell, code, _outputs(by_name.get(cell.name), values, result.files_dir if result else None)))
    for index, nb_cell in enumerate(cells):
        nb_cell["id"] = f"cell-{index}"
    # The file nbformat.writes makes of this notebook, byte for byte (test_notebook_download checks
    # it), without importing nbformat: its import pulls in jsonschema and its validators, about
    # 60 ms a build that writes a notebook. Its writer's other steps do nothing here: validation
    # (the shapes above are ours, and the tests validate each kind of cell and output), the deep
    # copy (every dict above is made here, used once) and strip_transient (no cell or notebook
    # metadata here is transient).
    notebook = {"nbformat": NBFORMAT, "nbformat_minor": NBFORMAT_MINOR, "cells": _lines_split(cells),
                "metadata": {"kernelspec": KERNELSPEC, "language_info": {"name": "python"}}}
    return (indented(notebook, ensure_ascii=False) + "\n").encode("utf-8")


def _lines_split(cells: list[dict[str, object]]) -> list[dict[str, object]]:
    """``cells`` with their multi-line texts as lists of lines (ends kept), where nbformat's writer
    splits them: sources, stream texts, and the text forms of attachments and output bundles."""
    for cell in cells:
        if isinstance(source := cell["source"], str):
            cell["source"] = source.splitlines(True)
        for bundle in cell.get("attachments", {}).values():  # type: ignore[attr-defined]
            _bundle_split(bundle)
        for output in cell.get("outputs", ()):  # type: ignore[attr-defined]
            if output["output_type"] in ("execute_result", "display_data"):
                _bundle_split(output["data"])
            elif output["output_type"] == "stream" and isinstance(output["text"], str):
                output["text"] = output["text"].splitlines(True)
    return cells


def _bundle_split(bundle: dict[str, object]) -> None:
    for mime, value in bundle.items():
        if isinstance(value, str) and (mime.startswith("text/") or mime in LINE_SPLIT_MIMES):
            bundle[mime] = value.splitlines(True)
