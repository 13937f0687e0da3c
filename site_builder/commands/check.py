"""The check command: re-run demos and compare each block's output with the committed record.

Runs go into temporary folders: the records are never replaced, only given the check's verdict
(``run.records.verdict``: the evidence a page cites for "reproduces exactly").  Each demo runs
``runs`` times (default 2): the first run is compared with the record (drift: another
environment, or a dependency that changed), the others with the first (a missing seed).
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from site_builder.source.blocks import parse_entry
from site_builder.source.parsed import Script
from site_builder.config import Config
from site_builder.reports.junit import Case, Problem
from site_builder.project.lock import project_lock
from site_builder.run.records.drift import QUOTED, Comparison, compare_runs, environment_rows
from site_builder.fs import relative_to_root
from site_builder.source.entries import Entry, discover
from site_builder.errors import ParseError, SiteBuilderError, UsageError, one_line
from site_builder.run.execute import RunResult, run_demo
from site_builder.run.records.record_json import RecordError
from site_builder.run.records.inputs import RunInputs
from site_builder.commands.build.options import folders_of, run_options
from site_builder.run.records.schema import SchemaError
from site_builder.run.records.verdict import keep_verdict, verdict_of
from site_builder.fs import UnsafeFileError
from site_builder.run.records.store import RecordStore, read_record, store_dir
from site_builder.site.formatting import format_duration

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CheckOptions:
    """What ``check`` was asked to do."""

    names: tuple[str, ...] = ()  # entries to check; all when empty
    tolerance: float | None = None  # overrides every entry's configured tolerance
    runs: int = 2
    jobs: int = 1
    wait: bool = True  # a build of the project is running: wait for it (else exit status 2)


@dataclass(frozen=True)
class Target:
    """One entry to check, with its committed record."""

    entry: Entry
    script: Script
    record: RunResult
    inputs: RunInputs  # the record's
    stale: str  # why the record does not match the current sources ("" when it does)
    tolerance: float


@dataclass(frozen=True)
class EntryCheck:
    """The verdict on one entry."""

    target: Target
    against_record: Comparison
    between_runs: list[Comparison]  # run 1 against run 2, 3, ...
    environment: dict[str, str]  # of the new run

    @property
    def drifted(self) -> bool:
        return not self.against_record.same

    @property
    def unreproducible(self) -> bool:
        return any(not c.same for c in self.between_runs)


def check(config: Config, options: CheckOptions, out: TextIO, cases: list[Case] | None = None) -> int:
    """Check the demos; print the report to ``out``; return 0 when all match, 1 on drift.
    ``cases``: gets one JUnit testcase per entry checked (see junit.py).

    Holds the project's build lock: a build must not replace a record being compared.
    """
    with project_lock(folders_of(config), wait=options.wait):
        return _check(config, options, out, cases if cases is not None else [])


def _check(config: Config, options: CheckOptions, out: TextIO, cases: list[Case]) -> int:
    targets = _gather(config, options)
    started = time.perf_counter()
    runs = _run_all(config, targets, options)
    colour = _colours(out)
    checks = []
    try:
        for target in targets:
            results = runs[target.entry.name]
            first = results[0]
            checks.append(EntryCheck(
                target,
                compare_runs(target.record, first, target.tolerance, ("record", "now"), target.entry.rel_path),
                [compare_runs(first, later, target.tolerance, ("run 1", f"run {i}"), target.entry.rel_path)
                 for i, later in enumerate(results[1:], start=2)],
                first.environment,
            ))
            _report(checks[-1], config, out, colour)
            cases.append(_case(checks[-1], results))
            if not target.stale:  # the evidence the page may cite (run.records.verdict)
                _keep(config, checks[-1], len(results))
    finally:
        for results in runs.values():
            for result in results:
                shutil.rmtree(result.files_dir, ignore_errors=True)
    drifted = sum(c.drifted for c in checks)
    unreproducible = sum(c.unreproducible for c in checks)
    matching = sum(not c.drifted and not c.unreproducible for c in checks)
    parts = [f"{matching} match{'es' if matching == 1 else ''} {'its' if matching == 1 else 'their'} record"]
    if drifted:
        parts.append(f"{drifted} drifted")
    if unreproducible:
        parts.append(f"{unreproducible} not reproducible")
    noun = "entry" if len(checks) == 1 else "entries"
    out.write(colour["bold"](f"checked {len(checks)} {noun} in {format_duration(time.perf_counter() - started)}: "
                             f"{', '.join(parts)}") + "\n")
    return 1 if drifted or unreproducible else 0


def _keep(config: Config, result: EntryCheck, runs: int) -> None:
    """Keep what this check found in the record it checked (a failed write only warns)."""
    target = result.target
    same = environment_rows(target.record.environment, result.environment) is None
    verdict = verdict_of(target.inputs, target.record.environment, result.against_record, result.between_runs,
                         runs, same)
    try:
        keep_verdict(store_dir(config.records, target.entry.name), verdict)
    except (OSError, UnsafeFileError, SchemaError, ValueError) as exc:
        log.warning("%s: the check's verdict could not be kept in its record: %s", target.entry.name, exc)


def _case(result: EntryCheck, runs: list[RunResult]) -> Case:
    """The JUnit testcase of one entry's check: a failure on drift or when two runs differ."""
    target = result.target
    lines = {cell.name: cell.first_line for cell in target.script.code_cells}
    seconds = sum(run.duration for run in runs)
    base = dict(name=target.entry.name, file=target.entry.rel_path, seconds=seconds)
    if result.drifted:
        drifts = result.against_record.drifts
        message = (f"{target.entry.name}: drift in {len(drifts)} of {len(target.record.blocks)} blocks "
                   f"({', '.join(d.block for d in drifts)}) against its run record")
        text = "\n".join(line for d in drifts for line in d.diff)
        return Case(**base, problem=Problem(message, "Drift", drifts[0].block, lines.get(drifts[0].block), text))
    for between in result.between_runs:
        if between.drifts:
            first = between.drifts[0]
            message = f"{target.entry.name}: the output of {first.block} differs between two runs (missing seed?)"
            text = "\n".join(line for d in between.drifts for line in d.diff)
            return Case(**base, problem=Problem(message, "NotReproducible", first.block, lines.get(first.block), text))
    return Case(**base)


