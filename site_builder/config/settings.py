"""Every setting of ``[tool.site_builder]``, declared once: a field of ``Config`` with its type,
default, kind (what the file may hold and how it is checked) and one line of help."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from site_builder.config.kinds import (
    BOOLEAN, BYTES, CITATION_STYLE, ENTRY_URL, FIGURE_SCALE, FOLDER, FRAMES, LINES, PATTERN, SECONDS,
    SITE_URL, STRING, TOLERANCE, Kind, one_of, setting,
)
from site_builder.config.tables import (
    PROSE, ApiDocsSource, EntryOverrides, parse_api_docs, parse_bibliography, parse_entries, parse_preload,
    parse_sections,
)
from site_builder.patterns import PathPattern

# What a build does when an entry fails: keep the last good site (the failed build's pages go to
# build.failed/), or publish the site with the failed entries' pages showing their errors.
ON_FAILURE = ("keep", "publish")

ENTRIES = Kind((dict,), "a table of entry tables", parse=parse_entries)
SECTIONS = Kind((list,), "a list of section folder names", parse=parse_sections)
MODULES = Kind((list,), "a list of module names", parse=parse_preload)
API_DOCS = Kind((dict,), "a table of package = URL or package = { url, inventory, ... }", parse=parse_api_docs)
BIBLIOGRAPHY = Kind((list,), "a list of files (BibTeX .bib or CSL-JSON .json)", parse=parse_bibliography)


@dataclass(frozen=True)
class Config:
    """Every setting of a build, with its default; paths are absolute (``load_config`` makes them so)."""

    root: Path  # the project folder (where pyproject.toml is, or the current folder): not a setting
    title: str = setting(
        "", kind=STRING, help="the site's title (index, page titles, header)",
        shown_default="the [project] name, else the project folder's name")
    site_url: str | None = setting(
        None, kind=SITE_URL, help="where the site is published (http(s), ending in '/'): canonical links "
        "and sitemap.xml; unset: none", example='"https://example.org/dictionary/"')
    # The wording of pages: neutral by default; a project names its own kind of page here.
    entry_heading: str = setting(
        "{name}", kind=STRING, help="an entry page's heading when its docstring has no title")
    entry_intro: str = setting(
        "", kind=STRING, help="a sentence under the heading; {entry} stands for the entry (a link with entry_url)")
    entry_url: str | None = setting(
        None, kind=ENTRY_URL, help="the entry's own page elsewhere, {name} replaced: makes {entry} a link",
        example='"https://example.org/dictionary/{name}/"')
    search_placeholder: str = setting("Search", kind=STRING, help="the search box's placeholder")
    index_intro: str = setting(
        "", kind=STRING, help="the index's lead sentence; {count} stands for the number of entries; "
        "empty: a neutral one")
    # The page's sentence on reproducing its numbers, after "Requires ... only," (see docs/guide/values.md)
    reproduce_verified: str = setting(
        "and its printed numbers reproduce exactly ({runs} runs agreed when checked on {date})", kind=STRING,
        help="said of a demo that seeds its random generators when `check` ran it at least twice with the "
        "same code, inputs and environment and everything agreed; {runs} and {date} stand for the evidence")
    reproduce_unverified: str = setting(
        "and seeds its random generators; not yet verified to reproduce", kind=STRING,
        help="said of a demo that seeds its random generators while no `check` of its record agreed; "
        "empty: nothing")
    reproduce_differs: str = setting(
        "and its printed numbers differ from run to run (found by check on {date})", kind=STRING,
        help="said when `check` found runs of the record's code that differ; {date} stands for the check's day")
    prose: str = setting(
        "auto", kind=PROSE, help="the language of prose: 'auto' (per script), 'markdown' or 'rst'")
    demos: Path = setting(Path("demos"), kind=FOLDER, help="the folder of demo scripts (--demos overrides it)")
    output: Path = setting(
        Path("build"), kind=FOLDER, help="the output folder, replaced as a whole by each build (--out overrides it)")
    records: Path = setting(
        Path("_freeze"), kind=FOLDER, help="the run records: the execution cache, committable")
    timeout: float = setting(
        600.0, kind=SECONDS, help="seconds each demo may run (--timeout overrides it)")
    tolerance: float = setting(
        0.0, kind=TOLERANCE, help="`check`: relative difference allowed between printed numbers (0: exact)")
    output_fold_lines: int = setting(
        40, kind=LINES, help="a block's output longer than this shows its head and tail, the rest on a click")
    figure_scale: float = setting(
        2.0, kind=FIGURE_SCALE, help="pixels per CSS pixel of the figures saved (1 to 4): 2 is sharp on "
        "high-density screens; 1 is what Sphinx-Gallery saves by default, a quarter of the pixels, about 40% "
        "less time per figure and half the bytes (changing it re-runs demos)")
    display_limit: int = setting(
        5_000_000, kind=BYTES, help="bytes of one representation of a value or display() output (HTML, an "
        "image, JSON): a larger one is left out and the page says so")
    animation_frames: int = setting(300, kind=FRAMES, help="frames of a Matplotlib animation kept")
    animation_size: int = setting(
        20_000_000, kind=BYTES, help="bytes of an animation's movie kept; a larger one: its poster frame")
    entries: dict[str, EntryOverrides] = setting(
        {}, kind=ENTRIES, help="per-entry overrides, [tool.site_builder.entries.NAME] (an entry in a "
        "section: its quoted \"SECTION/NAME\")")
    sections: tuple[str, ...] = setting(
        (), kind=SECTIONS, help="sections listed first on the index, in this order (the others: "
        "alphabetically)", example='["basics", "advanced"]')
    values: bool = setting(True, kind=BOOLEAN, help="show the value of a block's last expression (as Jupyter does)")
    typography: bool = setting(
        True, kind=BOOLEAN, help="Markdown prose's -- and --- as en and em dashes, straight quotes as curly "
        "ones (as Jupyter Book shows them); false: as written")
    preload: tuple[str, ...] | None = setting(
        None, kind=MODULES, help="modules the fork server imports before forking demos, besides the ones it "
        "learns; [] turns preloading off", example='["scipy.stats"]')
    api_docs: tuple[ApiDocsSource, ...] = setting(
        (), kind=API_DOCS, help="packages' API documentation, [tool.site_builder.api_docs], in the order "
        "written (see the API documentation keys below)", example='{ numpy = "https://numpy.org/doc/stable/" }')
    run_pattern: str = setting(
        "", kind=PATTERN, help="which entries run (re.search on the path in the demos folder, "
        "'/'-separated); the others are shown only; empty: all of them", example='"^((?!sgskip).)*$"')
    ignore_pattern: str = setting(
        "", kind=PATTERN, help="which files of the demos folder are no entries at all (same matching); "
        "empty: none", example='"/drafts/"')
    bibliography: tuple[str, ...] = setting(
        (), kind=BIBLIOGRAPHY, help="BibTeX (.bib) or CSL-JSON (.json) files, project-relative, that prose "
        "cites from", example='["refs.bib"]')
    citation_style: str = setting(
        "", kind=CITATION_STYLE, help="a CSL style's name ('apa', 'ieee', 'chicago-author-date') or a .csl "
        "file in the project; empty: author-year", example='"apa"')
    link_terms: bool = setting(
        False, kind=BOOLEAN, help="link the first mention of another entry's term in a page's prose")
    pages: bool = setting(
        False, kind=BOOLEAN, help="Markdown files that are no notebooks become pages of the site (a guide's "
        "pages): prose only, nothing run, no downloads; false: they are left out")
    strict_expressions: bool = setting(
        False, kind=BOOLEAN, help="an inline expression of the prose (`` {eval}`x` ``, `` :eval:`x` ``, `` `{python} x` ``) "
        "that raises fails its entry; false: it shows as an error in the text and warns")
    on_failure: str = setting(
        "keep", kind=one_of(ON_FAILURE), help="when an entry fails: 'keep' the last good site (the failed "
        "build goes to build.failed/) or 'publish' the site with the failed pages showing their errors; "
        "the exit status is 1 either way")

    def runs(self, demos_path: str) -> bool:
        """True when the entry at ``demos_path`` (in the demos folder) is run, not only shown."""
        pattern = self.run_only()
        return pattern is None or pattern.search(demos_path)

    def run_only(self) -> PathPattern | None:
        """The run_pattern setting, None when unset (every entry runs)."""
        return PathPattern("run_pattern", self.run_pattern) if self.run_pattern else None

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
