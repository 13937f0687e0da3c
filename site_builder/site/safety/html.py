"""Sanitise HTML that comes from prose or from a demo's values before it reaches a page.

Markdown, reST and ``_repr_html_`` output all go through one allowlist (nh3, the Rust
``ammonia`` sanitiser): known tags and attributes only, links to http(s)/mailto or
relative URLs only, no scripts, styles, event handlers or forms (a value's folding
checkboxes aside: value_html.py). A well-kept sanitiser
catches the encodings (``jav&#x61;script:``, tabs, ``&colon;``) a hand-written filter misses.

Beyond semantic HTML and MathML, the list keeps what JupyterLab's sanitiser keeps of the
presentational HTML notebooks are written with (``<center>``, ``<font color>``, ``align``,
``width``, ``valign``, ``bgcolor``, ``border``...): attributes that only lay out or colour
the element they are on.  Left out of what JupyterLab keeps: ``style`` (the page's CSP runs
no inline style: value_html.py moves a value's into its scoped sheet), what loads from a URL
(``<audio>``, ``<video>``, ``<source>``, ``background=``, ``<area>``), forms and their
controls, ``<nav>`` (a second navigation landmark), and ``target`` (links open in place).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import nh3

ALLOWED_TAGS = frozenset({
    "a", "abbr", "aside", "b", "blockquote", "br", "caption", "cite", "code", "col", "colgroup",
    "dd", "del", "details", "div", "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3",
    "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s",
    "samp", "section", "small", "span", "strong", "sub", "summary", "sup", "table", "tbody",
    "td", "tfoot", "th", "thead", "tr", "u", "ul", "var",
    # the rest of what notebooks' raw HTML uses and JupyterLab keeps (see the module docstring)
    "acronym", "address", "article", "bdi", "bdo", "big", "center", "dfn", "font", "footer",
    "header", "hgroup", "nobr", "strike", "time", "tt", "wbr",
    # MathML Core's presentation elements (docutils writes formulas as MathML): no mglyph,
    # malignmark, annotation-xml or semantics, the elements of known namespace-confusion tricks.
    "math", "mi", "mn", "mo", "ms", "mtext", "mspace", "mrow", "msub", "msup", "msubsup",
    "mfrac", "msqrt", "mroot", "munder", "mover", "munderover", "mtable", "mtr", "mtd",
    "mstyle", "mpadded", "mphantom",
})
_CELL_LAYOUT = {"align", "valign", "width", "height", "bgcolor", "nowrap"}
ALLOWED_ATTRIBUTES = {
    "*": {"class", "id", "title", "lang", "dir"},
    "a": {"href"},
    "img": {"src", "alt", "width", "height", "align", "border", "hspace", "vspace"},
    "td": {"colspan", "rowspan", *_CELL_LAYOUT},
    "th": {"colspan", "rowspan", "scope", "abbr", *_CELL_LAYOUT},
    "tr": {"align", "valign", "bgcolor"},
    "thead": {"align", "valign"},
    "tbody": {"align", "valign"},
    "tfoot": {"align", "valign"},
    "table": {"align", "border", "cellpadding", "cellspacing", "width", "bgcolor", "summary"},
    "col": {"span", "align", "valign", "width"},
    "colgroup": {"span", "align", "valign", "width"},
    "caption": {"align"},
    "div": {"align"},
    "p": {"align"},
    **{f"h{level}": {"align"} for level in range(1, 7)},
    "hr": {"align", "size", "width", "noshade"},
    "font": {"color", "face", "size"},
    "details": {"open"},
    "time": {"datetime"},
    "ol": {"start", "type", "reversed"},
    "ul": {"type"},
    "li": {"type", "value"},
    "math": {"display"},
    "mo": {"stretchy", "fence", "separator", "accent", "largeop", "movablelimits"},
    "mstyle": {"displaystyle", "scriptlevel", "mathvariant"},
    "mi": {"mathvariant"},
    "mspace": {"width"},
    "mtd": {"columnalign"},
    "mtable": {"columnalign"},
}
URL_SCHEMES = frozenset({"http", "https", "mailto"})
# A value's HTML may also fold without scripts, as estimator diagrams do (a checkbox and its
# label; value_html.py renames their ids per value and keeps only those input types).
CONTROL_TAGS = frozenset({"input", "label"})
CONTROL_ATTRIBUTES = {
    "*": {"hidden"},  # a diagram hides its folding view, for its own CSS to show it
    "input": {"checked", "disabled", "name"},
    "label": {"for"},
    "details": {"open"},
}
CONTROL_VALUES = {"input": {"type": {"checkbox", "radio"}}}
# Prose's players of videos published with the page (Quarto's {{< video clip.mp4 >}}): their
# ``src`` relative only (media_source), so that a page plays nothing from elsewhere.
MEDIA_TAGS = frozenset({"video"})
MEDIA_ATTRIBUTES = {"video": {"src", "controls", "preload", "width", "height", "aria-label"}}


def clean_html(html: str, controls: bool = False, fragments: Mapping[str, str] | None = None,
               media: bool = False) -> str:
    """``html`` with everything outside the allowlist removed (text kept, markup dropped).

    ``controls``: a value's HTML, whose folding checkboxes and labels are kept too;
    ``fragments``: links ``#name`` to lead to ``#fragments[name]`` instead (prose cleaned again
    once the page knows where they lead); ``media``: prose, whose ``<video>`` players of the
    page's own files are kept (MEDIA_TAGS; raw HTML's lost their ``src`` before: raw_html).
    """
    attributes = {tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()}
    if controls:
        for tag, names in CONTROL_ATTRIBUTES.items():
            attributes[tag] = attributes.get(tag, set()) | names
    if media:
        attributes.update({tag: set(names) for tag, names in MEDIA_ATTRIBUTES.items()})
    relink = _relinked(fragments) if fragments else None
    return nh3.clean(
        html,
        tags=set(ALLOWED_TAGS | (CONTROL_TAGS if controls else set()) | (MEDIA_TAGS if media else set())),
        clean_content_tags={"script", "style"},
        attributes=attributes,
        tag_attribute_values={tag: {a: set(v) for a, v in values.items()}
                              for tag, values in CONTROL_VALUES.items()} if controls else None,
        url_schemes=set(URL_SCHEMES),
        link_rel="noopener noreferrer",
        strip_comments=True,
        attribute_filter=_media_source(relink) if media else relink,
    )


def _media_source(then: Callable[[str, str, str], str] | None) -> Callable[[str, str, str], str | None]:
    """An attribute filter dropping a ``<video src>`` that is no relative URL of the site (the
    page's own file), before ``then``."""
    def keep(tag: str, attribute: str, value: str) -> str | None:
        if tag == "video" and attribute == "src" and (
                value.startswith(("/", "\\")) or ":" in value.split("/", 1)[0]):
            return None
        return then(tag, attribute, value) if then is not None else value

    return keep


def _relinked(fragments: Mapping[str, str]) -> Callable[[str, str, str], str]:
    def relink(tag: str, attribute: str, value: str) -> str:
        if tag == "a" and attribute == "href" and value.startswith("#") and value[1:] in fragments:
            return "#" + fragments[value[1:]]
        return value

    return relink
