"""Pandoc's and Quarto's citation syntax in Markdown: ``[@key]``, ``[see @a; @b, p. 33]``,
``[-@key]``, ``@key``, ``@key [p. 33]``, and Quarto's cross-references ``@fig-x``, ``@tbl-x``...

A markdown-it plugin (``pandoc_citation_plugin``) reads each as one ``pandoc_cite`` token
whose content is the text as written; ``citation_parts`` splits it into its works.  Parsing
only: the site stage decides what a key names (site/references).  Pandoc's rules guard the
rest of the prose: an ``@`` right after a letter, digit or ``@`` (an e-mail address) starts
nothing, a key ends before trailing punctuation, a bracket every part of which names no key
is text, and ``[@x](url)`` or ``[@x][ref]`` stay links.  Code, math and roles are read by
their own rules first, so nothing in them is a citation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_inline import StateInline

CITATION_TOKEN = "pandoc_cite"
CITATION_ROLE = "pandoc:cite"  # the name its token's handler is registered under (site/prose/markdown)
# Pandoc's citation key: letters, digits and _, with internal punctuation :.#$%&-+?<>~/ ;
# or any text in braces.
KEY = r"(?:\{(?P<braced>[^{}\s]+)\}|(?P<key>\w(?:\w|[:.#$%&\-+?<>~/](?=\w))*))"
# (possessive: the text before the first "@" and after it each match one way only)
_BRACKETED = re.compile(r"\[(?P<body>[^\[\]@]*+@[^\[\]]*+)\]")
_PART = re.compile(rf"^(?P<prefix>.*?)(?<![\w@])(?P<minus>-)?@{KEY}(?P<suffix>.*)$", re.DOTALL)
_BARE = re.compile(rf"@{KEY}(?:[ \t](?P<locator>\[[^\[\]@]*\])(?![(\[]))?")
_NOT_BEFORE = re.compile(r"[\w@\\]")


@dataclass(frozen=True)
class CitePart:
    """One work (or cross-reference) of a citation, with the text around its key."""

    key: str
    prefix: str = ""  # "see" of "[see @a]"
    suffix: str = ""  # ", p. 33" of "[@a, p. 33]", "p. 33" of "@a [p. 33]"
    suppress_author: bool = False  # "[-@a]": the year only


def _key(match: re.Match[str]) -> str:
    return match.group("braced") or match.group("key")


def citation_parts(body: str) -> list[CitePart] | None:
    """The parts of a bracketed citation's ``body`` (between ``[`` and ``]``); None when one of
    them names no key (then the bracket is text)."""
    parts: list[CitePart] = []
    for piece in body.split(";"):
        match = _PART.match(piece)
        if match is None:
            return None
        parts.append(CitePart(_key(match), match.group("prefix").strip(), match.group("suffix").strip(),
                              bool(match.group("minus"))))
    return parts


def parse_citation(content: str) -> tuple[bool, list[CitePart]]:
    """A ``pandoc_cite`` token's content as (bracketed, its parts)."""
    if content.startswith("["):
        return True, citation_parts(content[1:-1]) or []
    match = _BARE.match(content)
    if match is None:
        return False, []
    locator = (match.group("locator") or "")[1:-1].strip()
    return False, [CitePart(_key(match), suffix=locator)]


def _bracketed(state: StateInline, silent: bool) -> bool:
    if state.src[state.pos] != "[":
        return False
    match = _BRACKETED.match(state.src, state.pos, state.posMax)
    if match is None:
        return False
    end = match.end()
    if end < state.posMax and state.src[end] in "([":  # a link: [@x](url), [@x][ref]
        return False
    from markdown_it.common.utils import normalizeReference

    if normalizeReference(match.group("body")) in state.env.get("references", {}):  # [@x] defined as a link
        return False
    if citation_parts(match.group("body")) is None:
        return False
    if not silent:
        token = state.push(CITATION_TOKEN, "", 0)
        token.content, token.meta = match.group(0), {"name": CITATION_ROLE}
    state.pos = end
    return True


def _bare(state: StateInline, silent: bool) -> bool:
    pos = state.pos
    if state.src[pos] != "@" or (pos > 0 and _NOT_BEFORE.match(state.src[pos - 1])):
        return False
    match = _BARE.match(state.src, pos, state.posMax)
    if match is None:
        return False
    if not silent:
        token = state.push(CITATION_TOKEN, "", 0)
        token.content, token.meta = match.group(0), {"name": CITATION_ROLE}
    state.pos = match.end()
    return True


def pandoc_citation_plugin(md: MarkdownIt) -> None:
    """Read Pandoc's citations as ``pandoc_cite`` tokens (see the module docstring)."""
    md.inline.ruler.before("link", "pandoc_cite_bracketed", _bracketed)
    md.inline.ruler.before("link", "pandoc_cite_bare", _bare)
