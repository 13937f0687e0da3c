"""A Python script's parser: its source text -> its docstring parts and its cells (blocks).

Cells are delimited by Jupytext "percent" markers (``# %% Title [markdown] key=value``),
found among the real comment tokens at column 0 so a ``# %%`` inside a string is ignored.
Naming rules: the text before the first marker is the ``setup`` cell (dropped only when
the script has markers and nothing but blank lines precedes the first one); a code marker
without a title is named ``block-N``, N being its 1-based ordinal among the code cells.

Sphinx-Gallery style: after an untitled ``# %%`` (or a line of 20 or more ``#``), the
leading run of ``#`` comment lines is a prose cell and the code after it a code cell; a
cell holding only comments is prose alone. ``# sphinx_gallery_KEY = VALUE`` comments are
read into ``Script.gallery_settings``.
"""

from __future__ import annotations

import ast
import io
import json
import re
import textwrap
import tokenize
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from site_builder.errors import ParseError
from site_builder.source import cell_options
from site_builder.source import docstring as ds
from site_builder.source.parsed import Cell, Script, compile_cell, module_imports, option_warnings, requirements_of
from site_builder.source.parsed import syntax_error
from site_builder.source.gallery import GALLERY_SETTING, ignore_warnings, split_string_blocks


# Jupytext accepts "# %%" and "#%%", followed by whitespace and options or by nothing.
_MARKER = re.compile(r"^#[ \t]*%%(?:[ \t]+(?P<options>.*))?$")
# Sphinx-Gallery's older separator: a line of 20 or more "#".
_SEPARATOR = re.compile(r"^#{20,}[ \t]*$")
_CELL_TYPE = re.compile(r"\[(markdown|md|raw)\]")
_META_KEY = re.compile(r"(?:^|(?<=\s))([A-Za-z_][\w.-]*)=")
_KEY = re.compile(r"([A-Za-z_][\w.-]*)=")


@dataclass(frozen=True)
class _Marker:
    line: int
    kind: Literal["code", "markdown"]
    title: str
    tags: tuple[str, ...]
    separator: bool = False  # a "#####..." line rather than a "# %%" marker


def _options(options: str, where: str) -> tuple[str, str, dict[str, object]]:
    """Split marker options into (title, cell type, metadata), the way Jupytext does."""
    text = options.strip()
    brace, equal = text.find("{"), text.find("=")
    metadata: object = {}
    try:
        if brace >= 0 and (equal < 0 or brace < equal):
            title, metadata = text[:brace], json.loads(text[brace:])
        else:
            match = _META_KEY.search(text)
            title, rest = (text[: match.start()], text[match.start() :]) if match else (text, "")
            metadata = _key_values(rest)
    except (ValueError, TypeError) as error:
        raise ParseError(f"{where}: bad cell metadata {text!r}: {error}") from None
    if not isinstance(metadata, dict):
        raise ParseError(f"{where}: cell metadata must be a JSON object, got {text!r}")
    cell_type = _CELL_TYPE.search(title)
    if cell_type:
        title = _CELL_TYPE.sub("", title, count=1)
    return " ".join(title.split()), cell_type.group(1) if cell_type else "", metadata


def _key_values(text: str) -> dict[str, object]:
    """Parse ``key=JSON key=JSON ...``; raise ValueError on anything else."""
    decoder, pos = json.JSONDecoder(), 0
    result: dict[str, object] = {}
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        match = _KEY.match(text, pos)
        if not match:
            raise ValueError(f"expected key=value at {text[pos:]!r}")
        result[match.group(1)], pos = decoder.raw_decode(text, match.end())
    return result


def _find_markers(source: str, where: str) -> tuple[list[_Marker], Exception | None]:
    """The markers among the comment tokens, plus the tokenize error that cut the scan short."""
    markers: list[_Marker] = []
    error: Exception | None = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type != tokenize.COMMENT or tok.start[1] != 0:
                continue
            line = tok.start[0]
            if _SEPARATOR.match(tok.string):
                markers.append(_Marker(line, "code", "", (), separator=True))
                continue
            match = _MARKER.match(tok.string.rstrip())
            if not match:
                continue
            title, cell_type, metadata = _options(match.group("options") or "", f"{where}:{line}")
            if cell_type == "raw":
                raise ParseError(f"{where}:{line}: raw cells ([raw]) are not supported")
            tags = metadata.get("tags", [])
            if not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
                raise ParseError(f"{where}:{line}: cell tags must be a list of strings")
            kind: Literal["code", "markdown"] = "code" if not cell_type else "markdown"
            markers.append(_Marker(line, kind, title, tuple(cell_options.canonical_tag(t) for t in tags)))
    except (tokenize.TokenError, SyntaxError) as exc:
        # Keep the markers found so far: compiling the cells then usually pins the
        # problem on a block; the tokenize error is the fallback message.
        error = exc
    return markers, error


