"""Terms: every entry is one (its name, title and aliases), and a glossary defines the others.

``{term}`softmax``` (MyST) and ``:term:`softmax``` (reST) resolve here, case-insensitively:
an entry's term leads to its page, a glossary term to its definition.  With ``link_terms``
the first mention of another entry's term in a page's prose links to that entry
(``TermLinker``: whole words, longest first, never in code, headings, links or the entry's
own page, nor to an entry the page linked already), found in the text of the rendered HTML
(read with Python's HTML tokenizer, whichever prose format made it), so the same pass
serves Markdown and reST.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from html import escape as escape_text
from html.parser import HTMLParser

from markupsafe import Markup, escape

# A term is a whole word: no letter, digit, "_" or "-" right before or after it.
_EDGE_BEFORE, _EDGE_AFTER = r"(?<![\w-])", r"(?![\w-])"
MAX_TERM_CHARS = 120
_NOT_ID = re.compile(r"[^\w.:-]+")
VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
                  "track", "wbr"})
# Text inside these is never a mention: code, links, math, scripts, headings.
OPAQUE = frozenset({"a", "code", "pre", "kbd", "samp", "script", "style", "math", "textarea", "svg", "var",
                    "h1", "h2", "h3", "h4", "h5", "h6"})


def term_key(text: str) -> str:
    """How a term is compared: case folded, spaces collapsed."""
    return " ".join(text.split()).casefold()


def glossary_anchor(term: str) -> str:
    """The id of a glossary term's definition on its page ("term-softmax")."""
    return "term-" + (_NOT_ID.sub("-", term_key(term)).strip("-") or "x")


@dataclass(frozen=True)
class Term:
    """What a term leads to: an entry's page, or a glossary definition on a page."""

    text: str  # as its entry or glossary writes it
    entry: str  # the entry whose page holds it
    anchor: str = ""  # a glossary definition's id ("" : the entry's page itself)
    title: str = ""  # the entry's title, or the glossary term
    summary: str = ""  # the entry's summary or the definition's first line (previews, glossary page)


@dataclass(frozen=True)
class GlossaryTerm:
    """One definition of a ``glossary`` directive: its terms (the first and its aliases)."""

    terms: tuple[str, ...]
    definition: str  # its text, as written (Markdown or reST)
    line: int = 0  # its first line in the directive's body (0-based)


def glossary_terms(body: str) -> list[GlossaryTerm]:
    """The definitions of a glossary directive's body: term lines (several for one
    definition), each followed by its indented definition, as Sphinx reads them."""
    found: list[GlossaryTerm] = []
    terms: list[str] = []
    definition: list[str] = []
    start = 0
    base: int | None = None

    def flush() -> None:
        if terms:
            found.append(GlossaryTerm(tuple(terms), "\n".join(definition).strip("\n"), start))

    for number, line in enumerate(body.split("\n")):
        if not line.strip():
            if definition:
                definition.append("")
            continue
        indent = len(line) - len(line.lstrip())
        base = indent if base is None else base
        if indent <= base:
            if definition:
                flush()
                terms, definition = [], []
            if not terms:
                start = number
            term = line.strip().split(" : ")[0]  # Sphinx's "term : classifier"
            if len(term) <= MAX_TERM_CHARS:
                terms.append(term)
        elif terms:
            definition.append(line[base:])
    flush()
    return found


