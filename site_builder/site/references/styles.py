"""CSL styles with citeproc-py: a style by name or file; works' entries and citations as text.

citeproc-py formats (its CSL processor: author-date and numbered styles, locators, sorting).
Its HTML formatter leaves the data's own text unescaped, so it is given a formatter of our
own whose tags are private-use characters: the whole output is escaped, then those
characters become the few tags a style asks for (italic, bold, ...).  What citeproc-py does
not do, this module adds: author-year disambiguation (1931a, 1931b, through CSL's
``year-suffix``) and the narrative forms ("Friedman (1956)", "Friedman [1]").
"""

from __future__ import annotations

import functools
import html
import io
import logging
import re
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from site_builder.config import csl_style_file

log = logging.getLogger(__name__)

DEFAULT_STYLE = "apa"  # author-year, as Jupyter Book's and Quarto's defaults read
_CSL_NS = {"cs": "http://purl.org/net/xbiblio/csl"}
# The formatter's tags: an opening and a closing private-use character each (no letters:
# a style's text-case must not change them).
_TAGS = {"i": ("\ue000", "\ue001"), "b": ("\ue002", "\ue003"), "sup": ("\ue004", "\ue005"),
         "sub": ("\ue006", "\ue007"), "span": ("\ue008", "\ue009"), "u": ("\ue00a", "\ue00b")}
_LOCATORS = {
    "p": "page", "pp": "page", "page": "page", "pages": "page", "ch": "chapter", "chap": "chapter",
    "chapter": "chapter", "sec": "section", "section": "section", "§": "section", "fig": "figure",
    "figure": "figure", "vol": "volume", "volume": "volume", "para": "paragraph", "line": "line",
    "l": "line", "eq": "equation", "no": "issue", "col": "column", "n": "note", "note": "note",
}
_LOCATOR = re.compile(r"^(?P<label>[a-z§]+)\.?\s*(?P<value>\S.*)$|^(?P<bare>\d[\w\s,\u2013–-]*)$", re.IGNORECASE)


def _wrapper(tag: str) -> type:
    opening, closing = _TAGS[tag]

    class Wrapped(str):
        def __new__(cls, text: str) -> Wrapped:
            return super().__new__(cls, f"{opening}{text}{closing}")

    return Wrapped


class _MarkerFormatter:
    """citeproc-py's formatter interface, marking tags with private-use characters."""

    preformat = staticmethod(str)
    Italic = Oblique = _wrapper("i")
    Bold = _wrapper("b")
    Light = Underline = _wrapper("u")
    Superscript = _wrapper("sup")
    Subscript = _wrapper("sub")
    SmallCaps = _wrapper("span")


def as_html(marked: str) -> str:
    """citeproc's output (tags as private-use characters) as escaped HTML."""
    text = html.escape(marked, quote=False)
    for tag, (opening, closing) in _TAGS.items():
        start = f'<{tag} class="smallcaps">' if tag == "span" else f"<{tag}>"
        text = text.replace(opening, start).replace(closing, f"</{tag}>")
    return text


def plain(marked: str) -> str:
    """citeproc's output as plain text."""
    return re.sub("[\ue000-\ue00f]", "", marked)


class StyleError(Exception):
    """A citation style that cannot be read."""


def style_path(setting: str, root: Path) -> Path | str:
    """The CSL file a ``citation_style`` setting names: a name (``apa``, ``ieee``) or a
    ``.csl`` file inside the project (checked by config)."""
    if setting.endswith(".csl"):
        return root.joinpath(*setting.split("/"))
    found = csl_style_file(setting)
    if found is None:
        raise StyleError(f"there is no CSL style named {setting!r}")
    return found if found == setting else Path(found)


@dataclass(frozen=True)
class Layout:
    """How a style joins the items of one citation: "(" + "A, 1956; B, 2001" + ")"."""

    prefix: str
    suffix: str
    delimiter: str