def _gather(config: Config, options: CheckOptions) -> list[Target]:
    """The entries to check and their records; raise UsageError for unknown names or missing records."""
    entries = discover(config.demos, config.root, ignore=config.ignored(), pages=config.pages)
    known = {e.name: e for e in entries}
    unknown = [n for n in options.names if n not in known]
    if unknown:
        raise UsageError(f"check: no entry named {', '.join(unknown)} "
                         f"(entries: {', '.join(sorted(known)) or 'none'})")
    chosen = [known[n] for n in dict.fromkeys(options.names)] if options.names else entries
    shown = [e.name for e in chosen if not config.runs(e.demos_path)]
    if shown and options.names:
        raise UsageError(f"check: {', '.join(shown)} never run (the run_pattern setting shows them "
                         "without running them): nothing to compare")
    chosen = [e for e in chosen if e.name not in shown]  # shown only: no record to compare
    records = relative_to_root(config.records, config.root)
    store = RecordStore(config.records, config.root)
    targets: list[Target] = []
    problems: list[str] = []
    for entry in chosen:
        try:
            script = parse_entry(entry, config.prose_for(entry.name))
        except ParseError as exc:
            problems.append(f"{exc} (fix the demo, then build it)")
            continue
        try:
            record, inputs = read_record(store_dir(config.records, entry.name))
        except FileNotFoundError:
            problems.append(f"{entry.name}: no run record in {records}/{entry.name}/ to compare with")
            continue
        except RecordError as exc:
            problems.append(f"{entry.name}: its run record in {records}/{entry.name}/ is unusable: {exc}")
            continue
        stale = store.lookup(entry, script, run_options(config, entry.name), frozen=True).reason
        tolerance = options.tolerance if options.tolerance is not None else config.tolerance_for(entry.name)
        targets.append(Target(entry, script, record, inputs, stale, tolerance))
    if problems:
        raise UsageError("check: " + "; ".join(problems) + ": run `python -m site_builder build` first "
                         "to record what the demos print")
    return targets


