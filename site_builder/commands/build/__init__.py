"""The build command: discover -> parse -> execute -> render -> write.

Everything is gathered and checked before anything is written; the site is written
only at the end, atomically (site/publish/swap.py).  ``options``: what a build is asked to
do; ``demos``: running the demos, the longest first, pages rendered as each finishes.
"""

from __future__ import annotations

import gc
import logging
import os
import posixpath
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path

from site_builder.apidocs.inventory import ApiDocs, load_api_docs
from site_builder.source.blocks import outline, parse_entry
from site_builder.source.parsed import Script
from site_builder.config import Config
from site_builder.run.demo_process import close_fork_server, set_preload
from site_builder.run.preload import preload_for
from site_builder.source.entries import Entry, discover, sections
from site_builder.errors import INTERRUPT, ParseError, UsageError
from site_builder.run.execute import BlockError, RunResult, start_early
from site_builder.site.downloads.archives import NOTEBOOKS_ZIP, SCRIPTS_ZIP, archive_files
from site_builder.site.publish.housekeeping import prune
from site_builder.project.leftovers import remove_leftovers
from site_builder.project.lock import project_lock
from site_builder.fs import relative_to_root
from site_builder.site.publish.spool import Spool
from site_builder.site.publish.swap import check_writable, failed_dir, remove_site, write_site
from site_builder.reports.build_report import BuildReport
from site_builder.reports.progress import Progress
from site_builder.run.records.record_json import RECORD_FILE
from site_builder.run.records.store import RecordStore, store_dir
from site_builder.site.logs import captured_records
from site_builder.site.rebuild.lend import (checked_records, known_scripts, parsed_scripts, saved_rows,
                                            trusted_records, unchanged_site)
from site_builder.site.rebuild.plan import Rebuild, RenderPlan
from site_builder.project.folders import cache_dir
from site_builder.site.rebuild.state import RebuildInputs, SiteState, forget, load_state, spare_dir
from site_builder.site.publish.search_shards import IndexInBackground, SearchPlan
from site_builder.run.shards import shard_entries
from site_builder.site.sitefiles import EntryBuild, SiteFile, SiteInfo

from site_builder.commands.build.demos import EarlySite, execute_all, not_run, shown_only
from site_builder.commands.build.options import BuildOptions, folders_of, rebuild_inputs, run_options
from site_builder.commands.build.search_later import mark_pending, pending_parts, search_pending

log = logging.getLogger(__name__)


def _unparsable(entry: Entry, error: ParseError) -> EntryBuild:
    """The page of a demo that failed to parse: its cells as far as known, none run, the error shown."""
    script = outline(entry.source, entry.rel_path, entry.name)
    result = not_run(entry, script, str(error), Path())
    if error.block and error.error_type:
        message = str(error).rpartition(f":{error.line}: ")[2] if error.line else ""
        shown = BlockError(error.error_type, message, error.line, error.detail)
        blocks = tuple(replace(b, error=shown) if b.name == error.block else b for b in result.blocks)
        result = replace(result, blocks=blocks)
    return EntryBuild(entry, script, result)


def site_info(config: Config, entries: tuple[Entry, ...] | list[Entry] = (),
              api_docs: ApiDocs | None = None, scripts: Mapping[str, Script | ParseError] | None = None) -> SiteInfo:
    """The site-wide settings the templates need (with the sections of ``entries``, and the
    bibliography of the settings and of ``scripts``' front matter)."""
    from site_builder.site.references.bibliography import bibliography_files, load_bibliography

    front_matter = [(posixpath.dirname(e.rel_path), s.bibliography) for e in entries
                    if isinstance(s := (scripts or {}).get(e.name), Script) and s.bibliography]
    files = bibliography_files(config.bibliography, front_matter)
    return SiteInfo(
        bibliography=load_bibliography(config.root, files, config.citation_style), link_terms=config.link_terms,
        api_docs=api_docs if api_docs is not None else ApiDocs(),
        title=config.title, site_url=config.site_url, entry_heading=config.entry_heading,
        entry_intro=config.entry_intro, entry_url=config.entry_url,
        search_placeholder=config.search_placeholder, index_intro=config.index_intro,
        reproduce_verified=config.reproduce_verified, reproduce_unverified=config.reproduce_unverified,
        reproduce_differs=config.reproduce_differs,
        sections=tuple(sections(config.demos, entries)), section_order=config.sections, values=config.values,
        typography=config.typography,
        output_fold_lines=config.output_fold_lines,
    )


