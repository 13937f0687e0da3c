"""Read a demo's module docstring: summary paragraph and numpydoc-style sections."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

# A numpydoc section header is a title line underlined by a line of dashes.
_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")
# "attention.py — train ..." : the file name is redundant on the demo's own page.
_FILE_PREFIX = re.compile(r"^\S+\.py\s+[—–-]+\s+")
# A reST label (``.. _name:``): before a docstring's title, it names the page's top (head_labels).
_LABEL = re.compile(r"^\.\. _([^:`\s][^:`]*):\s*$")
_ENTRY = re.compile(r"^\[([^\]\s]+)\]\s*(.*)$")


@dataclass(frozen=True)
class BlockEntry:
    """One ``[NAME]  text`` entry of a Blocks section."""

    name: str
    description: str
    line: int  # 1-based line within the docstring, for messages


def _is_header(lines: list[str], i: int) -> bool:
    return bool(lines[i].strip()) and i + 1 < len(lines) and bool(_UNDERLINE.match(lines[i + 1]))


def summary(doc: str) -> str:
    """The docstring's first paragraph on one line, without a leading ``NAME.py — `` prefix."""
    lines = doc.split("\n")
    para: list[str] = []
    for i, line in enumerate(lines):
        if not line.strip() or _is_header(lines, i):
            if para:
                break
            if line.strip():
                return ""  # the docstring opens with a section: no summary paragraph
            continue
        para.append(line.strip())
    return _FILE_PREFIX.sub("", " ".join(para), count=1)


def sections(doc: str) -> dict[str, tuple[int, str]]:
    """Map each section title (lower-cased) to (first body line, 1-based; dedented body)."""
    lines = doc.split("\n")
    starts = [i for i in range(len(lines)) if _is_header(lines, i)]
    found: dict[str, tuple[int, str]] = {}
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        body = lines[start + 2 : end]
        title = lines[start].strip().lower()
        # The first section of a given title wins; later duplicates are ignored.
        found.setdefault(title, (start + 3, textwrap.dedent("\n".join(body)).strip("\n")))
    return found


def aliases(body: str) -> tuple[str, ...]:
    """An Aliases section's names: comma-separated (over any number of lines), each once."""
    names = (" ".join(n.split()) for n in body.split(","))
    return tuple(dict.fromkeys(n for n in names if n))


def block_entries(body: str, first_line: int = 1) -> list[BlockEntry]:
    """Parse a Blocks section body: ``[NAME] text`` entries, indented lines continue one."""
    entries: list[BlockEntry] = []
    name, parts, line_no = "", [], 0

    def flush() -> None:
        if name:
            entries.append(BlockEntry(name, " ".join(p for p in parts if p), line_no))

    for offset, line in enumerate(body.split("\n")):
        match = _ENTRY.match(line)
        if match:
            flush()
            name, parts, line_no = match.group(1), [match.group(2).strip()], first_line + offset
        elif line.strip() and line[:1].isspace() and name:
            parts.append(line.strip())
        elif line.strip():
            # Unindented prose between entries is allowed; it ends the current entry.
            flush()
            name, parts = "", []
    flush()
    return entries


# reST section adornment: one punctuation character repeated (docutils accepts any of these).
_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}\s*$")


@dataclass(frozen=True)
class RstHead:
    """The head of a docstring that opens with a reST title (Sphinx-Gallery style)."""

    title: str  # the title's source text, one line (may hold inline markup)
    intro: str  # the docstring after the title, dedented; the labels before the title first
    summary: str  # the intro's first paragraph, one line (reST source)


def rst_head(doc: str) -> RstHead | None:
    """The title and introduction when ``doc`` opens with a reST title (labels may precede it), else None."""
    lines = doc.split("\n")
    i = 0
    # Labels and directives (``.. redirect-from::``) may stand before the title, with their indented bodies.
    while i < len(lines) and (not lines[i].strip() or lines[i].startswith(".. ")):
        i += 1
        while lines[i - 1].startswith(".. ") and i < len(lines) and lines[i][:1] in (" ", "\t"):
            i += 1
    over = _ADORNMENT.match(lines[i]) if i < len(lines) else None
    if over and i + 2 < len(lines) and lines[i + 1].strip() and lines[i + 2].strip() == lines[i].strip():
        title, rest = lines[i + 1].strip(), lines[i + 3 :]
    elif i + 1 < len(lines) and lines[i].strip() and not over and _ADORNMENT.match(lines[i + 1]):
        title, rest = lines[i].strip(), lines[i + 2 :]
    else:
        return None
    # Labels in the intro are link targets (``:ref:`` on any page: site/prose/rst_refs), shown as
    # nothing; those before the title stay, at the intro's top (where the page's title leads).
    intro = textwrap.dedent("\n".join(rest)).strip("\n")
    labels = [line.strip() for line in lines[:i] if _LABEL.match(line.strip())]
    intro = "\n".join(labels) + "\n\n" + intro if labels else intro
    first: list[str] = []
    for line in intro.split("\n"):
        if not line.strip() or (not first and _LABEL.match(line)):
            if first:
                break
            continue
        if line.lstrip().startswith(".. "):  # a directive or comment is no summary
            break
        first.append(line.strip())
    return RstHead(title, intro, " ".join(first))


def head_labels(intro: str) -> list[str]:
    """The labels at the top of a reST docstring's intro (those written before its title, see
    rst_head): a reference to one shows the page's title."""
    names = []
    for line in intro.split("\n"):
        match = _LABEL.match(line.strip())
        if match:
            names.append(match.group(1).strip())
        elif line.strip():
            break
    return names