def _strip_trailing_blanks(lines: list[str]) -> list[str]:
    end = len(lines)
    while end and not lines[end - 1].strip():
        end -= 1
    return lines[:end]


def _markdown(lines: list[str], where: str) -> str:
    """Markdown text of a prose cell: ``#`` comment lines, or one string literal (Jupytext)."""
    body = [line.strip() for line in lines if line.strip()]
    if all(line.startswith("#") for line in body):
        out = []
        for line in lines:
            line = line.strip()
            out.append(line[2:] if line.startswith("# ") else line[1:])
        return "\n".join(out)
    try:
        tree = ast.parse("\n".join(lines))
        (stmt,) = tree.body
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            if isinstance(stmt.value.value, str):
                return textwrap.dedent(stmt.value.value).strip("\n")
    except (SyntaxError, ValueError):
        pass
    raise ParseError(f"{where}: a markdown cell must hold only '#' comment lines or one string")


def _describe(cells: list[Cell], doc: str, rel_path: str, entry: str) -> tuple[list[Cell], list[str]]:
    """Attach Blocks-section descriptions; warn about blocks and entries that don't match."""
    section = ds.sections(doc).get("blocks")
    if section is None:
        return cells, []
    entries = ds.block_entries(section[1], section[0])
    described: dict[str, str] = {}
    messages: list[str] = []
    for item in entries:
        if item.name in described:
            messages.append(f"{entry}: the docstring's Blocks section lists {item.name} twice")
        described.setdefault(item.name, item.description)
    names = {c.name for c in cells if c.kind == "code"}
    out = []
    for cell in cells:
        if cell.kind == "code" and cell.name in described:
            cell = replace(cell, description=described[cell.name])
        elif cell.kind == "code" and cell.name != "setup":
            messages.append(
                f"{entry}: block {cell.name} ({rel_path}:{cell.marker_line}) "
                "is not described in the docstring's Blocks section"
            )
        out.append(cell)
    messages += [
        f"{entry}: the docstring's Blocks section lists {name}, but the script has no such block"
        for name in described
        if name not in names
    ]
    return out, messages


def _house_style(markers: list[_Marker]) -> bool:
    """Named blocks or ``[markdown]`` cells: the house style, where "#####" lines are plain comments."""
    return any(m.title or m.kind == "markdown" for m in markers if not m.separator)


def _prose_run(body: list[str]) -> int:
    """How many leading lines of an untitled cell are its prose: blank lines, then ``#`` lines."""
    i = 0
    while i < len(body) and not body[i].strip():
        i += 1
    start = i
    while i < len(body) and body[i].startswith("#"):
        i += 1
    return i if i > start else 0


def _prose_text(lines: list[str]) -> str:
    """The prose of ``#`` comment lines: the comment prefix and gallery settings removed."""
    kept = [line for line in lines if not GALLERY_SETTING.match(line.strip())]
    return _markdown(kept, "").strip("\n")


def _split(source: str, rel_path: str, entry: str) -> tuple[str, list[Cell], Exception | None, bool]:
    """The normalised text and its cells (not yet compiled), any tokenize error, whether house style."""
    # One "\n" per original line ending, so line numbers survive CRLF/CR normalisation.
    text = source.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline ends the last line; it does not start another
    markers, token_error = _find_markers(text, f"{entry}: {rel_path}")
    house = _house_style(markers)
    if house:
        markers = [m for m in markers if not m.separator]

    bounds = [m.line for m in markers] + [len(lines) + 1]
    cells: list[Cell] = []
    setup = _strip_trailing_blanks(lines[: bounds[0] - 1])
    if setup or not markers:
        cells.append(Cell("code", "setup", "\n".join(setup), 1, None))
    seen = {"setup": 1} if cells else {}
    ordinal = 0
    for marker, end in zip(markers, bounds[1:]):
        body = _strip_trailing_blanks(lines[marker.line : end - 1])
        where = f"{entry}: {rel_path}:{marker.line}"
        if marker.kind == "markdown":
            cells.append(Cell("markdown", "", _markdown(body, where), marker.line + 1, marker.line))
            continue
        first = marker.line + 1
        if not marker.title:
            run = _prose_run(body)
            if run:
                prose = _prose_text(body[:run])
                if prose.strip():
                    cells.append(Cell("markdown", "", prose, first, marker.line))
                body, first = body[run:], first + run
                while body and not body[0].strip():
                    body, first = body[1:], first + 1
                if not body:
                    continue  # prose only: no empty code cell
        options, taken = cell_options.split_options(body)
        body, first = body[taken:], first + taken
        ordinal += 1
        name = marker.title or f"block-{ordinal}"
        if name in seen:
            raise ParseError(
                f"{entry}: block {name} is defined twice, "
                f"at {rel_path}:{seen[name]} and :{marker.line}"
            )
        seen[name] = marker.line
        cells.append(Cell("code", name, "\n".join(body), first, marker.line, tags=marker.tags, options=options))

    if not house:  # Sphinx-Gallery style: a bare triple-quoted string between code is text
        cells = split_string_blocks(cells)
    return text, cells, token_error, house


