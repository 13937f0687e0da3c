"""Quarto's shortcodes ``{{< name args >}}``: read by a markdown-it rule, includes expanded first.

``{{< include _part.qmd >}}`` on a line of its own is replaced by that file's text before the
document is read (as Quarto does; messages name each line's own file and line: ``place_of``), the file named
relative to the including one (``/part.qmd``: to the project's root) and inside the project only, read without following a link;
a missing or outside file is an error naming both files. ``{{< meta key >}}`` and ``{{< var key >}}``
(the demos folder's ``_variables.yml``) become their values in the prose (``with_values``). Every other
shortcode is one ``shortcode`` token (``meta``: name, arguments) for the renderer: ``pagebreak`` and
``video`` show, the rest are left out with a warning naming their line.
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from site_builder.errors import EntryError
from site_builder.fs import UnsafeFileError, UnsafePathError, open_regular

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_core import StateCore
    from markdown_it.rules_inline import StateInline

_OPEN, _CLOSE = "{{<", ">}}"
_LONGEST = 1000  # characters a shortcode may span (the search for its end is bounded)
MAX_INCLUDE_DEPTH = 8


def shortcode_parts(text: str) -> tuple[str, list[str]]:
    """A shortcode's name and arguments (``video "a b.mp4" width=50%`` -> video, [a b.mp4, width=50%])."""
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    return (words[0].lower(), words[1:]) if words else ("", [])


def shortcode_plugin(md: MarkdownIt) -> None:
    """``{{< name args >}}`` on one line: a ``shortcode`` token; ``{{{< x >}}}`` in code listings
    and inline code shows ``{{< x >}}``, as Quarto shows it (it reads shortcodes in code too)."""
    md.inline.ruler.before("text", "quarto_shortcode", _shortcode)
    md.core.ruler.push("quarto_shortcode_escapes", _unescape_in_code)


def _unescape_in_code(state: StateCore) -> None:
    for token in state.tokens:
        if token.type in ("fence", "code_block") and "{{{<" in token.content:
            token.content = unescape_shortcodes(token.content)
        for child in token.children or ():
            if child.type == "code_inline" and "{{{<" in child.content:
                child.content = unescape_shortcodes(child.content)


def unescape_shortcodes(text: str) -> str:
    """``text`` with each escaped ``{{{< x >}}}`` as ``{{< x >}}`` (a bounded search for each end)."""
    parts, pos = [], 0
    while (start := text.find("{" + _OPEN, pos)) >= 0:
        end = text.find(_CLOSE + "}", start + 4, start + _LONGEST)
        if end < 0:
            parts.append(text[pos:start + 1])
            pos = start + 1
            continue
        parts.append(text[pos:start] + text[start + 1:end + 3])
        pos = end + 4
    return "".join(parts) + text[pos:]


def _shortcode(state: StateInline, silent: bool) -> bool:
    src, pos = state.src, state.pos
    if src.startswith("{" + _OPEN, pos):  # {{{< name >}}}: Quarto's escape, the shortcode shown as written
        end = src.find(_CLOSE + "}", pos + 4, pos + _LONGEST)
        if end < 0 or "\n" in src[pos:end]:
            return False
        if not silent:
            state.push("text", "", 0).content = src[pos + 1:end + 3]
        state.pos = end + 4
        return True
    if not src.startswith(_OPEN, pos):
        return False
    end = src.find(_CLOSE, pos + 3, pos + _LONGEST)
    if end < 0 or "\n" in src[pos:end]:
        return False
    if not silent:
        token = state.push("shortcode", "", 0)
        token.content = src[pos + 3:end].strip()
        token.meta["name"], token.meta["args"] = shortcode_parts(token.content)
    state.pos = end + 3
    return True


_VALUE = re.compile(r"(?<!\{)\{\{<[ \t]*(meta|var)[ \t]+([\w.-]{1,200})[ \t]*>\}\}(?!\})")
VARIABLES_FILE = "_variables.yml"  # Quarto's project variables, beside _quarto.yml: the demos folder's


def with_values(text: str, front: dict[str, object], variables: object = None) -> str:
    """``text`` with each ``{{< meta key >}}`` as the front matter's value and each ``{{< var key >}}``
    as ``variables``' (_variables.yml read), ``key.sub`` for nested, as Quarto inserts them; a key with
    no text value stays a shortcode (left out with a warning)."""
    if "meta" not in text and "var" not in text:
        return text

    def value(found: re.Match[str]) -> str:
        held: object = front if found.group(1) == "meta" else variables
        for part in found.group(2).split("."):
            held = held.get(part) if isinstance(held, dict) else None
        if isinstance(held, bool):
            return "true" if held else "false"
        if isinstance(held, (str, int, float)):
            return " ".join(str(held).split())  # on the shortcode's line: a value never opens a block
        return found.group(0)

    return _VALUE.sub(value, text)


