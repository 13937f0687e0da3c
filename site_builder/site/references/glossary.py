"""A Markdown ``glossary`` directive's markup: each definition's terms over its rendered text.

Its terms are site terms (terms.SiteTerms, read by scan before any page renders); here the
first term of each definition takes the id ``{term}`` links lead to (site.glossary_anchor).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from markupsafe import Markup

from site_builder.site.references.macros import macro
from site_builder.site.references.scan import strip_options
from site_builder.site.references.site import glossary_anchor
from site_builder.site.references.terms import glossary_terms


def glossary_html(page: Any, body: list[str], render: Callable[[str], Markup]) -> str:
    """The glossary of a directive's ``body`` lines; ``render`` renders a definition's Markdown."""
    items = [{"terms": g.terms, "anchor": glossary_anchor(g.terms[0]), "html": render(g.definition)}
             for g in glossary_terms(strip_options("\n".join(body)))]
    return str(macro("glossary", items))
