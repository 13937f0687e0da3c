"""Pandoc's and Quarto's citation syntax in Markdown prose: ``[@key]``, ``[see @a; @b, p. 33]``,
``@key``, ``[-@key]``, and Quarto's cross-references ``@fig-x``, ``@tbl-x``, ``@eq-x``, ``@sec-x``.

Found in the rendered HTML's text (html_text), so it works whichever Markdown parser made
it, and never in code, links or math.  Pandoc's rules guard the rest of the prose: an ``@``
right after a letter or digit (an e-mail address) starts no citation, and a key ends
before trailing punctuation.  A bracketed citation is always meant as one (an unknown key
is a warning); a bare ``@word`` is a citation only when a bibliography defines it (or a
cross-reference with a Quarto prefix), so a decorator named in prose (``@property``) stays text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from markupsafe import Markup, escape

from site_builder.site.prose.label_ids import QUARTO_PREFIXES
from site_builder.site.references.citations import Citation, CiteItem
from site_builder.site.references.html_text import rewrite_text
from site_builder.site.references.styles import is_locator

# Pandoc's citation key: letters, digits and _, with internal punctuation :.#$%&-+?<>~/ ;
# or any text in braces.
KEY = r"(?:\{(?P<braced>[^{}\s]+)\}|(?P<key>\w(?:\w|[:.#$%&\-+?<>~/](?=\w))*))"
_BRACKETED = re.compile(r"\[(?P<body>[^\[\]]*@[^\[\]]*)\]")
_PART = re.compile(rf"^(?P<prefix>.*?)(?<![\w@])(?P<minus>-)?@{KEY}(?P<suffix>.*)$", re.DOTALL)
_NARRATIVE = re.compile(rf"(?<![\w@\\]){'@'}{KEY}(?:[ \t]\[(?P<locator>[^\[\]@]*)\])?")
CROSSREF_PREFIXES = tuple(p for p in QUARTO_PREFIXES)


class References(Protocol):
    """What the pass needs of the page (PageReferences)."""

    def cite(self, citation: Citation, where: str) -> Markup: ...

    def xref(self, label: str, where: str, shown: str = "") -> Markup: ...

    def known_work(self, key: str) -> bool: ...

    def where(self, raw: str) -> str: ...


def _key(match: re.Match[str]) -> str:
    return match.group("braced") or match.group("key")


def _is_crossref(key: str) -> bool:
    return key.startswith(CROSSREF_PREFIXES)


def _bracketed(body: str, refs: References) -> Markup | None:
    """A ``[...]`` citation's HTML, None when one of its parts holds no key (then it is text)."""
    parts = [_PART.match(p) for p in body.split(";")]
    if not all(parts):
        return None
    where = refs.where(f"[{body}]")
    items: list[CiteItem] = []
    shown: list[Markup] = []
    suppress = False
    for part in parts:
        assert part is not None
        key, prefix, suffix = _key(part), part.group("prefix").strip(), part.group("suffix").strip()
        if _is_crossref(key):
            shown.append(Markup(escape(f"{prefix} " if prefix else "")) + refs.xref(key, where)
                         + Markup(escape(f" {suffix}" if suffix else "")))
            continue
        suppress = suppress or bool(part.group("minus"))
        bare = suffix.removeprefix(",").strip()
        locator = bare if bare and is_locator(bare) else ""
        items.append(CiteItem(key, prefix, locator, "" if locator else suffix))
    if items:
        mode = "yearpar" if suppress and len(items) == 1 else "p"
        shown.append(refs.cite(Citation(tuple(items), mode), where))
    return Markup("; ").join(shown)


def _narrative(text: str, refs: References) -> str | None:
    """``text`` with its bare ``@key`` citations and ``@fig-x`` cross-references as HTML, None when it has none."""
    out: list[str] = []
    last = 0
    for match in _NARRATIVE.finditer(text):
        key = _key(match)
        if not (_is_crossref(key) or refs.known_work(key)):
            continue
        out.append(str(escape(text[last:match.start()])))
        where = refs.where(match.group(0))
        if _is_crossref(key):
            out.append(refs.xref(key, where))
            if match.group("locator") is not None:
                out.append(str(escape(f" [{match.group('locator')}]")))
        else:
            locator = (match.group("locator") or "").strip()
            item = CiteItem(key, locator=locator if is_locator(locator) else "",
                            suffix="" if is_locator(locator) else locator)
            out.append(refs.cite(Citation((item,), "t"), where))
        last = match.end()
    if not out:
        return None
    out.append(str(escape(text[last:])))
    return "".join(out)


def _rewrite(text: str, refs: References) -> str | None:
    if "@" not in text:
        return None
    out: list[str] = []
    last, changed = 0, False
    for match in _BRACKETED.finditer(text):
        html = _bracketed(match.group("body"), refs)
        if html is None:
            continue
        before = text[last:match.start()]
        out.append(_narrative(before, refs) or str(escape(before)))
        out.append(str(html))
        last, changed = match.end(), True
    rest = text[last:]
    narrative = _narrative(rest, refs)
    if not changed and narrative is None:
        return None
    out.append(narrative if narrative is not None else str(escape(rest)))
    return "".join(out)


def pandoc_citations(html: str, refs: References) -> str:
    """Rendered Markdown ``html`` with Pandoc's citations and Quarto's cross-references resolved."""
    if "@" not in html:
        return html

    def rewrite(text: str, _stack: Sequence[tuple[str, str]]) -> str | None:
        return _rewrite(text, refs)

    return rewrite_text(html, rewrite)
