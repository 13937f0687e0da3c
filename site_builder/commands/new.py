"""The ``new`` command: create ``demos/NAME.py`` (or ``demos/SECTION/NAME.py``) from the house-style
template, or a notebook ``NAME.ipynb`` / MyST ``NAME.md`` from the notebook template."""

from __future__ import annotations

from pathlib import Path

from site_builder.config import Config
from site_builder.fs import relative_to_root
from site_builder.names import check_qualified_name, stem_of
from site_builder.errors import UsageError
from site_builder.site.templates import jinja_environment

NEW_DEMO_TEMPLATE = "new_demo.py.jinja"
NEW_NOTEBOOK_TEMPLATE = "new_notebook.md.jinja"  # MyST; an .ipynb is the same notebook converted
NOTEBOOK_SUFFIXES = (".ipynb", ".md")


def demo_source(name: str, suffix: str = ".py") -> str:
    """The text of a new entry ``name``: docstring, setup block and two example blocks (a
    script), or a title, prose and two code cells (``suffix`` ".md" or ".ipynb": a notebook)."""
    env = jinja_environment(text=True)  # Python source, not HTML; the name is a checked URL segment
    if suffix == ".py":
        return env.get_template(NEW_DEMO_TEMPLATE).render(name=stem_of(name))
    text = env.get_template(NEW_NOTEBOOK_TEMPLATE).render(name=stem_of(name))
    if suffix == ".md":
        return text
    import jupytext

    return jupytext.writes(jupytext.reads(text, fmt=".md"), fmt="ipynb")


def new_entry(config: Config, name: str) -> Path:
    """Write ``config.demos/NAME.py`` (``NAME`` may be ``SECTION/NAME``), or the notebook
    ``NAME.ipynb`` / ``NAME.md``; raise UsageError for a bad or taken name."""
    suffix = next((s for s in NOTEBOOK_SUFFIXES if name.endswith(s)), ".py")
    name = name.removesuffix(suffix) if suffix != ".py" else name
    why = check_qualified_name(name)
    if why:
        hint = " (give the name without '.py')" if name.endswith(".py") else ""
        raise UsageError(f"cannot create entry: {why}{hint}")
    path = config.demos.joinpath(*name.split("/")).with_suffix(suffix)
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
    for other in (".py", *NOTEBOOK_SUFFIXES):
        if other != suffix and path.with_suffix(other).is_file():
            raise UsageError(f"cannot create entry: {relative_to_root(path.with_suffix(other), config.root)} "
                             "already is that entry (edit it, or pick another name)")
    source = demo_source(name, suffix)
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
