"""The ``new`` command: create ``demos/NAME.py`` (or ``demos/SECTION/NAME.py``) from the house-style template."""

from __future__ import annotations

from pathlib import Path

import jinja2

from site_builder.config import Config
from site_builder.fs import relative_to_root
from site_builder.names import check_qualified_name, stem_of
from site_builder.errors import UsageError
from site_builder.site.render import TEMPLATES_DIR

NEW_DEMO_TEMPLATE = "new_demo.py.jinja"


def demo_source(name: str) -> str:
    """The text of a new entry ``name``: docstring, setup block and two example blocks."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES_DIR),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,  # Python source, not HTML; the name is a checked URL segment
    )
    return env.get_template(NEW_DEMO_TEMPLATE).render(name=stem_of(name))


def new_entry(config: Config, name: str) -> Path:
    """Write ``config.demos/NAME.py`` (``NAME`` may be ``SECTION/NAME``); raise UsageError for a bad or taken name."""
    why = check_qualified_name(name)
    if why:
        hint = " (give the name without '.py')" if name.endswith(".py") else ""
        raise UsageError(f"cannot create entry: {why}{hint}")
    path = config.demos.joinpath(*name.split("/")).with_suffix(".py")
    rel = relative_to_root(path, config.root)
    if config.demos.exists() and not config.demos.is_dir():
        raise UsageError(f"cannot create entry: {relative_to_root(config.demos, config.root)} is not a folder")
    # An entry's page folder NAME/ and a section's folder NAME/ would be the same folder.
    if path.with_suffix("").is_dir():
        raise UsageError(f"cannot create entry: {relative_to_root(path.with_suffix(''), config.root)}/ "
                         "is a section folder (pick another name)")
    for parent in path.relative_to(config.demos).parents:
        if parent != Path(".") and (config.demos / parent).with_suffix(".py").is_file():
            raise UsageError(f"cannot create entry: the section {parent.as_posix()} would take the page "
                             f"folder of the entry {relative_to_root((config.demos / parent).with_suffix('.py'), config.root)}")
    source = demo_source(name)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # "x": never overwrite, even if the file appears between a check and the write
        with path.open("x", encoding="utf-8", newline="\n") as file:
            file.write(source)
    except FileExistsError:
        raise UsageError(f"cannot create entry: {rel} already exists (edit it, or pick another name)") from None
    except OSError as exc:
        raise UsageError(f"cannot create entry {rel}: {exc.strerror}") from None
    return path
