"""Command line: ``site-builder build`` (and ``python -m site_builder build``)."""

from __future__ import annotations

import argparse
import gc
import logging
import math
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, Sequence

from site_builder import __version__
from site_builder.config import Config, load_config, source_date_epoch, with_overrides
from site_builder.fs import relative_to_root
from site_builder.errors import (
    INTERRUPT, OneLineFormatter, SiteBuilderError, Terminated, UsageError, counting_warnings, one_line, print_line,
)
from site_builder.site.publish.swap import failed_dir

if TYPE_CHECKING:
    from site_builder.reports.build_report import BuildReport
    from site_builder.reports.junit import Suite

log = logging.getLogger("site_builder")

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, one_line(f"{self.prog}: error: {message} (see --help)") + "\n")


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):  # "inf" would let a demo hang the build; "nan" never times out
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds: {text!r}")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def make_parser() -> argparse.ArgumentParser:
    """The argument parser with all subcommands."""
    parser = _Parser(prog="site-builder", description="Run a folder of demo scripts block by block and build their pages into a static site.")
    parser.add_argument("--version", action="version", version=f"site-builder {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
    build = commands.add_parser("build", help="run the demos and write the site")
    build.add_argument("--demos", type=Path, help="folder of demo scripts (default: demos)")
    build.add_argument("--out", type=Path, help="output folder (default: build)")
    build.add_argument("--timeout", type=_positive_float, help="seconds each demo may run (default: 600)")
    build.add_argument(
        "-j", "--jobs", type=_positive_int, default=os.cpu_count() or 1, help="demos run in parallel (default: CPUs)"
    )
    build.add_argument("--fail-fast", action="store_true", help="stop at the first failing demo")
    build.add_argument("-q", "--quiet", action="store_true", help="print only warnings and errors")
    build.add_argument("--no-wait", action="store_true",
                       help="when another build of this project is running, stop (exit status 2) instead of waiting")
    records = build.add_mutually_exclusive_group()
    records.add_argument(
        "--force", nargs="*", metavar="NAME",
        help="re-run the named demos (all of them when no name is given), whatever their run records say",
    )
    records.add_argument(
        "--frozen", action="store_true",
        help="run nothing: build every page from its committed run record (_freeze/)",
    )
    build.add_argument(
        "--shard", type=_shard, metavar="K/N",
        help="run only the K-th of N cost-balanced shares of the demos and write their run records, "
             "not the site (then `build --frozen` assembles it from all shards' records)",
    )
    build.add_argument("--junit", type=Path, metavar="FILE",
                       help="also write a JUnit XML report (one testcase per entry) to FILE, even when the build fails")
    build.add_argument(
        "--list", action="store_true",
        help="with --shard: print the names of the shard's entries, one a line, and run nothing",
    )
    build.add_argument("--strict", action="store_true",
                       help="warnings as errors: exit status 1 when the build warned (the site is written)")
    check = commands.add_parser(
        "check", help="re-run demos and compare each block's output with its run record (drift)",
        description="Re-run the demos (all, or the named ones) in temporary folders, twice, and compare "
                    "each block's output with the committed run record and the two runs with each other. "
                    "Exit status: 0 all match, 1 drift or a run that differs from the other, 2 bad usage "
                    "or no record to compare with.",
    )
    check.add_argument("names", nargs="*", metavar="NAME", help="entries to check (default: all)")
    check.add_argument(
        "--tolerance", type=_tolerance, metavar="REL",
        help="let printed numbers differ by this relative amount, e.g. 1e-6 (default: per entry in "
             "pyproject.toml, else 0: exact)",
    )
    check.add_argument("--runs", type=_positive_int, default=2,
                       help="runs per demo; with 2 or more, runs that differ reveal a missing seed (default: 2)")
    check.add_argument("--demos", type=Path, help="folder of demo scripts (default: demos)")
    check.add_argument("--timeout", type=_positive_float, help="seconds each demo may run (default: 600)")
    check.add_argument(
        "-j", "--jobs", type=_positive_int, default=os.cpu_count() or 1, help="demos run in parallel (default: CPUs)"
    )
    check.add_argument("-q", "--quiet", action="store_true", help="print only the verdicts")
    check.add_argument("--junit", type=Path, metavar="FILE",
                       help="also write a JUnit XML report (one testcase per entry checked) to FILE")
    check.add_argument("--no-wait", action="store_true",
                       help="when a build of this project is running, stop (exit status 2) instead of waiting")
    new = commands.add_parser("new", help="create demos/NAME.py (or demos/SECTION/NAME.py) from the house-style template; NAME.ipynb or NAME.md: a notebook")
    new.add_argument("name", help="the entry's name: its file name and URL segment, e.g. k-means, or basics/k-means in the section basics")
    new.add_argument("--demos", type=Path, help="folder of demo scripts (default: demos)")
    serve = commands.add_parser("serve", help="build, serve on localhost, rebuild and reload on changes")
    serve.add_argument("--port", type=_port, default=8000, help="port to listen on (default: 8000; 0: any free port)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    serve.add_argument("--demos", type=Path, help="folder of demo scripts (default: demos)")
    serve.add_argument("--out", type=Path, help="output folder (default: build)")
    serve.add_argument("--timeout", type=_positive_float, help="seconds each demo may run (default: 600)")
    serve.add_argument(
        "-j", "--jobs", type=_positive_int, default=os.cpu_count() or 1, help="demos run in parallel (default: CPUs)"
    )
    return parser


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"not a port number (0-65535): {text!r}")
    return value


def _run_new(args: argparse.Namespace) -> int:
    from site_builder.commands.new import new_entry

    config = with_overrides(load_config(Path.cwd()), demos=args.demos)
    path = new_entry(config, args.name)
    print_line(f"created {relative_to_root(path, config.root)}; preview it with: python -m site_builder serve", sys.stdout)
    return EXIT_OK


def _run_serve(args: argparse.Namespace) -> int:
    from site_builder.commands.serve import ServeOptions, serve

    overrides = {"demos": args.demos, "output": args.out, "timeout": args.timeout}
    options = ServeOptions(host=args.host, port=args.port, jobs=args.jobs, overrides=overrides)
    return serve(Path.cwd(), options)


def _tolerance(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(value) and 0 <= value < 1):
        raise argparse.ArgumentTypeError(f"must be a relative difference from 0 up to (not including) 1: {text!r}")
    return value


def _run_check(args: argparse.Namespace) -> int:
    from site_builder.commands.check import CheckOptions, check

    config = with_overrides(load_config(Path.cwd()), demos=args.demos, timeout=args.timeout)
    options = CheckOptions(names=tuple(args.names), tolerance=args.tolerance, runs=args.runs, jobs=args.jobs,
                           wait=not args.no_wait)
    if not (args.junit or _annotating()):
        return check(config, options, sys.stdout)
    from site_builder.reports.junit import Suite

    suite = Suite("site_builder check")
    try:
        status = check(config, options, sys.stdout, suite.cases)
    except SiteBuilderError as exc:
        _report_failure_for_ci(args.junit, config, suite, exc)
        raise
    _report_for_ci(args.junit, config, suite)
    return status


def _report_failure_for_ci(junit: Path | None, config: Config, suite: Suite, exc: SiteBuilderError) -> None:
    """The CI reports of a command that stopped with ``exc``; a report that cannot be written is said too."""
    try:
        _report_for_ci(junit, config, suite, error=str(exc))
    except SiteBuilderError as also:  # e.g. the disk is full for the report as well
        print_line(f"error: {also}", sys.stderr)


def _annotating() -> bool:
    from site_builder.reports.annotations import enabled

    return enabled()


def _report_for_ci(junit: Path | None, config: Config, suite: Suite, warnings: Sequence[str] = (),
                   files: dict[str, str] | None = None, error: str = "") -> None:
    """Write the JUnit report (``--junit``) and, on GitHub Actions, print the annotations."""
    from site_builder.reports import annotations
    from site_builder.reports.junit import error_case, write_report

    if error:
        suite.cases.append(error_case(error))
    if not suite.seconds:
        suite.seconds = time.time() - suite.started_at
    if junit is not None:
        write_report(Path.cwd() / junit, suite, config.root)
    if annotations.enabled():
        annotations.print_cases(suite.cases, list(warnings), files or {}, sys.stdout)


def _shard(text: str) -> tuple[int, int]:
    from site_builder.run.shards import parse_shard

    return parse_shard(text)


def run_build(args: argparse.Namespace) -> int:
    """The build command with parsed ``args``: its exit status."""
    from site_builder.commands.build import BuildOptions, build
    from site_builder.reports.progress import make_progress, summarize

    if args.shard and args.frozen:
        raise UsageError("--shard runs demos and --frozen runs none: use one or the other")
    if args.list and not args.shard:
        raise UsageError("--list lists the entries of a shard: use it with --shard K/N")
    config = with_overrides(load_config(Path.cwd()), demos=args.demos, output=args.out, timeout=args.timeout)
    if args.list:
        return _list_shard(config, args.shard)
    progress = make_progress(sys.stderr, quiet=args.quiet)
    force_names = frozenset(args.force or ())
    options = BuildOptions(jobs=args.jobs, fail_fast=args.fail_fast, force=args.force == [],
                           force_names=force_names, frozen=args.frozen, shard=args.shard, wait=not args.no_wait,
                           prune=args.demos is None)
    with counting_warnings(log) as warned:
        if args.junit or _annotating():
            from site_builder.reports.junit import Suite, build_cases

            name = f"site_builder build (shard {args.shard[0]}/{args.shard[1]})" if args.shard else "site_builder build"
            suite = Suite(name)
            try:
                report = build(config, options, progress)
            except SiteBuilderError as exc:
                _report_failure_for_ci(args.junit, config, suite, exc)
                raise
            suite.cases, suite.seconds = build_cases(report), report.wall_time
            _report_for_ci(args.junit, config, suite, report.warnings, {b.entry.name: b.entry.rel_path for b in report.builds})
        else:
            report = build(config, options, progress)
    if args.strict and report.ok and (warned.count or report.warnings):
        print_line(f"error: the build warned ({warned.count or len(report.warnings)} warning(s)) and --strict "
                   "makes warnings errors", sys.stderr)
        return EXIT_FAILED
    if report.pruned:
        log.info("%s", report.pruned)
    rows = [summarize(b.run, b.entry.name in report.from_cache) for b in report.builds]
    progress.summary(rows, report.wall_time)
    if args.shard:
        return _shard_outcome(args.shard, report, relative_to_root(config.records, config.root))
    output = relative_to_root(config.output, config.root)
    if report.unchanged:
        log.info("site unchanged: %s is up to date (nothing changed since it was built; %.2f s)",
                 output, report.wall_time)
        return EXIT_OK
    if report.ok:
        log.info("site written to %s", output)
        return EXIT_OK
    for failure in report.failures:
        print_line(f"error: {failure}", sys.stderr)
    kept = output if report.published else relative_to_root(failed_dir(config.output), config.root)
    pages = [f"{kept}/{b.entry.name}/index.html" for b in report.builds
             if b.run.failure and b.entry.name not in report.not_run]
    shown = ", ".join(pages[:5]) + (f" and {len(pages) - 5} more" if len(pages) > 5 else "")
    if report.published:  # on_failure = "publish"
        where = f"the site was written to {output} (on_failure = \"publish\"), the failed entries' pages showing their errors"
    else:
        previous = f"{output} was left as it was" if config.output.is_dir() else f"no site was written to {output}"
        where = f"{previous}; the failed build's pages are in {kept}"
    print_line(f"build failed ({len(report.failures)} problem(s)); {where}" + (f": {shown}" if shown else ""),
               sys.stderr)
    return EXIT_FAILED


def _list_shard(config: Config, shard: tuple[int, int]) -> int:
    """Print the entries of shard K/N, one a line (for CI: which record folders are this shard's)."""
    from site_builder.source.entries import discover
    from site_builder.run.shards import shard_entries

    for entry in shard_entries(discover(config.demos, config.root, ignore=config.ignored(), pages=config.pages), shard,
                               config.run_only(), config.records, config.root):
        print_line(entry.name, sys.stdout)
    return EXIT_OK


def _shard_outcome(shard: tuple[int, int], report: BuildReport, records: str) -> int:
    """Say what a shard did (it writes records, never the site); exit 1 when one of its demos failed."""
    ran = len(report.builds) - len(report.from_cache)
    line = (f"shard {shard[0]}/{shard[1]}: {len(report.builds)} entr{'y' if len(report.builds) == 1 else 'ies'} "
            f"({ran} ran, {len(report.from_cache)} from the records), records in {records}/; "
            "no site written: `build --frozen` assembles it from all shards' records")
    for failure in report.failures:
        print_line(f"error: {failure}", sys.stderr)
    if report.ok:
        log.info("%s", line)
        return EXIT_OK
    print_line(f"{line}; {len(report.failures)} problem(s)", sys.stderr)
    return EXIT_FAILED


def _forget_handled_interrupt() -> None:
    """Make a handled Ctrl-C end with our exit status, not a death by SIGINT.

    CPython (3.11 to 3.13) marks a KeyboardInterrupt as unhandled whenever it escapes code run
    by a string ``exec`` (every dataclass and namedtuple a lazy import creates does that), even
    when a caller catches it; under ``python -m`` the interpreter then kills itself with
    SIGINT at exit.  A Ctrl-C landing in such an import (render's imports while demos run)
    made an interrupted build die by SIGINT instead of exiting 130.  Each string ``exec``
    clears the mark as it starts, so an empty one forgets it; a KeyboardInterrupt still
    propagating out of ``main`` sets it again.
    """
    exec("")


def run() -> NoReturn:
    """The process's entry point (``python -m site_builder``, ``site-builder``): main, then exit."""
    status = main()
    # The process ends here: its last garbage collection would walk every object the build
    # made (25 ms for a thousand entries) only to free memory the exit frees anyway.
    gc.freeze()
    sys.exit(status)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    args = make_parser().parse_args(argv)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLineFormatter("%(message)s"))  # a message is one line, whatever it quotes
    logging.basicConfig(level=logging.WARNING if getattr(args, "quiet", False) else logging.INFO,
                        handlers=[handler])
    on_main_thread = threading.current_thread() is threading.main_thread()
    previous = None
    if on_main_thread:
        INTERRUPT.clear()
        previous = signal.signal(signal.SIGTERM, INTERRUPT.on_signal), signal.signal(signal.SIGINT, INTERRUPT.on_signal)
        INTERRUPT.passed_on, sys.unraisablehook = sys.unraisablehook, INTERRUPT.ignored
    try:
        if args.command in ("build", "serve"):
            source_date_epoch()  # a malformed value is refused before anything runs
        if args.command == "build":
            return run_build(args)
        if args.command == "check":
            return _run_check(args)
        if args.command == "new":
            return _run_new(args)
        if args.command == "serve":
            return _run_serve(args)
    except SiteBuilderError as exc:
        print_line(f"error: {exc}", sys.stderr)
        return exc.exit_status
    except OSError as exc:  # a disk error where no write site expected one: still one line, no traceback
        where = f" ({relative_to_root(Path(exc.filename), Path.cwd())})" if exc.filename else ""
        print_line(f"error: {exc.strerror or exc}{where}; fix it and run again", sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt as exc:
        what = "terminated" if isinstance(exc, Terminated) else "interrupted"
        print(f"{what}; the output folder was left as it was", file=sys.stderr)
        return 143 if isinstance(exc, Terminated) else 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous[0])
            signal.signal(signal.SIGINT, previous[1])
            sys.unraisablehook = INTERRUPT.passed_on
        _forget_handled_interrupt()
    raise AssertionError(f"unhandled command {args.command}")
