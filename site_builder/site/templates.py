"""The one Jinja environment over ``templates/``: the pages, the prose macros, serve's pages, new entries.

Imports Jinja2, so the stages that need no rendering never import this module.
"""

from __future__ import annotations

import functools
import hashlib
import logging
from pathlib import Path

import jinja2

from site_builder.site.formatting import format_duration
from site_builder.site.safety.text import finalize
from site_builder.site.sitefiles import TEMPLATES_DIR

log = logging.getLogger(__name__)


class CompiledTemplates(jinja2.FileSystemBytecodeCache):
    """The templates compiled by earlier builds, kept by Jinja in the user's own private folder
    (``_jinja2-cache-UID`` in the temporary folder: owned by the user, mode 0700, no link).

    Never in the project's cache folder, which holds no code (docs/security.md): the templates
    are the builder's own, like its ``.pyc`` files.  A file is used only under its template's
    name and path, with the checksum of its source and the Python that compiled it (Jinja's
    check); the file name adds Jinja's version and this module's text (the environment's
    options), so nothing compiled otherwise is served.  A cache that fails is no cache.
    """

    def __init__(self, kind: str, directory: str | None = None) -> None:
        options = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
        super().__init__(directory, pattern=f"site_builder-{jinja2.__version__}-{kind}-{options}-%s.cache")

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:  # unreadable or damaged (its checksum is a pickle): compiled again
            log.debug("compiled template %s not read", bucket.key, exc_info=True)
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            log.debug("compiled template %s not kept", bucket.key, exc_info=True)


def _compiled_templates(kind: str) -> CompiledTemplates | None:
    try:
        return CompiledTemplates(kind)
    except (OSError, RuntimeError):  # no private folder of ours there: compile every build
        log.debug("no cache of compiled templates", exc_info=True)
        return None


@functools.lru_cache(maxsize=2)
def jinja_environment(text: bool = False) -> jinja2.Environment:
    """The templates' environment, kept for the life of the process: HTML and XML escaped, or,
    with ``text``, nothing escaped and the file's last newline kept (a new entry's source).
    A page's values pass ``finalize`` (no control character reaches a page).

    Compiling the templates costs far more than rendering one page: their compiled code is
    kept between builds (CompiledTemplates). Jinja still reloads a template whose file
    changed (auto_reload), so ``serve`` sees template edits.
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
        bytecode_cache=_compiled_templates("text" if text else "html"),
    )
    env.filters["duration"] = format_duration
    return env
