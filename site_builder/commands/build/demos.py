"""The build's demos: run every parsable one, ``jobs`` at a time, the longest expected first.

Results are taken as they complete (``--fail-fast`` stops at once); each page that ran is
rendered as its demo finishes, while the others still run (site/pages/early.py).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from site_builder.source.parsed import Script
from site_builder.config import Config
from site_builder.source.entries import Entry
from site_builder.errors import INTERRUPT, ParseError
from site_builder.run.child.protocol import Outcome
from site_builder.run.execute import BlockResult, RunCancelled, RunResult, run_demo
from site_builder.run.results import LazyResult
from site_builder.fs import writing
from site_builder.reports.build_report import BuildReport
from site_builder.reports.progress import Progress, summarize
from site_builder.run.records.store import RecordStore, store_dir
from site_builder.project.folders import cache_dir
from site_builder.site.outputs import thumbnails
from site_builder.run.shards import estimated_seconds, recorded_durations
from site_builder.site.sitefiles import EntryBuild, SiteInfo
from site_builder.commands.build.options import BuildOptions, run_options

if TYPE_CHECKING:
    from site_builder.site.pages.early import EarlyPages

log = logging.getLogger(__name__)


@dataclass
class EarlySite:
    """What rendering pages while demos run needs: the site's settings and every entry
    (results to come: ``builds`` makes them, once a demo runs), and the pages once they render
    (see site/pages/early.py)."""

    info: SiteInfo
    builds: Callable[[], list[EntryBuild]]
    thumbnail_cache: Path
    pages: EarlyPages | None = None


def not_run(entry: Entry, script: Script | None, failure: str, files_dir: Path) -> RunResult:
    """The result of a demo that never started (syntax error, fail-fast stop)."""
    cells = script.code_cells if script else ()
    blocks = tuple(BlockResult(name=c.name, status=Outcome.NOT_RUN, duration=0.0) for c in cells)
    return RunResult(entry.name, blocks, failure, 0.0, time.time(), files_dir)


def shown_only(entry: Entry, script: Script, files_dir: Path) -> RunResult:
    """The result of an entry the run_pattern setting leaves out: shown, never run (no process, no record)."""
    blocks = tuple(BlockResult(name=c.name, status=Outcome.NOT_RUN, duration=0.0) for c in script.code_cells)
    return RunResult(entry.name, blocks, None, 0.0, 0.0, files_dir, shown_only=True)


def execute_all(
    entries: list[Entry],
    parsed: dict[str, Script | ParseError],
    config: Config,
    options: BuildOptions,
    store: RecordStore,
    report: BuildReport,
    progress: Progress,
    early: EarlySite | None = None,
) -> dict[str, RunResult | LazyResult]:
    """Run every parsable demo, ``options.jobs`` at a time, the longest expected first.

    Results are taken as they complete, so ``--fail-fast`` stops at once: running demos
    are killed, the others never start, and all of them are reported as not run. Each
    page that ran is rendered as its demo finishes, into ``early`` (the builder only waits then).
    """
    runnable = [e for e in entries if isinstance(parsed[e.name], Script)]
    results: dict[str, RunResult | LazyResult] = {}
    cancel = threading.Event()
    running = threading.Event()  # set once some demo really runs (not from its record)
    progress.start(len(runnable))

    def recorded(entry: Entry) -> RunResult | LazyResult | None:
        """The entry's recorded result when it still holds, else None (it must run)."""
        if options.force or entry.name in options.force_names:
            return None
        if (row := store.trusted_row(entry)) is not None:  # its record read only if a page needs it
            report.from_cache.add(entry.name)
            return row
        script = parsed[entry.name]
        assert isinstance(script, Script)
        cached = store.lookup(entry, script, run_options(config, entry.name))
        if cached.result is not None:
            report.from_cache.add(entry.name)
            return cached.result
        log.debug("%s: running (%s)", entry.name, cached.reason)
        return None

    def run_one(entry: Entry, looked_up: bool = False) -> RunResult | LazyResult | None:
        """The entry's result, or None when the build was cancelled before it finished."""
        if cancel.is_set():
            return None
        if not looked_up and (result := recorded(entry)) is not None:
            return result
        script = parsed[entry.name]
        assert isinstance(script, Script)
        entry_options = run_options(config, entry.name)
        files_dir = store.staging(entry.name)
        progress.entry_started(entry.name)
        running.set()
        try:
            # the demo's own failed writes are its failure; these are the builder's (its output files)
            with writing(f"running {entry.name}", config.records, config.root):
                result = run_demo(entry, script, files_dir, entry_options,
                                  on_event=progress.block_event, cancel=cancel)
        except RunCancelled:
            store.discard(files_dir)
            return None  # a killed run is no result: it must never be recorded
        except BaseException:  # the builder's own failure (a write, the runner): no folder left
            store.discard(files_dir)
            raise
        if result.failure and options.fail_fast:
            # Here, not only in take(): this worker's next demo (forked in ms) must not start.
            cancel.set()
        return store.commit(entry, script, result, entry_options)

    def take(result: RunResult | LazyResult | None, entry: Entry) -> None:
        """Keep one finished entry's result (None: cancelled); the first failure may stop the rest."""
        if result is None:
            script = parsed[entry.name]
            assert isinstance(script, Script)
            failure = f"{entry.name}: not run (--fail-fast stopped the build)"
            result = not_run(entry, script, failure, store_dir(config.records, entry.name))
            report.not_run.append(entry.name)
        elif result.failure and options.fail_fast:
            stop_all()
        results[entry.name] = result
        progress.entry_finished(summarize(result, entry.name in report.from_cache), result.failure)
        if entry.name not in report.from_cache and not options.shard:  # new figures: thumbnail now
            script = parsed[entry.name]
            assert isinstance(script, Script)
            build = EntryBuild(entry, script, result)
            thumbnails.prepare(build, cache_dir(config.records))
            if early is not None and early.pages is not None:
                early.pages.render(build)

    def stop_all() -> None:
        cancel.set()
        for future in futures:
            future.cancel()

    futures: dict[Future[RunResult | LazyResult | None], Entry] = {}  # stop_all may run before the pool starts
    # A trusted record is a hit in microseconds: looked up here, without a worker or an estimate.
    to_check = []
    for entry in runnable:
        if entry.name in store.trusted and (result := recorded(entry)) is not None:
            take(result, entry)
        else:
            to_check.append(entry)
    # Order only matters when demos wait for a worker; then recorded times are worth reading.
    expected = _expected_seconds(config, to_check) if len(to_check) > options.jobs else {}
    order = longest_first(to_check, expected)
    with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
        futures.update({pool.submit(run_one, e, e.name in store.trusted): e for e in order})
        ranks = {future: rank for rank, future in enumerate(futures)}
        try:
            _prepare_render_while_waiting(running, futures, runnable, parsed, report, early)
            pending = set(futures)
            while pending:  # in the order they finish; a Ctrl-C an import swallowed is raised here
                done, pending = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=lambda f: ranks[f]):
                    take(None if future.cancelled() else future.result(), futures[future])
                INTERRUPT.check()
        except BaseException:  # Ctrl-C or a runner failure: kill the other demos, then raise
            stop_all()
            raise
    # Failures in discovery order, whatever order the demos finished in.
    stopped = set(report.not_run)
    for entry in runnable:
        failure = results[entry.name].failure
        if failure and entry.name not in stopped:
            report.failures.append(failure)
    report.not_run.sort()
    return results


