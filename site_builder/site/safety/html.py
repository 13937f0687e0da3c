"""Sanitise HTML that comes from prose or from a demo's values before it reaches a page.

Markdown, reST and ``_repr_html_`` output all go through one allowlist (nh3, the Rust
``ammonia`` sanitiser): known tags and attributes only, links to http(s)/mailto or
relative URLs only, no scripts, styles, event handlers or forms (a value's folding
checkboxes aside: value_html.py). A well-kept sanitiser
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


def clean_html(html: str, controls: bool = False) -> str:
    """``html`` with everything outside the allowlist removed (text kept, markup dropped).

    ``controls``: a value's HTML, whose folding checkboxes and labels are kept too.
    """
    attributes = {tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()}
    if controls:
        for tag, names in CONTROL_ATTRIBUTES.items():
            attributes[tag] = attributes.get(tag, set()) | names
    return nh3.clean(
        html,
        tags=set(ALLOWED_TAGS | CONTROL_TAGS) if controls else set(ALLOWED_TAGS),
        clean_content_tags={"script", "style"},
        attributes=attributes,
        tag_attribute_values={tag: {a: set(v) for a, v in values.items()}
                              for tag, values in CONTROL_VALUES.items()} if controls else None,
        url_schemes=set(URL_SCHEMES),
        link_rel="noopener noreferrer",
        strip_comments=True,
    )
