"""The markup of Markdown prose's constructs: the macros of templates/_prose_myst.html."""

from __future__ import annotations

import functools
from typing import Any

import jinja2
from markupsafe import Markup

from site_builder.site.safety.text import finalize
from site_builder.site.sitefiles import TEMPLATES_DIR

PROSE_TEMPLATE = "_prose_myst.html"


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES_DIR), autoescape=True,
                              trim_blocks=True, lstrip_blocks=True, auto_reload=True,
                              undefined=jinja2.StrictUndefined, finalize=finalize)


def _module() -> Any:
    """The template's macros (reloaded when the file changes, as under ``serve``)."""
    return _environment().get_template(PROSE_TEMPLATE).module


def macro(name: str, *args: Any, **kwargs: Any) -> Markup:
    """The HTML of macro ``name`` of templates/_prose_myst.html (its arguments escaped unless Markup)."""
    return Markup(str(getattr(_module(), name)(*args, **kwargs)))
