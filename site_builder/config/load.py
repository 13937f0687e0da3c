"""Reading ``[tool.site_builder]`` from ``pyproject.toml`` into a ``Config``, then command-line overrides,
by the declarations of ``settings``; and the environment's one setting, ``SOURCE_DATE_EPOCH``."""

from __future__ import annotations

import dataclasses
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from site_builder.config.kinds import declared, default_of
from site_builder.config.settings import Config
from site_builder.errors import UsageError
from site_builder.fs import relative_to_root


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
    settings = declared(Config)
    for key, value in table.items():
        if key not in settings:
            known = ", ".join(sorted(settings))
            raise UsageError(f"pyproject.toml: unknown key '{key}' in [tool.site_builder] (known: {known})")
        values[key] = settings[key].kind.read(key, value)
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
    a folder it did not make with them. One exception: the demos folder may be the project folder
    (a guide of Markdown pages, say) and hold the output and records folders when their names
    start with "_" or "." there, as discovery never reads such folders."""
    root = config.root.resolve()
    folders = {
        "output folder (output / --out)": config.output.resolve(),
        "records folder (records)": config.records.resolve(),
        "demos folder (demos / --demos)": config.demos.resolve(),
    }
    names = list(folders)
    for what, default in zip(names, (default_of(Config, key) for key in ("output", "records", "demos"))):
        folder = folders[what]
        if what.startswith("demos") and folder == root:
            continue
        if folder == root or folder in root.parents:
            relation = "is" if folder == root else "contains"
            raise UsageError(f"the {what} {relation} the project folder: "
                             f"{relative_to_root(folder, config.root)}; give it a folder of its own, e.g. '{default}'")
    for i, what in enumerate(names):
        folder = folders[what]
        for other in names[i + 1:]:
            a, b = folder, folders[other]
            if other.startswith("demos") and b in a.parents and _private_part(a.relative_to(b)):
                continue  # inside the demos folder, where discovery does not look
            if a == b or a in b.parents or b in a.parents:
                relation = "is" if a == b else "contains" if a in b.parents else "is inside"
                raise UsageError(f"the {what} {relation} the {other}: {relative_to_root(a, config.root)}; "
                                 "each needs a folder of its own (one build replaces what the other holds)")


def _private_part(path: Path) -> bool:
    """True when a part of ``path`` starts with "_" or "." (a folder discovery never enters)."""
    return any(part.startswith(("_", ".")) for part in path.parts)