def _parse_all(config: Config, entries: list[Entry], report: BuildReport,
               cached: dict[str, Script]) -> dict[str, Script | ParseError]:
    """Every entry's Script (``cached``: those the last published build parsed, still valid)."""
    parsed: dict[str, Script | ParseError] = {}
    for entry in entries:
        if entry.name in cached:
            parsed[entry.name] = cached[entry.name]
            report.warnings.extend(cached[entry.name].warnings)
            continue
        try:
            script = parse_entry(entry, config.prose_for(entry.name))
        except ParseError as exc:
            parsed[entry.name] = exc
            report.failures.append(str(exc))
            continue
        report.warnings.extend(script.warnings)
        parsed[entry.name] = script
    return parsed


def build(config: Config, options: BuildOptions, progress: Progress | None = None) -> BuildReport:
    """Build the whole site from ``config.demos`` into ``config.output``; ``progress`` shows it.

    One build of a project at a time: a second one waits for the first (or, with
    ``options.wait`` false, raises UsageError).
    """
    with project_lock(folders_of(config), wait=options.wait):
        try:
            return _build(config, options, progress)
        finally:
            gc.unfreeze()  # see _collector_paused


def _build(config: Config, options: BuildOptions, progress: Progress | None) -> BuildReport:
    started = time.perf_counter()
    progress = progress or Progress()
    report = BuildReport()
    folders = folders_of(config)
    with _collector_paused():  # the no-change check: see _collector_paused
        previous: SiteState | None = None  # what the published site was made from
        if not options.shard and config.output.is_dir():
            previous = load_state(folders)
        # A file that cannot be an entry fails the build like a broken demo: the others still run.
        # A script with the signature the last build saw is read only if something changed.
        entries = discover(config.demos, config.root, problems=report.failures, ignore=config.ignored(),
                           pages=config.pages, known=None if options.shard else known_scripts(previous))
        remove_leftovers(folders, [e.name for e in entries])  # of killed builds: we hold the lock, none runs
        inputs = rebuild_inputs(config, [e.name for e in entries], previous)  # what a rebuild compares
        if not entries and not report.failures:
            report.warnings.append(
                f"the demos folder {relative_to_root(config.demos, config.root)} holds no demo "
                "(a *.py file; those named _* are helpers, not entries): the site has no entries"
            )
        _check_force_names(options, entries)
        names = {e.name for e in entries}
        api_docs, api_warnings = ApiDocs(), list[str]()
        if options.shard:  # the other shards' entries run elsewhere
            entries = shard_entries(entries, options.shard, config.run_only(), folders.records, folders.root)
        else:
            check_writable(config.output, config.root)
            # Before the no-change check: a refreshed inventory changes pages.
            api_docs, api_warnings = load_api_docs(config.api_docs, config.root, config.records, frozen=options.frozen)
            if not (options.force or options.force_names or report.failures):
                state = unchanged_site(inputs, entries, previous, api_docs.fingerprint())
                if state is not None:  # its warnings include the inventories' (the same inventories), but
                    # not a failed refresh of a cached inventory
                    fresh = [w for w in api_warnings if w not in state.warnings]
                    return _unchanged(config, entries, state, report, started, fresh)
    # a script whose signature held is read only when its text is asked for (Entry.known_digest)
    report.warnings.extend(api_warnings)
    # Entries the run_pattern setting leaves out, and pages, are shown only: no process, no record.
    to_run = [e for e in entries if not e.is_page and config.runs(e.demos_path)]
    running = {e.name for e in to_run}
    # the records a lookup may take as they are (their files as the state saved them): of every
    # entry, those not run left out below
    trusted = trusted_records(inputs, entries, previous)
    if not options.frozen:  # the fork server starts when a demo first needs it, or now
        set_preload(lambda: preload_for(config.preload, folders.demos, folders.root, to_run,
                                        [store_dir(folders.records, e.name) / RECORD_FILE for e in to_run]))
        _start_demos_early(options, to_run, folders.records, trusted)
    try:
        with _collector_paused():  # the saved parses: ten thousand scripts, live until the build ends
            saved = parsed_scripts(inputs, entries, previous, parse_entry)
        parsed = _parse_all(config, entries, report, saved)
        report.warnings.extend(config.unused_overrides(names))
        report.warnings.extend(config.unused_sections(_section_names(names)))
        for warning in report.warnings:
            log.warning("%s", warning)
        shown = {e.name: shown_only(e, s, store_dir(folders.records, e.name)) for e in entries
                 if e.name not in running and isinstance(s := parsed[e.name], Script)}
        all_entries, entries = entries, [e for e in entries if e.name not in shown]
        trusted = {name: digest for name, digest in trusted.items() if name not in shown}
        store = RecordStore(folders.records, folders.root, trusted=trusted, rows=saved_rows(previous, trusted),
                            signed=frozenset(trusted), checked=checked_records(previous, trusted))
        if not options.frozen:
            # a trusted record's folder holds the record.json the last build checked: replaceable
            store.check_replaceable([e for e in entries if e.name not in store.trusted])
    except BaseException:
        if not options.keep_warm:
            close_fork_server()  # started early, for demos that will not run now
        raise
    early: EarlySite | None = None  # pages rendered while demos run
    if options.frozen:
        results = store.frozen_results(entries, parsed, {e.name: run_options(config, e.name) for e in entries})
        report.from_cache.update(results)
        report.failures.extend(r.failure for r in results.values() if r.failure)
    elif options.fail_fast and report.failures:  # a bad file or syntax error came first: run nothing
        results = {
            e.name: not_run(e, s, f"{e.name}: not run (--fail-fast stopped the build)", store_dir(folders.records, e.name))
            for e in entries if isinstance(s := parsed[e.name], Script)
        }
        report.not_run.extend(sorted(results))
    else:
        try:
            if not options.shard:
                early = _early_site(config, all_entries, parsed, shown, api_docs)
            results = execute_all(entries, parsed, config, options, store, report, progress, early)
        finally:
            if not options.keep_warm:
                close_fork_server()  # its children are all done
            progress.close()
    results.update(shown)
    entries = all_entries
    for entry in entries:
        script = parsed[entry.name]
        if isinstance(script, Script):
            report.builds.append(EntryBuild(entry, script, results[entry.name]))
        else:  # the failed build's page shows the error where it is
            report.builds.append(_unparsable(entry, script))
    if options.shard:  # a shard leaves records only; `build --frozen` assembles the site
        report.wall_time = time.perf_counter() - started
        return report
    files = _render_and_write(config, inputs, entries, report, previous, records_checked=not options.frozen,
                              trusted=store.confirmed_records(), api_docs=api_docs, early=early,
                              defer_search=options.defer_search)
    if report.published:
        pruned = prune(folders.records, names if options.prune and not options.frozen else None, files)
        report.pruned = pruned.line()
    report.wall_time = time.perf_counter() - started
    return report


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Garbage collection off while the build finds whether anything changed: the entries and the
    saved state are tens of thousands of objects that hold no cycle, which the collector would
    walk through several times (a tenth of a no-change rebuild's CPU at 10,000 entries). They
    live until the build ends: frozen (gc.freeze), the collections of a build that changed
    something never walk them either (a sixth of a one-entry rebuild's CPU), until build unfreezes them.
    So too the saved parses and the plan's keys and files (a one-entry rebuild's GC: 0.5 -> 0.2 s at 10,000)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def _start_demos_early(options: BuildOptions, to_run: list[Entry], records: Path, trusted: Mapping[str, str]) -> None:
    """Start the demos' fork server now, while the builder parses, when a demo is sure to run
    (one has no run record, or demos are forced). Else it starts when a demo first needs it:
    every record may still hold, and a fail-fast build may run none. A ``trusted`` record's
    folder was found as saved moments ago: it holds its record."""
    if not options.fail_fast and (options.force or options.force_names or any(
            e.name not in trusted and not os.path.isfile(os.path.join(store_dir(records, e.name), RECORD_FILE))
            for e in to_run)):
        start_early()


def _unchanged(config: Config, entries: list[Entry], state: SiteState, report: BuildReport,
               started: float, fresh: list[str]) -> BuildReport:
    """Nothing the site depends on changed: keep the published site, say its warnings again
    (``fresh``: warnings of this build's own, said first)."""
    for warning in [*fresh, *state.warnings]:
        log.warning("%s", warning)
    report.warnings.extend([*fresh, *state.warnings])
    failed = failed_dir(config.output)
    remove_site(failed, relative_to_root(failed, config.root, as_folder=True))  # as any good build does
    report.from_cache.update(e.name for e in entries)
    report.unchanged = report.published = True
    report.site_dir = config.output
    report.wall_time = time.perf_counter() - started
    return report


def _early_site(config: Config, entries: list[Entry], parsed: dict[str, Script | ParseError],
                shown: dict[str, RunResult], api_docs: ApiDocs) -> EarlySite:
    """What rendering pages as their demo finishes needs: every entry of the site, its result to
    come (made once a demo runs: a rebuild whose records all hold renders no page early)."""
    def builds() -> list[EntryBuild]:
        with _collector_paused():  # every saved parse's cells decoded (shown_only): live until the build ends
            return [EntryBuild(e, s, shown.get(e.name) or shown_only(e, s, Path()))
                    if isinstance(s := parsed[e.name], Script) else _unparsable(e, s) for e in entries]

    return EarlySite(site_info(config, entries, api_docs, parsed), builds, cache_dir(config.records))


def _render_and_write(config: Config, inputs: RebuildInputs, entries: list[Entry], report: BuildReport,
                      previous: SiteState | None,
                      records_checked: bool, trusted: dict[str, str], api_docs: ApiDocs,
                      early: EarlySite | None = None, defer_search: bool = False) -> list[SiteFile]:
    """Render what changed (unchanged pages are linked from the published site, pages rendered
    while demos ran are taken), write, remember; return the site's files.  ``defer_search``:
    keep the published search index when the pages changed (see search_later)."""
    scripts = {b.entry.name: b.script for b in report.builds}
    info = early.info if early is not None else site_info(config, entries, api_docs, scripts)
    with _collector_paused():  # the keys and the plan's files: tens of thousands, live until the build ends
        rebuild = Rebuild(inputs, info, report.builds, state=previous, records_checked=records_checked,
                          trusted=trusted)
        plan = rebuild.plan()
    shown = relative_to_root(config.output, config.root)
    spool = Spool(config.output, f"{shown}/") if plan.render_entries else None  # the pages, until staged
    try:
        return _render_and_publish(config, inputs, entries, report, previous, rebuild, plan, spool, info,
                                   early, defer_search)
    finally:
        if spool is not None:
            spool.close()


def _render_and_publish(config: Config, inputs: RebuildInputs, entries: list[Entry], report: BuildReport,
                        previous: SiteState | None, rebuild: Rebuild, plan: RenderPlan, spool: Spool | None,
                        info: SiteInfo, early: EarlySite | None, defer_search: bool) -> list[SiteFile]:
    """Render what ``plan`` leaves to render (each entry's files into ``spool`` as made), then write."""
    files = list(plan.reused)
    with captured_records(logging.WARNING) as records:
        for warning in [*(info.bibliography.problems if info.bibliography else ()), *plan.warnings]:
            log.warning("%s", warning)
        if plan.render_entries or plan.site_pages:
            # Jinja2, Pygments and Markdown are imported only when something is rendered.
            from site_builder.site.pages.render import render_site

            files += render_site(report.builds, info, only=plan.render_entries,
                                 site_pages=plan.site_pages, notebooks=plan.notebooks,
                                 thumbnail_cache=cache_dir(config.records), early=early.pages if early else None,
                                 spool=spool)
    rendered = [record.getMessage() for record in records]  # said again by an unchanged rebuild
    # Made again every time: they hold every script's text, which the site-wide pages' key leaves
    # out; when reused with those pages (the same builder, zlib included), they lend their members.
    published = rebuild.published_archives(files)
    files = [f for f in files if f.path not in (SCRIPTS_ZIP, NOTEBOOKS_ZIP)]
    files += archive_files(report.builds, files, early.pages.deflated if early and early.pages else None, published)
    search = rebuild.search_index(files)  # the parts of the index whose pages changed are made again
    if previous is not None and search_pending(previous):  # parts of the index older than their pages
        search = search.also_stale(pending_parts(previous))
    # on_failure = "publish": the site goes out with the failed entries' pages showing their errors
    report.published = report.ok or config.on_failure == "publish"
    pending = search.stale
    if search.stale and defer_search and report.ok:
        kept = rebuild.index_seeds(everything=True)  # kept as it is, made again later
        if kept:
            search = SearchPlan(search.shards, set(), kept)
            report.search_pending = True
    files += search.kept + search.seeds  # seeded: Pagefind writes only what changed

    def finish(staged: Path, written: list[str]) -> None:
        indexing = IndexInBackground(staged, search, config.output, config.root)  # while described
        try:
            # Described while staged: the swap keeps every file's stat. Never a site with failures:
            # the next build would find nothing changed and call it good.
            if not report.ok:
                return indexing.wait(report.warnings)
            said = len(report.warnings)
            state = rebuild.describe(staged, entries, [*report.warnings, *rendered], rendered, files, written,
                                     partial(indexing.wait, report.warnings, signed=True))
            state.warnings[said:said] = report.warnings[said:]  # the index's warning, said meanwhile
            if report.search_pending:
                mark_pending(state, pending)
            rebuild.save(state)  # before the swap: a state not saved leaves the published site as it was
            saved.append(True)
        finally:
            indexing.close()  # a failed build's staged folder is removed: never while Pagefind writes there

    saved: list[bool] = []
    INTERRUPT.check()  # a Ctrl-C that landed where Python ignores it: nothing is written
    if report.published:
        forget(inputs.folders)  # until the new site is in place
    try:
        report.site_dir = write_site(config.output, files, publish=report.published, finish=finish,
                                     shown=relative_to_root(config.output, config.root),
                                     spare=spare_dir(inputs.folders))
    except BaseException:
        if saved:
            forget(inputs.folders)  # it describes the staged site, which never went in place
        raise
    return files


def _section_names(names: set[str]) -> set[str]:
    """Every section (and parent section) of the entries named ``names``."""
    found: set[str] = set()
    for name in names:
        parts = name.split("/")[:-1]
        found.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    return found


def _check_force_names(options: BuildOptions, entries: list[Entry]) -> None:
    """Refuse (exit status 2) ``--force NAME`` for a name that is no entry."""
    known = {e.name for e in entries}
    unknown = sorted(options.force_names - known)
    if unknown:
        raise UsageError(f"--force: no entry named {', '.join(unknown)} "
                         f"(entries: {', '.join(sorted(known)) or 'none'})")


