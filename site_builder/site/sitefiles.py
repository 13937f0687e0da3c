"""The plain dataclasses passed from the pipeline to render and write: entries built, site files.

Kept apart from render.py (which imports Jinja2, Pygments and Markdown) so that a build
with nothing to render never imports those libraries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from site_builder.apidocs.inventory import ApiDocs
from site_builder.names import HOME_DOCUMENT, stem_of
from site_builder.source.parsed import Script
from site_builder.source.entries import Entry, Section, site_order
from site_builder.run.execute import RunResult
from site_builder.run.results import LazyResult, glued_key

if TYPE_CHECKING:
    from site_builder.site.references.bibliography import Bibliography

# A wheel carries the templates inside the package (see pyproject.toml); a checkout or an
# editable install finds them at the top of the repository.
PACKAGE_DIR = Path(__file__).resolve().parent.parent  # site_builder/
_PACKAGED_TEMPLATES = PACKAGE_DIR / "templates"
TEMPLATES_DIR = _PACKAGED_TEMPLATES if _PACKAGED_TEMPLATES.is_dir() else PACKAGE_DIR.parent / "templates"


@dataclass(frozen=True)
class EntryBuild:
    """One entry with everything known about it: source, parsed script, run result."""

    entry: Entry
    script: Script
    run: RunResult | LazyResult  # lazy: a trusted record, read when something needs more than its row

    @property
    def result(self) -> RunResult:
        """The entry's result (a trusted record is read the first time this is asked for)."""
        return self.run.result() if isinstance(self.run, LazyResult) else self.run

    @property
    def glued_key(self) -> str:
        """What another page pasting this entry's glued values depends on ("" when it glued none)."""
        return self.run.row.glued if isinstance(self.run, LazyResult) else glued_key(self.run)


@dataclass(frozen=True)
class SiteFile:
    """One file of the site: literal bytes, or an existing file to copy as is."""

    path: str  # POSIX path inside the site folder, e.g. "attention/index.html"
    data: bytes | None = None
    # a file of the published site linked again is named by a string: a site has thousands
    source: Path | str | None = None
    # A record's file: ``source`` lies below this folder and is copied (never linked: the
    # site must not share an inode with the records), following no link below it.
    root: Path | None = None
    # ``source`` holds bytes this build rendered (kept on disk until staged, publish/spool.py),
    # not a file of the published site
    rendered: bool = False
    # ``source`` is a file of the published site this build found intact: its inode then (the
    # staged site's file of that inode is that file: publish/swap.py)
    inode: int | None = None


@dataclass(frozen=True)
class SiteInfo:
    """Site-wide settings the templates need."""

    title: str = "Demos"
    site_url: str | None = None  # e.g. "https://example.org/dictionary/"; None: no sitemap
    sections: tuple[Section, ...] = ()  # the sections of the demos folder, with their header text
    section_order: tuple[str, ...] = ()  # the ``sections`` setting: listed first, in this order
    values: bool = True  # show the values of blocks' last expressions (the ``values`` setting)
    # The wording settings of config.Config (see there); neutral defaults.
    entry_heading: str = "{name}"
    entry_intro: str = ""
    entry_url: str | None = None
    search_placeholder: str = "Search"
    index_intro: str = ""
    reproduce_verified: str = ""  # the reproducibility sentence's three states (config.Config)
    reproduce_unverified: str = ""
    reproduce_differs: str = ""
    output_fold_lines: int = 40  # longer outputs show head and tail around a "show all" control
    typography: bool = True  # Markdown prose's dashes and quotes typeset (the typography setting)
    # the packages' API documentation ([tool.site_builder.api_docs]); its repr is its fingerprint,
    # so pages' cache keys (which hash this repr) change with the inventories
    api_docs: ApiDocs = field(default_factory=ApiDocs)
    # The works prose cites and their style (loaded by the build, before anything is written)
    # and the link_terms setting: not in the repr, since a page's key holds only what it shows
    # of them (references.site.SiteReferences.page_key).
    bibliography: Bibliography | None = field(default=None, repr=False, compare=False)
    link_terms: bool = field(default=False, repr=False)


def ordered_builds(builds: list[EntryBuild], info: SiteInfo) -> list[EntryBuild]:
    """``builds`` in the site's order (index, previous/next): see entries.site_order."""
    by_name = {b.entry.name: b for b in builds}
    return [by_name[e.name] for e in site_order((b.entry for b in builds), info.section_order)]


HOME = HOME_DOCUMENT  # the entry whose document is the site's home page (index.qmd, .md, .ipynb at the top)


def home_build(builds: list[EntryBuild]) -> EntryBuild | None:
    """The build of the home page's document, None when the demos folder has none."""
    return next((b for b in builds if b.entry.name == HOME and b.entry.format != "py"), None)


def is_section_home(name: str, fmt: str) -> bool:
    """Whether the entry ``name`` is a section's page (its folder's index.qmd, .md, .ipynb), shown
    at ``SECTION/index.html`` above the section's list of entries."""
    section, _, stem = name.rpartition("/")
    return bool(section) and stem == HOME and fmt != "py"


VALUES_FOLDER = "_downloads/values"  # an entry's values, made with its page (downloads/values.py)


def value_paths(name: str) -> tuple[str, str]:
    """Where the values of the entry ``name`` are in the site (when it has any), beside its page."""
    return f"{VALUES_FOLDER}/{name}.json", f"{VALUES_FOLDER}/{name}.tex"


def notebook_path(name: str) -> str:
    """Where the notebook download of the entry ``name`` is in the site."""
    return f"{name}/{stem_of(name)}.ipynb"


def script_download(entry: Entry) -> bytes:
    """The entry's script as its page offers it: the file itself, or a notebook as a percent script."""
    if entry.format == "py":
        return entry.source_bytes
    if entry.format == "qmd":
        from site_builder.source.quarto.reader import quarto_notebook
        import jupytext

        notebook = quarto_notebook(entry.source, entry.rel_path, entry.variables)
        return jupytext.writes(notebook, fmt="py:percent").encode("utf-8")
    from site_builder.source.notebooks import notebook_as_script

    return notebook_as_script(entry.source, entry.rel_path)