class CitationStyle:
    """One CSL style, loaded once: formats works and citations (see the module docstring)."""

    def __init__(self, source: str, name: str) -> None:
        """``source``: a CSL file's path or a bundled style's name, or a style's XML text."""
        from citeproc import CitationStylesStyle

        self.name = name
        xml = source.lstrip().startswith("<")
        if xml and ("<!DOCTYPE" in source or "<!ENTITY" in source):  # CSL needs none; entities could read files
            raise StyleError(f"the CSL style {name} declares a DOCTYPE or entities, which CSL styles never need")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # citeproc-py warns of CSL features it skips
                self.style = CitationStylesStyle(io.BytesIO(source.encode("utf-8")) if xml else source,
                                                 validate=False)
        except Exception as exc:  # noqa: BLE001 (lxml's and citeproc-py's errors)
            raise StyleError(f"the CSL style {name} cannot be read: {exc}") from None
        root = self.style.root
        if root is None or getattr(root, "citation", None) is None:
            raise StyleError(f"the CSL style {name} has no <citation> element")
        formats = root.xpath("cs:info/cs:category/@citation-format", namespaces=_CSL_NS)
        self.numeric = bool(formats) and formats[0] in ("numeric", "label")
        layout = root.citation.layout
        self.layout = Layout(layout.get("prefix", "") or "", layout.get("suffix", "") or "",
                             layout.get("delimiter", "; ") or "; ")
        self.lock = threading.Lock()  # citeproc-py keeps state on the style while it renders

    def source(self, items: list[dict[str, Any]]) -> Any:
        """citeproc-py's source of ``items`` (CSL-JSON, each "id" a key citeproc may lower-case)."""
        from citeproc.source.json import CiteProcJSON

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return CiteProcJSON(items)

    def bibliography(self, source: Any) -> Any:
        """A new bibliography (citeproc-py's) over ``source``: one per page."""
        from citeproc import CitationStylesBibliography

        return CitationStylesBibliography(self.style, source, _MarkerFormatter)

    def cite(self, bibliography: Any, ids: list[str], locators: list[str]) -> list[str]:
        """Each item of one citation as the style shows it inside the citation (marked text):
        "Friedman, 1956", "[1]"; each id registered with ``bibliography`` first."""
        from citeproc import Citation, CitationItem

        shown = []
        with self.lock, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for cid in ids:
                bibliography.register(Citation([CitationItem(cid)]))
            for cid, locator in zip(ids, locators):
                citation = Citation([CitationItem(cid, **_locator(locator))])
                bibliography.register(citation)  # (its work is registered already: no new entry)
                text = str(bibliography.cite(citation, _ignore))
                shown.append(self._inner(text))
        return shown

    def register(self, bibliography: Any, ids: list[str]) -> None:
        """Register works with ``bibliography`` in this order (a numbered style numbers them so)."""
        from citeproc import Citation, CitationItem

        with self.lock:
            for cid in ids:
                bibliography.register(Citation([CitationItem(cid)]))

    def _inner(self, text: str) -> str:
        prefix, suffix = self.layout.prefix, self.layout.suffix
        if prefix and text.startswith(prefix):
            text = text[len(prefix):]
        if suffix and text.endswith(suffix):
            text = text[: -len(suffix)]
        return text

    def entries(self, bibliography: Any) -> list[tuple[str, str]]:
        """(id, entry as marked text) of every registered work, in the style's order."""
        with self.lock, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            bibliography.sort()
            return [(str(k), str(text)) for k, text in zip(bibliography.keys, bibliography.bibliography())]


def _ignore(item: Any) -> None:
    """citeproc-py's callback for an unknown item (never called: only known ids are cited)."""


def _locator(text: str) -> dict[str, Any]:
    """A Pandoc locator ("p. 33", "chap. 2", "33") as citeproc-py's, {} when it reads as none."""
    from citeproc import Locator

    match = _LOCATOR.match(text.strip()) if text.strip() else None
    if match is None:
        return {}
    if match.group("bare"):
        return {"locator": Locator("page", match.group("bare").strip())}
    label = _LOCATORS.get(match.group("label").lower())
    return {"locator": Locator(label, match.group("value").strip())} if label else {}


def is_locator(text: str) -> bool:
    """True when ``text`` (after a key, in Pandoc's ``[@key, p. 33]``) is a locator the style shows."""
    return bool(_locator(text))


@functools.lru_cache(maxsize=8)
def load_style(source: str, name: str) -> CitationStyle:
    """The style in ``source`` (see CitationStyle), loaded once per process and text."""
    return CitationStyle(source, name)
