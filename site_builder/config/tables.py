"""The settings that are tables or lists: per-entry overrides, API documentation sources, sections,
preloaded modules and bibliography files, each read and checked as a whole."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from site_builder.config.kinds import (
    DAYS, HTTP_URL, PROJECT_FILE, SECONDS, TABLE, TOLERANCE, declared, is_site_url, one_of, project_path,
    setting,
)
from site_builder.errors import UsageError
from site_builder.names import check_qualified_name

PROSE_LANGUAGES = ("auto", "markdown", "rst")
PROSE = one_of(PROSE_LANGUAGES)
_PROJECT_WIDE = "the project's `{}` setting"


@dataclass(frozen=True)
class EntryOverrides:
    """Per-entry settings from ``[tool.site_builder.entries.NAME]``."""

    timeout: float | None = setting(None, kind=SECONDS, help="seconds this entry's demo may run",
                                    shown_default=_PROJECT_WIDE.format("timeout"))
    tolerance: float | None = setting(None, kind=TOLERANCE, help="`check`: relative difference allowed "
                                      "between this entry's printed numbers",
                                      shown_default=_PROJECT_WIDE.format("tolerance"))
    prose: str | None = setting(None, kind=PROSE, help="the language of this entry's prose",
                                shown_default=_PROJECT_WIDE.format("prose"))


@dataclass(frozen=True)
class ApiDocsSource:
    """One package's API documentation, from ``[tool.site_builder.api_docs]``."""

    package: str  # the top-level import name ("numpy"); "python" stands for the standard library
    url: str = setting(kind=HTTP_URL, help="the documentation's base URL (http or https, ending in '/'): "
                       "every link lies below it", example='"https://numpy.org/doc/stable/"')
    inventory: str | None = setting(None, kind=PROJECT_FILE, help="a local objects.inv, a path relative to "
                                    "the project with '/'; unset: fetched from `<url>objects.inv`",
                                    example='"docs/inventories/numpy.inv"')
    refresh_days: float = setting(7.0, kind=DAYS, help="a fetched inventory older than this is fetched again")
    timeout: float = setting(10.0, kind=SECONDS, help="seconds allowed to fetch the inventory")


def parse_entries(table: Any) -> dict[str, EntryOverrides]:
    """``[tool.site_builder.entries.NAME]`` tables, by section-qualified entry name."""
    if not isinstance(table, dict):
        raise UsageError(f"{TABLE} entries must be a table of entry tables")
    keys = declared(EntryOverrides)
    overrides: dict[str, EntryOverrides] = {}
    for name, settings in table.items():
        if not isinstance(settings, dict):
            raise UsageError(f"pyproject.toml: [tool.site_builder.entries] {name} must be a table")
        why = check_qualified_name(name)
        if why:
            raise UsageError(f"pyproject.toml: [tool.site_builder.entries.{name}] names no possible entry: {why}")
        values = {}
        for key, value in settings.items():
            if key not in keys:
                known = ", ".join(sorted(keys))
                raise UsageError(
                    f"pyproject.toml: unknown key entries.{name}.{key} in [tool.site_builder] (known: {known})"
                )
            values[key] = keys[key].kind.read(f"entries.{name}.{key}", value)
        overrides[name] = EntryOverrides(**values)
    return overrides


_PACKAGE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse_api_docs(table: Any) -> tuple[ApiDocsSource, ...]:
    """``[tool.site_builder.api_docs]``: ``package = "URL"`` or ``package = { url = ..., inventory = ... }``."""
    where = "pyproject.toml: [tool.site_builder.api_docs]"
    if not isinstance(table, dict):
        raise UsageError(f"{where} must be a table of package = \"URL\" (e.g. numpy = \"https://numpy.org/doc/stable/\")")
    keys = declared(ApiDocsSource)
    sources = []
    for package, value in table.items():
        if not _PACKAGE_NAME.fullmatch(package):
            raise UsageError(f"{where}: {package!r} is not a top-level import name (e.g. 'numpy', 'sklearn')")
        settings = {"url": value} if isinstance(value, str) else value
        if not isinstance(settings, dict):
            raise UsageError(f"{where} {package} must be a URL or a table with url (and inventory), not {value!r}")
        values = {}
        for key, item in settings.items():
            if key not in keys:
                known = ", ".join(sorted(keys))
                raise UsageError(f"pyproject.toml: unknown key api_docs.{package}.{key} in [tool.site_builder] "
                                 f"(known: {known})")
            values[key] = keys[key].kind.read(f"api_docs.{package}.{key}", item)
        url = values.get("url")
        if url is None:
            raise UsageError(f"{where} {package} needs a url (the documentation's base, e.g. "
                             f"\"https://numpy.org/doc/stable/\")")
        values["url"] = url = url if url.endswith("/") else url + "/"
        if not is_site_url(url):
            raise UsageError(f"{where} {package}: the url must be an http(s) URL of the documentation's "
                             f"folder, e.g. 'https://numpy.org/doc/stable/', not {settings['url']!r}")
        inventory = values.get("inventory")
        if inventory is not None:
            parts = inventory.split("/")
            if inventory.startswith("/") or "\\" in inventory or any(p in ("", ".", "..") for p in parts):
                raise UsageError(f"{where} {package}: inventory must be a path inside the project, relative "
                                 f"to it with '/' (e.g. 'docs/inventories/{package}.inv'), not {inventory!r}")
        sources.append(ApiDocsSource(package, **values))
    return tuple(sources)


_MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def parse_preload(value: Any) -> tuple[str, ...]:
    """``preload = ["module", "package.module"]``: a list of importable module names."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(
            f"{TABLE} preload must be a list of module names "
            f"(e.g. [\"numpy\", \"matplotlib.pyplot\"]; [] turns preloading off), not {value!r}"
        )
    for name in value:
        if not _MODULE_NAME.fullmatch(name):
            raise UsageError(
                f"{TABLE} preload: {name!r} is not a module name "
                "(dotted Python identifiers, e.g. 'scipy.stats')"
            )
    return tuple(dict.fromkeys(value))


def parse_bibliography(value: Any) -> tuple[str, ...]:
    """``bibliography = ["refs.bib"]``: BibTeX or CSL-JSON files inside the project."""
    value = [value] if isinstance(value, str) else value
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{TABLE} bibliography must be a list of files "
                         f"(BibTeX .bib or CSL-JSON .json), e.g. [\"refs.bib\"], not {value!r}")
    for path in value:
        if not project_path(path):
            raise UsageError(f"{TABLE} bibliography: {path!r} is not a path inside "
                             "the project (relative to it, with '/', e.g. 'docs/refs.bib')")
    return tuple(dict.fromkeys(value))


def parse_sections(value: Any) -> tuple[str, ...]:
    """``sections = ["basics", "advanced"]``: section folder names, each once."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{TABLE} sections must be a list of section "
                         f"folder names, e.g. [\"basics\", \"advanced\"], not {value!r}")
    for name in value:
        why = check_qualified_name(name)
        if why:
            raise UsageError(f"{TABLE} sections: {why}")
    if len(set(value)) != len(value):
        raise UsageError(f"{TABLE} sections names a section twice")
    return tuple(value)
