"""The configuration reference (docs/reference/configuration.md), written from the settings' declarations.

``python -m site_builder.config.reference [FILE]`` writes it (to standard output without FILE);
a test fails when the committed file differs from what this module writes.
"""

from __future__ import annotations

import sys
from dataclasses import MISSING
from pathlib import Path
from typing import Any

from site_builder.config.kinds import Setting, declared, default_of
from site_builder.config.settings import Config
from site_builder.config.tables import ApiDocsSource, EntryOverrides

INTRO = """\
# Configuration reference

Every key of `[tool.site_builder]` in a project's `pyproject.toml` is optional. This page is
written from the settings' declarations (`site_builder/config/settings.py`) by
`python -m site_builder.config.reference docs/reference/configuration.md`; a test fails when it is
not current, so edit the declarations, not this page.

An unknown key, a value of the wrong type, an empty string, or output, records and demos folders
that are or contain one another or the project folder, are an error naming the key (exit status
2); so is the table spelt otherwise (`[tool.site-builder]` is refused, not ignored: the table is
`[tool.site_builder]`). An override for an entry that does not exist is a warning, and so is a
demos folder holding no demo (the site then has no entries). Command-line options (`--demos`,
`--out`, `--timeout`) override the file.
"""


def _toml(value: Any) -> str:
    """``value`` as TOML writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int):
        return f"{value:_}" if value >= 10_000 else str(value)
    if isinstance(value, (str, Path)):
        return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return repr(value)


def _default(cls: type, key: str, declaration: Setting) -> str | None:
    """The default as the reference shows it; None when the setting is unset by default or required."""
    if declaration.shown_default is not None:
        return declaration.shown_default
    value = default_of(cls, key)
    if value is None or value is MISSING or value == {} or value == "":  # "" is refused in the file: unset
        return None
    return f"`{_toml(value)}`"


def _section(cls: type, heading: str, table: str) -> list[str]:
    lines = [f"## {heading}", ""]
    for key, declaration in declared(cls).items():
        help = declaration.help[0].upper() + declaration.help[1:]
        lines += [f"### `{table}{key}`", "", help.rstrip(".") + ".", ""]
        lines.append(f"- Value: {declaration.kind.human}")
        default = _default(cls, key, declaration)
        lines.append(f"- Default: {default}" if default else "- Default: unset")
        if declaration.example:
            lines.append(f"- Example: `{key} = {declaration.example}`")
        lines.append("")
    return lines


def _overview() -> list[str]:
    """A ``[tool.site_builder]`` table holding every default (and examples, commented out)."""
    lines = ["## The defaults at a glance", "", "```toml", "[tool.site_builder]"]
    for key, declaration in declared(Config).items():
        default = _default(Config, key, declaration)
        if key in ("entries", "api_docs"):  # tables: shown after this one
            continue
        if declaration.shown_default is not None or default is None:
            example = declaration.example or "..."
            lines.append(f"# {key} = {example}")
        else:
            lines.append(f"{key} = {default.strip('`')}")
    lines += ["", '[tool.site_builder.entries.attention]   # per-entry overrides', "timeout = 1800",
              "tolerance = 1e-6", 'prose = "markdown"', "",
              '[tool.site_builder.entries."basics/plot"]   # an entry in a section: its quoted SECTION/NAME',
              "timeout = 60", "", "[tool.site_builder.api_docs]",
              'numpy = "https://numpy.org/doc/stable/"',
              'sklearn = { url = "https://scikit-learn.org/stable/", inventory = "docs/inventories/sklearn.inv" }',
              "```", ""]
    return lines


def reference_markdown() -> str:
    """The configuration reference page, in Markdown."""
    lines = [INTRO, *_overview(), *_section(Config, "Settings", ""),
             *_section(EntryOverrides, "Per-entry overrides: `[tool.site_builder.entries.NAME]`", "entries.NAME."),
             *_section(ApiDocsSource, "API documentation: `[tool.site_builder.api_docs]`", "api_docs.PACKAGE.")]
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    text = reference_markdown()
    if len(sys.argv) > 1:
        Path(sys.argv[1]).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
