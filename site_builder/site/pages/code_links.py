"""Code that links to its documentation: a run's name records + the inventories -> links.

Each block's record says what its names denoted when it ran (``BlockResult.names``); the
first of a name's candidate full names that an inventory lists becomes a link.  Where
chains nest (``np``, ``np.linalg``, ``np.linalg.norm`` all start at one column) the longest
documented one wins.  :class:`LinkingHtmlFormatter` then wraps each linked name's token
spans in an ``<a>``: the highlighting colours stay, the text (what Copy copies) is unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from site_builder.apidocs.inventory import ApiDocs, ApiTarget
from site_builder.run.execute import BlockResult, RunResult
from site_builder.run.name_refs import NameRef

LINK_CLASS = "api-link"  # styled in templates/static/site.css
# Pygments lexing costs ~0.1 ms per line and dominates rendering, so highlighted cells are
# kept for the life of the process: rebuilds (watch mode, tests) only lex what changed.
# The formatter options never vary, so (text, first line, links) fully determines the HTML.
_HIGHLIGHTED: dict[tuple[str, int, tuple[CodeLink, ...]], str] = {}
_HIGHLIGHTED_MAX = 20_000


@dataclass(frozen=True)
class CodeLink:
    """One linked name of a block's code: where it is, and the documented object it denotes."""

    line: int  # script line
    col: int  # characters
    end_col: int
    target: ApiTarget
    explicit: bool  # the code names the object itself (not a variable of that type)


def _target(ref: NameRef, api_docs: ApiDocs) -> tuple[ApiTarget, bool] | None:
    for k, name in enumerate(ref.names):
        found = api_docs.lookup(name)
        if found is not None:
            return found, k < ref.explicit
    return None


def block_links(block: BlockResult | None, api_docs: ApiDocs) -> tuple[CodeLink, ...]:
    """The links of one block's code, in code order, never overlapping."""
    if block is None or not block.names or not api_docs:
        return ()
    best: dict[tuple[int, int], CodeLink] = {}
    for ref in block.names:
        key = (ref.line, ref.col)
        if key in best and best[key].end_col >= ref.end_col:
            continue
        found = _target(ref, api_docs)
        if found is not None:
            best[key] = CodeLink(ref.line, ref.col, ref.end_col, found[0], found[1])
    links: list[CodeLink] = []
    for key in sorted(best):
        link = best[key]
        if links and links[-1].line == link.line and link.col < links[-1].end_col:
            continue  # inside a longer linked chain
        links.append(link)
    return tuple(links)


def used_targets(blocks: Iterable[tuple[str, tuple[CodeLink, ...]]]) -> dict[str, tuple[ApiTarget, tuple[str, ...]]]:
    """Full name -> (the object, the blocks naming it), for the objects the code names itself."""
    found: dict[str, tuple[ApiTarget, list[str]]] = {}
    for block, links in blocks:
        for link in links:
            if link.explicit:
                target, where = found.setdefault(link.target.name, (link.target, []))
                if block not in where:
                    where.append(block)
    return {name: (target, tuple(where)) for name, (target, where) in sorted(found.items())}


class LinkingHtmlFormatter(HtmlFormatter):
    """Pygments' HTML formatter, with ``links`` ((line in the text, 0-based) -> [(col, end, href,
    title)]) wrapped around the token spans they cover.  Without links it is HtmlFormatter."""

    links: dict[int, list[tuple[int, int, str, str]]] = {}

    def _format_lines(self, tokensource: Iterable[tuple[object, str]]) -> Iterator[tuple[int, str]]:
        if not self.links:
            yield from super()._format_lines(tokensource)
            return
        row, col, line = 0, 0, []
        pending = list(self.links.get(0, ()))
        closing: int | None = None  # the column where the open link ends
        for ttype, value in tokensource:
            css = self._get_css_classes(ttype)
            opener = f'<span class="{css}">' if css else ""
            source_parts = value.split("\n")
            for k, part in enumerate(self._translate_parts(value)):
                if k:  # a newline: the line ends (a link never spans lines)
                    if closing is not None:
                        line.append("</a>")
                        closing = None
                    yield 1, "".join(line) + self.lineseparator
                    row, col, line = row + 1, 0, []
                    pending = list(self.links.get(row, ()))
                    continue
                while pending and pending[0][0] < col:
                    pending.pop(0)  # a link that starts inside a token: not one of ours
                if closing is None and pending and pending[0][0] == col and part:
                    start, closing, href, title = pending.pop(0)
                    line.append(f'<a class="{LINK_CLASS}" href="{_attr(href)}" title="{_attr(title)}">')
                if part:
                    line.append(f"{opener}{part}</span>" if opener else part)
                # columns count characters of the source, not of the escaped HTML
                col += len(source_parts[k])
                if closing is not None and col >= closing:
                    line.append("</a>")
                    closing = None
        if closing is not None:
            line.append("</a>")
        if line:
            yield 1, "".join(line) + self.lineseparator


def _attr(text: str) -> str:
    """``text`` escaped for a double-quoted attribute."""
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


def part_links(links: tuple[CodeLink, ...], first_line: int, line_count: int) -> dict[int, list[tuple[int, int, str, str]]]:
    """The formatter's ``links`` for the code lines ``first_line`` .. ``first_line + line_count - 1``."""
    found: dict[int, list[tuple[int, int, str, str]]] = {}
    for link in links:
        row = link.line - first_line
        if 0 <= row < line_count:
            found.setdefault(row, []).append((link.col, link.end_col, link.target.url, link.target.name))
    return found


class Highlighter:
    """Highlights code cells for one site build (one lexer and formatter: only the start line moves)."""

    def __init__(self) -> None:
        # stripnl=False: a leading blank line must keep the script's real line numbers.
        self.lexer = PythonLexer(stripnl=False, ensurenl=True)
        self.formatter = LinkingHtmlFormatter(cssclass="highlight", linenos="inline", wrapcode=True)

    def html(self, text: str, first_line: int, links: tuple[CodeLink, ...] = ()) -> str:
        """``text`` (script lines from ``first_line``) as Pygments' HTML, ``links`` around their names."""
        key = (text, first_line, links)
        html = _HIGHLIGHTED.get(key)
        if html is None:
            self.formatter.linenostart = first_line
            self.formatter.links = part_links(links, first_line, text.count("\n") + 1)
            html = highlight(text, self.lexer, self.formatter)
            if len(_HIGHLIGHTED) >= _HIGHLIGHTED_MAX:
                _HIGHLIGHTED.clear()
            _HIGHLIGHTED[key] = html
        return html


class SiteCodeLinks:
    """Each entry's code links in one site build, found once: its page and the API page need them."""

    def __init__(self, api_docs: ApiDocs) -> None:
        self.api_docs = api_docs
        self._found: dict[str, dict[str, tuple[CodeLink, ...]]] = {}

    def of(self, result: RunResult) -> dict[str, tuple[CodeLink, ...]]:
        """Block name -> its code links."""
        found = self._found.get(result.entry)
        if found is None:
            found = self._found[result.entry] = {b.name: block_links(b, self.api_docs) for b in result.blocks}
        return found

    def used(self, result: RunResult) -> dict[str, tuple[ApiTarget, tuple[str, ...]]]:
        """The objects the entry's code names itself (see :func:`used_targets`)."""
        return used_targets(self.of(result).items())
