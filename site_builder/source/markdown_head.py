"""A notebook's title and summary, read from its Markdown prose as Jupyter Book reads them.

The title is the first ``# `` heading when the prose opens with one (``(label)=`` targets,
MyST comments and blank lines may precede it); the summary is the first paragraph of
prose after it. Both as plain text: roles, links, emphasis, code marks and inline HTML tags
removed, character references (``&amp;``) read as the characters they stand for.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

_TITLE = re.compile(r"^#[ \t]+(?P<text>.+?)[ \t#]*$")
_SKIPPED = re.compile(r"^\s*(?:\([^()\s]+\)=\s*$|%|\+\+\+|<!--)")
_NOT_PROSE = re.compile(r"^\s*(?:#|```|~~~|:::|\$\$|\||>|!\[|<|[-*+]\s|\d+[.)]\s|---|===|\(\S+\)=)")
_ROLE = re.compile(r"\{[\w:.+-]+\}`([^`]*)`")
# A link or image: its text kept; its destination may hold parentheses ("javascript:f(1)").
_LINK = re.compile(r"!?\[([^\[\]]*)\]\((?:[^()]|\([^()]*\))*\)")
_AUTOLINK = re.compile(r"<((?:https?|mailto):[^<>\s]*)>")
_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_CODE = re.compile(r"`([^`]+)`")
_EXPLICIT = re.compile(r"^(.+?)\s*<[^<>]+>$")


def plain_markdown(text: str) -> str:
    """One line of MyST Markdown as the text a reader sees."""
    text = _ROLE.sub(lambda m: (_EXPLICIT.sub(r"\1", m.group(1))), text)
    text = _LINK.sub(r"\1", text)
    pieces = _CODE.split(text)  # prose, code, prose...: code shows as written
    return " ".join("".join(_plain_prose(p) if i % 2 == 0 else p for i, p in enumerate(pieces)).split())


def _plain_prose(text: str) -> str:
    text = re.sub(r"(\*\*|__|\*|`+)", "", text)
    text = re.sub(r"(?<!\w)_(\S(?:.*?\S)?)_(?!\w)", r"\1", text)
    text = _TAG.sub("", _AUTOLINK.sub(r"\1", text))
    return html.unescape(text.replace("$", ""))


def _paragraphs(text: str) -> Iterable[list[str]]:
    block: list[str] = []
    fence = ""
    for line in text.split("\n"):
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence):
                fence = ""
            continue
        match = re.match(r"^(`{3,}|~{3,}|:{3,})", stripped)
        if match:
            if block:
                yield block
            block, fence = [], match.group(1)
            yield ["```"]
            continue
        if not stripped or _SKIPPED.match(line):
            if block:
                yield block
            block = []
            continue
        block.append(line)
    if block:
        yield block


def title_and_summary(texts: Iterable[str]) -> tuple[str, str]:
    """The title (the opening ``# `` heading, "" when the prose opens otherwise) and the first paragraph."""
    title, summary, first = "", "", True
    for text in texts:
        for block in _paragraphs(text):
            heading = _TITLE.match(block[0].strip())
            if first and heading:
                title = plain_markdown(heading.group("text"))
                block = block[1:]
            first = False
            if block and not _NOT_PROSE.match(block[0]):
                summary = plain_markdown(" ".join(block))
                return title, summary
    return title, summary


def without_title(text: str, title: str) -> str:
    """``text`` minus its opening ``# `` heading when that is ``title`` (the page shows it as its h1)."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if not line.strip() or _SKIPPED.match(line):
            continue
        heading = _TITLE.match(line.strip())
        if heading and plain_markdown(heading.group("text")) == title:
            return "\n".join(lines[:i] + lines[i + 1:])
        return text
    return text