def _prepare_render_while_waiting(
    running: threading.Event,
    futures: dict[Future[RunResult | LazyResult | None], Entry],
    runnable: list[Entry],
    parsed: dict[str, Script | ParseError],
    report: BuildReport,
    early: EarlySite | None = None,
) -> None:
    """Spend the wait for running demos on rendering's fixed costs (render.prepare), and get
    ``early`` ready to render each page as its demo finishes.

    The demos run in child processes, so the main thread is idle; without this, the imports,
    template compilation and highlighting would all come after the last demo ends.
    """
    unfinished = list(futures)  # each future is asked until it is done, then never again
    # Polled every 2 ms: a rebuild whose lookups all hold runs no demo, and the pages wait here
    # until its last lookup ends (a 20 ms poll left 20-36 ms of slack at 1000 entries, one edit).
    while not running.wait(0.002):
        INTERRUPT.check()
        while unfinished and unfinished[-1].done():
            unfinished.pop()
        if not unfinished:
            return  # every result came from its record: nothing to wait for
    from site_builder.site.pages.render import prepare

    # Entries already served from their records are likely reused pages: skip them.
    prepare(s for e in runnable if e.name not in report.from_cache and isinstance(s := parsed[e.name], Script))
    if early is not None:
        from site_builder.site.pages.early import EarlyPages

        early.pages = EarlyPages(early.info, early.builds(), early.thumbnail_cache)


def _expected_seconds(config: Config, entries: list[Entry]) -> dict[str, float]:
    """How long each entry is expected to run: the duration of its last record, when it has one."""
    return recorded_durations(config.records, entries)


def longest_first(entries: list[Entry], expected: dict[str, float]) -> list[Entry]:
    """Entries ordered by expected run time, longest first (a shorter makespan with -j N).

    Entries without a recorded time are estimated from their size, at the seconds per
    byte of those that have one (or ranked by size alone when none has).
    """
    estimate = estimated_seconds(entries, expected)  # the same costs as --shard balances
    return sorted(entries, key=lambda e: (-estimate[e.name], e.name))
