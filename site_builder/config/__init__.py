"""Configuration: ``[tool.site_builder]`` in ``pyproject.toml``, then command-line overrides.

Each setting is declared once, as a field of ``Config`` in ``settings.py`` (per-entry and API
documentation keys: ``EntryOverrides`` and ``ApiDocsSource`` in ``tables.py``): its name, type,
default, kind and one line of help. The loader (``load.py``), its error messages (``kinds.py``) and
the configuration reference (``reference.py`` writes docs/reference/configuration.md) all derive
from those declarations. Adding a setting is a one-place change: add a field there with
``setting(default, kind=..., help=...)``, using a kind of ``kinds.py`` (or a new one, with its
check), then regenerate the reference (``python -m site_builder.config.reference``; a test fails
until it is current).

This package is on the shared bottom: it imports only ``errors``, ``fs``, ``names`` and ``patterns``.
"""

from __future__ import annotations

from site_builder.config.kinds import BUNDLED_STYLES, csl_style_file, project_path
from site_builder.config.load import load_config, source_date_epoch, with_overrides
from site_builder.config.settings import ON_FAILURE, Config
from site_builder.config.tables import PROSE_LANGUAGES, ApiDocsSource, EntryOverrides

__all__ = [
    "BUNDLED_STYLES", "ON_FAILURE", "PROSE_LANGUAGES", "ApiDocsSource", "Config", "EntryOverrides",
    "csl_style_file", "load_config", "project_path", "source_date_epoch", "with_overrides",
]
