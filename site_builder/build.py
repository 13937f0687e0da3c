"""The build command: discover -> parse -> execute -> render -> write.

Everything is gathered and checked before anything is written; the site is written
only at the end, atomically (see output.py).
"""

from __future__ import annotations

import logging
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from site_builder.blocks import Script, parse
from site_builder.config import Config
from site_builder.entries import Entry, discover
from site_builder.errors import ParseError
from site_builder.execute import BlockResult, RunOptions, RunResult, run_demo
from site_builder.output import check_writable, write_site
from site_builder.render import EntryBuild, SiteInfo, render_site

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BuildOptions:
    """Command-line choices that shape one build."""

    jobs: int = 1
    fail_fast: bool = False


@dataclass
class BuildReport:
    """What a build did: one result per entry, the failures, where the site went."""

    builds: list[EntryBuild] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    site_dir: Path | None = None
    published: bool = False

    @property
    def ok(self) -> bool:
        return not self.failures


def _not_run(entry: Entry, script: Script | None, failure: str, files_dir: Path) -> RunResult:
    """The result of a demo that never started (syntax error, fail-fast stop)."""
    cells = script.code_cells if script else ()
    blocks = tuple(BlockResult(name=c.name, status="not-run", duration=0.0) for c in cells)
    return RunResult(entry.name, blocks, failure, 0.0, time.time(), files_dir)


def _parse_all(entries: list[Entry], report: BuildReport) -> dict[str, Script | ParseError]:
    parsed: dict[str, Script | ParseError] = {}
    for entry in entries:
        try:
            script = parse(entry.source, entry.rel_path, entry.name, local_dir=entry.path.parent)
        except ParseError as exc:
            parsed[entry.name] = exc
            report.failures.append(str(exc))
            continue
        report.warnings.extend(script.warnings)
        parsed[entry.name] = script
    return parsed


def build(config: Config, options: BuildOptions) -> BuildReport:
    """Build the whole site from ``config.demos`` into ``config.output``."""
    started = time.perf_counter()
    report = BuildReport()
    entries = discover(config.demos, config.root)
    check_writable(config.output)
    parsed = _parse_all(entries, report)
    for warning in report.warnings:
        log.warning("%s", warning)
    with tempfile.TemporaryDirectory(prefix="site-builder-runs-") as runs:
        results = _execute_all(entries, parsed, config, options, Path(runs), report)
        for entry in entries:
            script = parsed[entry.name]
            if isinstance(script, Script):
                report.builds.append(EntryBuild(entry, script, results[entry.name]))
        files = render_site(report.builds, SiteInfo(title=config.title, site_url=config.site_url))
        report.published = report.ok
        report.site_dir = write_site(config.output, files, publish=report.ok)
    log.info("built %d entries in %.1f s", len(entries), time.perf_counter() - started)
    return report


def _execute_all(
    entries: list[Entry],
    parsed: dict[str, Script | ParseError],
    config: Config,
    options: BuildOptions,
    runs: Path,
    report: BuildReport,
) -> dict[str, RunResult]:
    """Run every parsable demo, ``options.jobs`` at a time, collecting failures in order."""
    runnable = [e for e in entries if isinstance(parsed[e.name], Script)]
    results: dict[str, RunResult] = {}
    stop = False

    def run_one(entry: Entry) -> RunResult:
        script = parsed[entry.name]
        assert isinstance(script, Script)
        files_dir = runs / entry.name
        if stop:
            return _not_run(entry, script, f"{entry.name}: not run (--fail-fast stopped the build)", files_dir)
        run_options = RunOptions(timeout=config.timeout_for(entry.name), project_root=config.root)
        result = run_demo(entry, script, files_dir, run_options)
        status = "ok" if result.ok else "FAILED"
        log.info("%s: %s in %.1f s (%d blocks)", entry.name, status, result.duration, len(result.blocks))
        return result

    with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
        futures = {entry.name: pool.submit(run_one, entry) for entry in runnable}
        for entry in runnable:
            result = futures[entry.name].result()
            results[entry.name] = result
            if result.failure:
                report.failures.append(result.failure)
                if options.fail_fast:
                    stop = True
    return results