@dataclass
class SiteTerms:
    """Every term of the site, by term_key (the first definition of each holds)."""

    terms: dict[str, Term] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    _entry_terms: dict[str, Term] | None = field(default=None, repr=False, compare=False)

    def add(self, term: Term, where: str) -> None:
        self._entry_terms = None
        key = term_key(term.text)
        if not key or len(key) > MAX_TERM_CHARS:
            return
        first = self.terms.get(key)
        if first is None:
            self.terms[key] = term
        elif (first.entry, first.anchor) != (term.entry, term.anchor):
            self.problems.append(f"{where}: the term {term.text!r} already names "
                                 f"{first.entry if not first.anchor else 'a glossary term of ' + first.entry}: "
                                 "it leads there")

    def find(self, text: str) -> Term | None:
        """The term ``text`` names (case-insensitive), or None."""
        return self.terms.get(term_key(text))

    def entry_terms(self) -> dict[str, Term]:
        """The terms that lead to an entry's page (what link_terms links)."""
        if self._entry_terms is None:  # asked for once per page: made once per site
            self._entry_terms = {k: t for k, t in self.terms.items() if not t.anchor}
        return self._entry_terms

    def glossary(self) -> list[Term]:
        """The glossary's terms, alphabetically."""
        return sorted((t for t in self.terms.values() if t.anchor), key=lambda t: term_key(t.text))


def mention_pattern(texts: Iterable[str]) -> re.Pattern[str] | None:
    """One pattern matching any of ``texts`` as a whole word, longest first, any case."""
    words = sorted({term_key(t) for t in texts if t.strip()}, key=lambda t: (-len(t), t))
    if not words:
        return None
    alternatives = "|".join(r"\s+".join(re.escape(part) for part in w.split()) for w in words)
    return re.compile(f"{_EDGE_BEFORE}(?:{alternatives}){_EDGE_AFTER}", re.IGNORECASE)


class TermLinker:
    """Links the first mention of each other entry's term in one page's prose (see the module docstring)."""

    def __init__(self, terms: dict[str, Term], entry: str, link: Callable[[Term, str], Markup],
                 entry_of: Callable[[str], str | None] = lambda href: None) -> None:
        self.terms = {k: t for k, t in terms.items() if t.entry != entry}  # never the page's own entry
        self.pattern = mention_pattern(t.text for t in self.terms.values())
        self.link = link  # (term, the words as written) -> its link's HTML
        self.entry_of = entry_of  # a link's href -> the entry whose page it leads to, or None
        self.linked: set[str] = set()  # entries linked on this page so far

    def __call__(self, html: str) -> str:
        if self.pattern is None:
            return html
        parser = _Mentions(self)
        parser.feed(html)
        parser.close()
        return "".join(parser.out)

    def rewrite(self, text: str) -> str | None:
        """``text`` (a text node's) with its first mentions linked, as HTML; None when it has none."""
        assert self.pattern is not None
        out: list[str] = []
        last = 0
        for match in self.pattern.finditer(text):
            term = self.terms.get(term_key(match.group(0)))
            if term is None or term.entry in self.linked:
                continue
            self.linked.add(term.entry)
            out += [str(escape(text[last:match.start()])), str(self.link(term, match.group(0)))]
            last = match.end()
        if not out:
            return None
        out.append(str(escape(text[last:])))
        return "".join(out)


class _Mentions(HTMLParser):
    """Rendered HTML as it is, but for the text nodes outside OPAQUE elements (TermLinker.rewrite);
    a link met on the way counts its entry as linked."""

    def __init__(self, linker: TermLinker) -> None:
        super().__init__(convert_charrefs=True)
        self.linker = linker
        self.out: list[str] = []
        self.open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.out.append(self.get_starttag_text() or "")
        if tag == "a":
            linked = self.linker.entry_of(dict(attrs).get("href") or "")
            if linked:
                self.linker.linked.add(linked)
        if tag not in VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.out.append(self.get_starttag_text() or "")

    def handle_endtag(self, tag: str) -> None:
        self.out.append(f"</{tag}>")
        if tag in self.open:
            del self.open[len(self.open) - 1 - self.open[::-1].index(tag):]

    def handle_data(self, data: str) -> None:
        replaced = None if OPAQUE.intersection(self.open) else self.linker.rewrite(data)
        self.out.append(escape_text(data, quote=False) if replaced is None else replaced)

    def handle_comment(self, data: str) -> None:
        self.out.append(f"<!--{data}-->")

    def handle_decl(self, decl: str) -> None:
        self.out.append(f"<!{decl}>")
