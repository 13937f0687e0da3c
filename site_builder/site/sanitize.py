"""Sanitise HTML that comes from prose or from a demo's values before it reaches a page.

Markdown, reST and ``_repr_html_`` output all go through one allowlist (nh3, the Rust
``ammonia`` sanitiser): known tags and attributes only, links to http(s)/mailto or
relative URLs only, no scripts, styles, event handlers or forms. A well-kept sanitiser
catches the encodings (``jav&#x61;script:``, tabs, ``&colon;``) a hand-written filter misses.
"""

from __future__ import annotations

import nh3

ALLOWED_TAGS = frozenset({
    "a", "abbr", "aside", "b", "blockquote", "br", "caption", "cite", "code", "col", "colgroup",
    "dd", "del", "details", "div", "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3",
    "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s",
    "samp", "section", "small", "span", "strong", "sub", "summary", "sup", "table", "tbody",
    "td", "tfoot", "th", "thead", "tr", "u", "ul", "var",
    # MathML Core's presentation elements (docutils writes formulas as MathML): no mglyph,
    # malignmark, annotation-xml or semantics, the elements of known namespace-confusion tricks.
    "math", "mi", "mn", "mo", "ms", "mtext", "mspace", "mrow", "msub", "msup", "msubsup",
    "mfrac", "msqrt", "mroot", "munder", "mover", "munderover", "mtable", "mtr", "mtd",
    "mstyle", "mpadded", "mphantom",
})
ALLOWED_ATTRIBUTES = {
    "*": {"class", "id", "title", "lang"},
    "a": {"href"},
    "img": {"src", "alt", "width", "height"},
    "td": {"colspan", "rowspan", "align"},
    "th": {"colspan", "rowspan", "align", "scope"},
    "col": {"span"},
    "ol": {"start", "type"},
    "math": {"display"},
    "mo": {"stretchy", "fence", "separator", "accent", "largeop", "movablelimits"},
    "mstyle": {"displaystyle", "scriptlevel", "mathvariant"},
    "mi": {"mathvariant"},
    "mspace": {"width"},
    "mtd": {"columnalign"},
    "mtable": {"columnalign"},
}
URL_SCHEMES = frozenset({"http", "https", "mailto"})


def clean_html(html: str) -> str:
    """``html`` with everything outside the allowlist removed (text kept, markup dropped)."""
    return nh3.clean(
        html,
        tags=set(ALLOWED_TAGS),
        clean_content_tags={"script", "style"},
        attributes={tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()},
        url_schemes=set(URL_SCHEMES),
        link_rel="noopener noreferrer",
        strip_comments=True,
    )
