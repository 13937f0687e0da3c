"""The one Jinja environment over ``templates/``: the pages, the prose macros, serve's pages, new entries.

Imports Jinja2, so the stages that need no rendering never import this module.
"""

from __future__ import annotations

import functools

import jinja2

from site_builder.site.formatting import format_duration
from site_builder.site.safety.text import finalize
from site_builder.site.sitefiles import TEMPLATES_DIR


@functools.lru_cache(maxsize=2)
def jinja_environment(text: bool = False) -> jinja2.Environment:
    """The templates' environment, kept for the life of the process: HTML and XML escaped, or,
    with ``text``, nothing escaped and the file's last newline kept (a new entry's source).
    A page's values pass ``finalize`` (no control character reaches a page).

    Compiling the templates costs far more than rendering them; Jinja still reloads a
    template whose file changed (auto_reload), so ``serve`` sees template edits.
    """
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES_DIR),
        autoescape=False if text else jinja2.select_autoescape(["html", "xml"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=text,
        auto_reload=True,
        finalize=None if text else finalize,
    )
    env.filters["duration"] = format_duration
    return env