def uses_variables(text: str) -> bool:
    """True when a document's ``text`` asks for a project variable (``{{< var key >}}``)."""
    return "var" in text and any(found.group(1) == "var" for found in _VALUE.finditer(text))


def read_variables(demos: Path) -> str:
    """The text of the demos folder's ``_variables.yml`` ("" when there is none); EntryError when
    it is a link, not a regular file or not UTF-8 (it is read without following a link)."""
    try:
        with open_regular(demos, VARIABLES_FILE) as handle:
            return handle.read().decode("utf-8")
    except UnsafeFileError as exc:
        if not os.path.lexists(demos / VARIABLES_FILE):
            return ""
        raise EntryError(f"cannot read {VARIABLES_FILE}: {exc.reason}") from None
    except UnicodeDecodeError:
        raise EntryError(f"cannot read {VARIABLES_FILE}: it is not UTF-8 text") from None


def expand_includes(text: str, rel: str, root: Path) -> tuple[str, tuple[tuple[str, int], ...]]:
    """``text`` (the file ``rel``, from the project ``root``) with its include lines replaced by the
    files they name, and where each of its lines comes from (file, 1-based line; () when nothing
    was included); EntryError naming both files when one cannot be included."""
    if _OPEN not in text:
        return text, ()
    lines = _expanded(text, rel, root, 0, ())
    if all(where == rel for _, where, _ in lines):
        return text, ()
    return "\n".join(line for line, _, _ in lines), tuple((where, n) for _, where, n in lines)


def place_of(line: int, rel: str, origins: tuple[tuple[str, int], ...]) -> str:
    """``rel:line`` of the document an include made, as the file and line it comes from."""
    where, number = _origin(line, rel, origins)
    return f"{where}:{number}"


def _origin(line: int, rel: str, origins: tuple[tuple[str, int], ...]) -> tuple[str, int]:
    return origins[line - 1] if origins and 0 < line <= len(origins) else (rel, line)


def remap_frames(traceback: str, rel: str, origins: tuple[tuple[str, int], ...]) -> str:
    """``traceback`` with each frame ``File "rel", line N`` of the document includes made naming
    the file and line it comes from."""
    def frame(found: re.Match[str]) -> str:
        where, line = _origin(int(found.group(1)), rel, origins)
        return f'File "{where}", line {line}'

    return re.sub(r'File "' + re.escape(rel) + r'", line (\d+)', frame, traceback) if origins else traceback


def remap_places(message: str, rel: str, origins: tuple[tuple[str, int], ...]) -> str:
    """``message`` with each ``rel:N`` of the document made by includes naming the file and line it
    comes from (messages are written before the document's lines are known to be another file's)."""
    if not origins:
        return message
    return re.sub(re.escape(rel) + r":(\d+)", lambda m: place_of(int(m.group(1)), rel, origins), message)


def _expanded(text: str, rel: str, root: Path, depth: int, within: tuple[str, ...]) -> list[tuple[str, str, int]]:
    lines: list[tuple[str, str, int]] = []
    for i, line in enumerate(text.split("\n")):
        stripped = line.strip()
        name, args = shortcode_parts(stripped[3:-3]) if stripped.startswith(_OPEN) and stripped.endswith(_CLOSE) else ("", [])
        if name != "include" or not args:
            lines.append((line, rel, i + 1))
            continue
        where = f"{rel}:{i + 1}"
        # "/part.qmd" is from the project's root, as Quarto reads it; else from the including file
        target = posixpath.normpath(args[0].lstrip("/") if args[0].startswith("/")
                                    else posixpath.join(posixpath.dirname(rel), args[0]))
        if target.startswith("../") or target in ("..", "."):
            raise EntryError(f"{where}: cannot include {args[0]}: it is outside the project")
        if target in (rel, *within) or depth >= MAX_INCLUDE_DEPTH:
            raise EntryError(f"{where}: cannot include {target}: it includes itself, or includes nest "
                             f"more than {MAX_INCLUDE_DEPTH} deep")
        try:
            with open_regular(root, target) as handle:
                included = handle.read().decode("utf-8")
        except (UnsafeFileError, UnsafePathError, UnicodeDecodeError) as exc:
            why = exc.reason if isinstance(exc, UnsafeFileError) else "it cannot be read as UTF-8 text" if isinstance(
                exc, UnicodeDecodeError) else "it is outside the project"
            raise EntryError(f"{where}: cannot include {target}: {why}") from None
        lines += _expanded(included.rstrip("\n"), target, root, depth + 1, (*within, rel))
    return lines