def _run_all(config: Config, targets: list[Target], options: CheckOptions) -> dict[str, list[RunResult]]:
    """Run each target ``options.runs`` times, ``options.jobs`` at a time, each in a temporary folder."""
    cancel = threading.Event()
    total = len(targets) * options.runs

    def run_one(target: Target, i: int) -> RunResult:
        files_dir = Path(tempfile.mkdtemp(prefix=f"site_builder-check-{target.entry.name.replace('/', '-')}-"))
        try:
            result = run_demo(target.entry, target.script, files_dir, run_options(config, target.entry.name),
                              cancel=cancel)
        except BaseException:
            shutil.rmtree(files_dir, ignore_errors=True)
            raise
        log.info("%s: run %d of %d %s in %s", target.entry.name, i + 1, options.runs,
                 "ok" if result.ok else "failed", format_duration(result.duration))
        return result

    runs: dict[str, list[RunResult]] = {t.entry.name: [] for t in targets}
    pool = ThreadPoolExecutor(max_workers=max(1, min(options.jobs, total or 1)))
    # Run 1 of every entry before any run 2: two runs of one demo overlap as little as they can.
    futures = [(t, pool.submit(run_one, t, i)) for i in range(options.runs) for t in targets]
    try:
        for target, future in futures:
            runs[target.entry.name].append(future.result())
    except BaseException as exc:  # Ctrl-C or a runner failure: stop the others, leave no folders
        cancel.set()
        pool.shutdown(wait=True, cancel_futures=True)
        for _, future in futures:
            if future.done() and not future.cancelled() and future.exception() is None:
                shutil.rmtree(future.result().files_dir, ignore_errors=True)
        if isinstance(exc, RuntimeError):  # the runner itself failed: one line, not a traceback
            raise SiteBuilderError(str(exc)) from None
        raise
    pool.shutdown()
    return runs


def _report(result: EntryCheck, config: Config, out: TextIO, colour: dict) -> None:
    """Print one entry's verdict: a line, then the environments and diffs when something differs."""
    target = result.target
    name = target.entry.name
    count = len(target.record.blocks)
    blocks = f"{count} block{'' if count == 1 else 's'}"
    tolerance = f" (tolerance {target.tolerance:g})" if target.tolerance else ""
    if not result.drifted:
        out.write(f"{colour['green'](name + ': matches its record')} ({blocks}){tolerance}\n")
    else:
        drifts = [d.block for d in result.against_record.drifts if d.block != QUOTED]
        what = f"drift in {len(drifts)} of {blocks} ({one_line(', '.join(drifts))})" if drifts else "drift"
        if len(drifts) < len(result.against_record.drifts):  # the prose's values changed
            what += f"{' and' if drifts else ''} in the {QUOTED}"
        where = f"{relative_to_root(config.records, config.root)}/{name}"
        recorded = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(target.record.started_at))
        out.write(colour["red"](f"{name}: {what}") + f" against {where} (recorded {recorded}){tolerance}\n")
    if target.stale:
        out.write(f"  note: the record does not match the demo any more ({target.stale}); "
                  "`build` records the current version\n")
    if result.drifted:
        rows = environment_rows(target.record.environment, result.environment)
        if rows:
            _environment_table(rows, out, colour)
        for drift in result.against_record.drifts:
            _diff(drift.diff, out, colour)
    for note in result.against_record.notes:
        out.write(f"  note: {one_line(note)}\n")
    for i, between in enumerate(result.between_runs, start=2):
        for drift in between.drifts:
            out.write(colour["yellow"](f"attention: the output of {one_line(drift.block)} differs between two runs "
                                       f"(run 1 and run {i}): missing seed?") + "\n")
            _diff(drift.diff, out, colour)
        for note in between.notes:
            out.write(f"  note (run 1 and run {i}): {one_line(note)}\n")


def _environment_table(rows: list[tuple[str, str, str]], out: TextIO, colour: dict) -> None:
    rows = [(one_line(a), one_line(b), one_line(c)) for a, b, c in rows]  # a record's values are data
    header = ("environment", "record", "now")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(3)]
    out.write("    " + "  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip() + "\n")
    for row in rows:
        line = "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
        out.write((colour["yellow"]("  * " + line) if row[1] != row[2] else "    " + line) + "\n")


def _diff(lines: list[str], out: TextIO, colour: dict) -> None:
    for line in map(one_line, lines):  # what the demo printed, escaped as the builder's other lines
        if line.startswith(("---", "+++")):
            line = colour["bold"](line)
        elif line.startswith("@@"):
            line = colour["cyan"](line)
        elif line.startswith("-"):
            line = colour["red"](line)
        elif line.startswith("+"):
            line = colour["green"](line)
        out.write(line + "\n")


_SGR = {"bold": "1", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}


def _colours(out: TextIO) -> dict:
    """name -> function colouring a string: ANSI codes on a terminal (unless NO_COLOR), else none."""
    isatty = getattr(out, "isatty", None)
    on = bool(isatty and isatty()) and os.environ.get("TERM") != "dumb" and "NO_COLOR" not in os.environ
    return {name: (lambda s, c=code: f"\x1b[{c}m{s}\x1b[0m") if on else (lambda s: s)
            for name, code in _SGR.items()}