def prose_language(doc: str, cells: list[Cell], house: bool) -> Literal["markdown", "rst"]:
    """The prose language when the settings leave it to the script ("auto").

    reST when the docstring opens with a reST title; else Markdown when the script uses the
    house style (named blocks or ``[markdown]`` cells); else reST when it has a prose cell
    made of comment lines (Sphinx-Gallery style); else Markdown.
    """
    if ds.rst_head(doc):
        return "rst"
    if house:
        return "markdown"
    return "rst" if any(c.kind == "markdown" for c in cells) else "markdown"


def _gallery_settings(text: str) -> dict[str, str]:
    """``# sphinx_gallery_KEY = VALUE`` comment lines, anywhere in the script (the last one wins)."""
    found: dict[str, str] = {}
    for line in text.split("\n"):
        match = GALLERY_SETTING.match(line)
        if match:
            found[match.group("key")] = match.group("value")
    return found


def _thumbnail_number(settings: dict[str, str], where: str, messages: list[str]) -> int | None:
    value = settings.get("thumbnail_number")
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        messages.append(f"{where}: sphinx_gallery_thumbnail_number must be a whole number, not {value!r}")
        return None


def _docstring_lines(tree: ast.Module) -> tuple[int, int] | None:
    first = tree.body[0] if tree.body else None
    if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str) and first.end_lineno is not None):
        return first.lineno, first.end_lineno
    return None


def parse_script(
    source: str, rel_path: str, entry: str, *, local_dir: Path | None = None,
    prose: Literal["auto", "markdown", "rst"] = "auto",
) -> Script:
    """Split the script ``source`` into cells and read its docstring; raise ParseError on bad input.

    ``local_dir`` is the script's folder: modules found there are not requirements;
    ``prose`` the language of its prose ("auto": see prose_language).
    """
    text, cells, token_error, house = _split(source, rel_path, entry)
    for cell in cells:
        if cell.kind == "code":
            compile_cell(cell, rel_path, entry)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, rel_path, "exec", dont_inherit=True)
            tree = ast.parse(text, rel_path)
    except (SyntaxError, ValueError) as error:
        # Every block compiles alone but the whole does not (e.g. a late __future__ import).
        line = getattr(error, "lineno", None) or 0
        owner = [c for c in cells if c.kind == "code" and (c.marker_line or 0) <= line]
        name = owner[-1].name if owner else "setup"
        raise syntax_error(entry, name, rel_path, error) from None
    if token_error is not None:  # not expected once everything compiled; be safe anyway
        raise ParseError(f"{entry}: {rel_path} cannot be tokenized: {token_error}")

    doc = ast.get_docstring(tree, clean=True) or ""
    sections = ds.sections(doc)
    cells, messages = _describe(cells, doc, rel_path, entry)
    messages += ignore_warnings(cells, f"{entry}: {rel_path}")
    messages += option_warnings(cells, rel_path, entry)
    head = ds.rst_head(doc)
    language = prose_language(doc, cells, house) if prose == "auto" else prose
    settings = _gallery_settings(text)
    thumbnail = _thumbnail_number(settings, f"{entry}: {rel_path}", messages)
    imports = module_imports(tree)
    return Script(
        summary=head.summary if head else ds.summary(doc),
        purpose=sections.get("purpose", (0, ""))[1],
        docstring=doc,
        cells=tuple(cells),
        requirements=requirements_of(imports, local_dir),
        warnings=tuple(messages),
        prose=language,
        title=head.title if head else "",
        intro=head.intro if head else "",
        docstring_lines=_docstring_lines(tree) if doc else None,
        gallery_settings=settings,
        thumbnail_number=thumbnail,
        imports=imports,
        aliases=ds.aliases(sections.get("aliases", (0, ""))[1]),
        exports=ds.aliases(sections.get("export", (0, ""))[1]),
    )


def outline_script(source: str, rel_path: str, entry: str) -> Script:
    """What can be shown of a demo that failed to parse: its cells, as far as its markers can be read.

    Used for the failed build's page of that demo; nothing is compiled or checked.
    """
    try:
        _text, cells, _error, house = _split(source, rel_path, entry)
    except ParseError:  # unreadable markers: the whole script as one block
        text = source.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
        cells, house = [Cell("code", "setup", text.rstrip("\n"), 1, None)], True
    return Script(summary="", purpose="", docstring="", cells=tuple(cells), requirements=(),
                  prose=prose_language("", cells, house))
