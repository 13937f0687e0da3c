"""The markup of Markdown prose's constructs: the macros of templates/_prose_myst.html."""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from site_builder.site.templates import jinja_environment

PROSE_TEMPLATE = "_prose_myst.html"


def _module() -> Any:
    """The template's macros (reloaded when the file changes, as under ``serve``)."""
    return jinja_environment().get_template(PROSE_TEMPLATE).module


def macro(name: str, *args: Any, **kwargs: Any) -> Markup:
    """The HTML of macro ``name`` of templates/_prose_myst.html (its arguments escaped unless Markup)."""
    return Markup(str(getattr(_module(), name)(*args, **kwargs)))
