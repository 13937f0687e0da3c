"""The markup of citations, cross-references and terms: the macros of templates/_references.html."""

from __future__ import annotations

import functools
from typing import Any

import jinja2
from markupsafe import Markup

from site_builder.site.sitefiles import TEMPLATES_DIR

REFERENCES_TEMPLATE = "_references.html"


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES_DIR), autoescape=True,
                              trim_blocks=True, lstrip_blocks=True, auto_reload=True,
                              undefined=jinja2.StrictUndefined)


def macro(name: str, *args: Any, **kwargs: Any) -> Markup:
    """The HTML of macro ``name`` of templates/_references.html (its arguments escaped unless Markup)."""
    module = _environment().get_template(REFERENCES_TEMPLATE).module
    return Markup(str(getattr(module, name)(*args, **kwargs)).strip())
