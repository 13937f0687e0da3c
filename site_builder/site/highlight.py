"""The one highlighter: Pygments over a page's code cells (line numbers, API links) and prose code blocks.

Lexing costs ~0.1 ms per line and dominates rendering, so a cell's HTML is kept for the
life of the process.  Imports Pygments; the page's colours are pages/theme.py's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer, TextLexer, get_lexer_by_name
from pygments.util import ClassNotFound

from site_builder.apidocs.inventory import ApiTarget
from site_builder.source.gallery import hidden_lines
from site_builder.source.parsed import Cell

LINK_CLASS = "api-link"  # styled in templates/static/site.css
# Pygments lexing costs ~0.1 ms per line and dominates rendering, so highlighted cells are
# kept for the life of the process: rebuilds (watch mode, tests) only lex what changed.
# The formatter options never vary, so (text, first line, links) fully determines the HTML.
_HIGHLIGHTED: dict[tuple[str, int, tuple[CodeLink, ...]], str] = {}
_HIGHLIGHTED_MAX = 20_000


@dataclass(frozen=True)
class CodePart:
    """A run of a code cell's lines, highlighted; the module docstring is a folded part."""

    html: Markup
    folded: int = 0  # the docstring's line count when this part is the folded docstring


@dataclass(frozen=True)
class CodeLink:
    """One linked name of a block's code: where it is, and the documented object it denotes."""

    line: int  # script line
    col: int  # characters
    end_col: int
    target: ApiTarget
    explicit: bool  # the code names the object itself (not a variable of that type)


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

    def parts(self, cell: Cell, docstring_lines: tuple[int, int] | None,
              links: tuple[CodeLink, ...] = ()) -> tuple[CodePart, ...]:
        """The cell's code; the module docstring folded, ``sphinx_gallery_`` settings and ignored lines left out."""
        lines = cell.text.split("\n")
        fold = docstring_lines if cell.name == "setup" else None
        hidden = hidden_lines(lines)  # sphinx_gallery_ settings and start/end_ignore ranges
        if fold is None and not hidden:
            return (CodePart(Markup(self.html(cell.text, cell.first_line, links))),)
        parts: list[CodePart] = []
        run: list[int] = []  # indices of the lines of the current part

        def flush(folded: int = 0) -> None:
            # Blank lines stay: the parts, joined, are the cell's code (minus gallery settings).
            if any(lines[i].strip() for i in run):
                text = "\n".join(lines[i] for i in run)
                start = cell.first_line + run[0]
                mine = tuple(k for k in links if start <= k.line < start + len(run))
                parts.append(CodePart(Markup(self.html(text, start, mine)), folded))
            run.clear()

        for i in range(len(lines)):
            number = cell.first_line + i
            in_fold = fold is not None and fold[0] <= number <= fold[1]
            if in_fold and number == fold[0]:
                flush()
            if i not in hidden and (run or lines[i].strip() or i - 1 not in hidden):
                run.append(i)  # (blank lines right after a hidden setting go with it)
            if in_fold and number == fold[1]:
                flush(fold[1] - fold[0] + 1)
            elif i in hidden:
                flush()
        flush()
        return tuple(parts)


def highlighted(code: str, language: str, plain: bool = False) -> str:
    """Pygments HTML of a prose code block, with the classes the page's stylesheet colours; for a
    language Pygments does not know, plain text when ``plain``, else ""."""
    try:
        lexer = get_lexer_by_name(language) if language else PythonLexer()
    except ClassNotFound:
        lexer = PythonLexer() if language in ("default", "python3", "ipython") else TextLexer() if plain else None
    if lexer is None:
        return ""
    return highlight(code, lexer, HtmlFormatter(cssclass="highlight", wrapcode=True))
