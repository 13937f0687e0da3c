"""What a build is asked to do (the command line's options of ``build``), and what of the
settings each stage below is handed: the project's folders, each entry's run options, what
a rebuild compares.

The stages below ``commands/`` never receive the whole settings (``Config``): they take the
values they use, made here once per build (tests/test_layers.py keeps it so).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from site_builder.config import Config
from site_builder.project.folders import Folders
from site_builder.run.execute import RunOptions
from site_builder.site.rebuild.lend import code_fingerprint, known_versions, templates_fingerprint
from site_builder.site.rebuild.state import RebuildInputs, SiteState, sha_of


@dataclass(frozen=True)
class BuildOptions:
    """Command-line choices that shape one build."""

    jobs: int = 1
    fail_fast: bool = False
    force: bool = False  # re-run every demo, whatever its record says
    force_names: frozenset[str] = frozenset()  # re-run these entries
    frozen: bool = False  # run nothing: every result comes from its record
    wait: bool = True  # another build of the project is running: wait for it (else exit status 2)
    shard: tuple[int, int] | None = None  # (K, N): run only shard K of N, record it, write no site
    keep_warm: bool = False  # leave the fork server running for the next build (serve)
    prune: bool = False  # once published, remove the records of entries that are gone (the demos folder is the project's)
    defer_search: bool = False  # publish changed pages with the old search index; serve makes it later


def folders_of(config: Config) -> Folders:
    """The project's folders named by the settings."""
    return Folders(root=config.root, demos=config.demos, records=config.records, output=config.output)


def run_options(config: Config, name: str) -> RunOptions:
    """How entry ``name`` runs; part of its cache key, so build, --frozen and check share it."""
    return RunOptions(timeout=config.timeout_for(name), project_root=config.root,
                      figure_scale=config.figure_scale, display_limit=config.display_limit,
                      animation_frames=config.animation_frames, animation_size=config.animation_size,
                      strict_expressions=config.strict_expressions)


def rebuild_inputs(config: Config, names: Iterable[str], previous: SiteState | None) -> RebuildInputs:
    """What a rebuild of the entries ``names`` compares of the settings (see site/rebuild) and of the
    builder (the library versions ``previous``, the saved state, found are not looked up again),
    and the project's folders."""
    overrides = sorted((name, repr(o)) for name, o in config.entries.items())
    wording = (config.entry_heading, config.entry_intro, repr(config.entry_url),
               config.search_placeholder, config.index_intro, config.prose, config.reproduce_verified,
               config.reproduce_unverified, config.reproduce_differs)
    # the settings that reach pages or decide whether a record still holds
    settings = sha_of(config.title, repr(config.site_url), repr(config.timeout), repr(overrides), *wording,
                      repr(config.output_fold_lines), repr(config.sections), repr(config.values),
                      repr(config.typography), repr(config.figure_scale), config.run_pattern,
                      os.environ.get("SOURCE_DATE_EPOCH", ""))
    # the citation settings, which reach only the pages citing (their files are tracked:
    # bibliography_keys); apart from the settings above, which decide whether demos run
    references = sha_of(repr(config.bibliography), config.citation_style, repr(config.link_terms))
    return RebuildInputs(folders_of(config), settings, references, config.citation_style,
                         {name: config.prose_for(name) for name in names},
                         code_fingerprint(known_versions(previous)), templates_fingerprint())
