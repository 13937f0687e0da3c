"""Execute stage (parent side): run one demo in a fresh child process, block by block.

The child runs ``runner.py`` (standard library only); this module starts it, feeds it
the blocks, reads its per-block events, enforces the timeout and turns what happened
into a :class:`RunResult`.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, BinaryIO, Callable, Collection

from site_builder.fs import adopt_dir, link_names, make_dirs, remove_links
from site_builder.source.parsed import Script
from site_builder.source.cell_options import display_of
from site_builder.run.demo_process import DemoProcess, start_demo_process, start_fork_server
from site_builder.run.encoders import ffmpeg_choice
from site_builder.run.child.files import BUILDER_DIR
from site_builder.run.child.protocol import Event, Interruption, Outcome
from site_builder.run.events import EventCallback, RunEvents, crash_error
from site_builder.run.quoting import glued_values, job_expressions, quoted_values, strict_failure
from site_builder.run.results import (  # noqa: F401 (re-exported: the stages import them from here)
    Artifact,
    BlockError,
    BlockEvent,
    BlockResult,
    Display,
    OutputChunk,
    RunOptions,
    RunResult,
    Stream,
)
from site_builder.source.entries import Entry

log = logging.getLogger(__name__)

# Files the builder itself makes (figures, complete outputs, record.json) end up under
# BUILDER_DIR (child/files.py) of a run's folder.  While the demo runs they are written to a
# sibling folder the demo does not know of, and moved in only once the demo is dead: whatever
# the demo left under this name (a link, a file) is removed first, never written through.

# IPython's profile folder for a notebook's shell, in the builder's folder while the demo runs
# (never the user's ~/.ipython); removed before that folder is published.
IPYTHON_DIR = ".ipython"


class RunCancelled(Exception):
    """The run was stopped from outside (``cancel`` was set): there is no result to keep."""


# Numbers must not depend on how many demos the build runs side by side.
CHILD_ENV = {
    "MPLBACKEND": "Agg",
    "PYTHONHASHSEED": "0",
    "PYTHONUNBUFFERED": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}


def start_early() -> None:
    """Get the demos' processes ready in the background while the builder still parses: the
    fork server and its preloads."""
    start_fork_server({**os.environ, **CHILD_ENV})


def run_demo(
    entry: Entry,
    script: Script,
    files_dir: Path,
    options: RunOptions,
    on_event: EventCallback | None = None,
    cancel: threading.Event | None = None,
) -> RunResult:
    """Run ``script`` in a fresh child process with ``files_dir`` as working directory.

    The child is forked from the build's fork server, or spawned (see demo_process).

    Never raises for a broken demo (its failure is in the result); raises RuntimeError
    only when the runner itself fails, RunCancelled when ``cancel`` was set before the
    run finished (the child is killed).  ``on_event`` is called from this thread, as the events come.
    """
    cells = tuple(c for c in script.code_cells if display_of(c.tags, c.options).runs)  # skip-execution
    files_dir = Path(files_dir).resolve()
    make_dirs(files_dir)
    builder_dir = files_dir.with_name(files_dir.name + ".builder")
    # a notebook reads the files beside it, as Jupyter runs it in its own folder; a script gets
    # exactly what `python demos/x.py` gives it
    links = link_names(entry.path.parent, files_dir, skip=BUILDER_DIR) if entry.format != "py" else {}
    try:
        make_dirs(builder_dir)
        result = _run(entry, script, cells, files_dir, builder_dir, options, on_event, cancel)
        shutil.rmtree(builder_dir / IPYTHON_DIR, ignore_errors=True)  # left by a notebook killed mid-run
        planted = adopt_dir(builder_dir, files_dir / BUILDER_DIR)
    except BaseException:
        shutil.rmtree(builder_dir, ignore_errors=True)
        raise
    finally:
        remove_links(links)
    if planted:
        log.warning("%s: the %s %s the demo made is not published: the name is reserved for the "
                    "builder's own files", entry.name, planted, BUILDER_DIR)
    return result


def _run(entry: Entry, script: Script, cells: tuple[Any, ...], files_dir: Path, builder_dir: Path,
         options: RunOptions, on_event: EventCallback | None,
         cancel: threading.Event | None) -> RunResult:
    root = Path(options.project_root).resolve()
    # files_dir and root were resolved just now: only home's real path is still to look up
    scrub = path_scrubber([(files_dir, "."), (root, "."), (Path.home(), "~")], real=(files_dir, root))
    expressions, quoting = job_expressions(script, cells, entry.format != "py")
    job = {
        "script": str(entry.path),
        "rel_path": entry.rel_path,
        "source": script.run_source or entry.source,  # the lines tracebacks quote
        "files_dir": str(files_dir),
        "builder_dir": str(builder_dir),
        "project_root": str(root),
        "notebook": entry.format != "py",  # cells run in IPython (a script as `python demos/x.py`)
        "ipython_dir": str(builder_dir / IPYTHON_DIR),
        "figure_scale": options.figure_scale,
        "thumbnail_number": script.thumbnail_number,  # the figure whose thumbnail the child makes
        "display_limit": options.display_limit,
        "animations": {**ffmpeg_choice(), "animation_frames": options.animation_frames,
                       "animation_size": options.animation_size},
        "blocks": [
            {"name": c.name, "text": c.text, "first_line": c.first_line, "tags": list(c.tags),
             "raises": display_of(c.tags, c.options).raises,
             "figure_size": list(display_of(c.tags, c.options).figure_size)}
            for c in cells
        ],
        "expressions": quoting,  # the prose's inline expressions, each after its block (run.quoting)
    }
    state = RunEvents(entry.name, cells, builder_dir, options.output_limit, scrub, on_event)
    started_at = time.time()
    t0 = time.perf_counter()
    with _unnamed_file() as job_file, _unnamed_file() as err:
        job_file.write(json.dumps(job).encode("utf-8"))
        job_file.flush()
        job_file.seek(0)  # the runner reads it through the same open file
        read_fd, write_fd = os.pipe()
        try:
            try:
                proc = start_demo_process(job_file.fileno(), files_dir, write_fd, err.fileno(),
                                          env={**os.environ, **CHILD_ENV})
            finally:
                os.close(write_fd)
            try:
                timed_out = _follow(proc, state, read_fd, t0 + options.timeout, cancel)
            finally:
                # Always: plt.show(), input() or a never-ending grandchild must not outlive us.
                killed_at = time.perf_counter()
                if state.final is None:
                    proc.kill_group()
                    proc.wait()  # how it ended explains the crash
                else:
                    proc.end()
                state.drain(read_fd)
        finally:
            os.close(read_fd)
        err.seek(0)
        runner_stderr = err.read().decode("utf-8", "replace")
    if cancel is not None and cancel.is_set() and state.final is None:
        raise RunCancelled(f"{entry.name}: stopped before it finished")
    if state.write_error is not None:  # the builder's own write (a long output's file), not the demo's
        raise state.write_error
    if state.internal_error or state.reader_error:
        raise RuntimeError(
            f"{entry.name}: the runner failed: {state.internal_error or state.reader_error}"
        )
    interruption: Interruption | None = None
    if state.final is None and timed_out:
        interruption = Interruption(Outcome.TIMED_OUT, seconds=killed_at - state.current_t0 if state.current_t0 else 0.0)
    elif state.final is None:
        interruption = Interruption(Outcome.CRASHED, returncode=proc.poll())
    blocks = state.block_results(interruption, killed_at, entry.rel_path, runner_stderr)
    if entry.origins:  # a .qmd's includes: a traceback's frames name the included file's own line
        blocks = tuple(replace(b, error=replace(b.error, traceback=entry.frames(b.error.traceback)))
                       if b.error and b.error.traceback else b for b in blocks)
    final = state.final or {}
    # What linking code to its documentation costs a run (benchmark (g) sums these lines).
    resolving = sum(_seconds(ev.get("names_cpu")) for ev in [*state.ends.values(), final])
    log.debug("%s: name resolution %.6f s of the demo process's %.3f s CPU", entry.name, resolving,
              _seconds(final.get("cpu")))
    quoted = quoted_values(expressions, quoting, [e for e in state.quoting if e["event"] == Event.QUOTED], scrub)
    failure = _failure(entry, cells, blocks, options.timeout, killed_at - t0, interruption)
    if failure is None and options.strict_expressions:
        failure = strict_failure(entry.name, entry.rel_path, entry.place, quoted)
    return RunResult(
        entry=entry.name,
        blocks=blocks,
        failure=failure,
        duration=time.perf_counter() - t0,
        started_at=started_at,
        files_dir=files_dir,
        environment={str(k): str(v) for k, v in final.get("environment", {}).items()},
        reads=tuple(final.get("reads", ())),
        quoted=quoted,
        glued=glued_values([e for e in state.quoting if e["event"] == Event.GLUE], cells, state.display),
    )


def _seconds(value: Any) -> float:
    """A duration from a runner event; 0.0 when it is missing or not a number."""
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        return 0.0


def _follow(proc: DemoProcess, state: RunEvents, fd: int, deadline: float,
            cancel: threading.Event | None = None) -> bool:
    """Take the runner's events from ``fd`` as they come, in this thread, until it reports done,
    dies or is cancelled; True when the deadline passed first."""
    pipe_open = True
    while True:
        remaining = deadline - time.perf_counter()
        wait = max(0.0, min(0.05, remaining))
        if pipe_open:
            pipe_open = state.pump(fd, wait) >= 0
        else:  # every writer closed it: only the exit is to come
            proc.wait(wait)
        if state.done.is_set():
            return False
        if proc.poll() is not None or (cancel is not None and cancel.is_set()):
            return False
        if remaining <= 0:
            return True


def _unnamed_file() -> BinaryIO:
    """A scratch file without a name: in memory (memfd) where the system has that, else an unnamed
    temporary file.  A run makes two: no inode made on disk and deleted for each demo."""
    if hasattr(os, "memfd_create"):
        try:
            return os.fdopen(os.memfd_create("site-builder"), "w+b")  # close-on-exec, as TemporaryFile's
        except OSError:
            pass
    return tempfile.TemporaryFile()


def path_scrubber(folders: list[tuple[Path, str]], real: Collection[Path] = ()) -> Callable[[str], str]:
    """Return a function replacing the given folders in text: ``folder/x`` -> ``x`` or ``~/x``,
    each as given and as its real path (those in ``real`` are real paths already).

    Earlier pairs win when two folders are the same; longer paths match first.
    """
    names: dict[str, str] = {}
    for folder, replacement in reversed(folders):
        text = str(folder)
        if text in ("", "/", "."):
            continue
        # a realpath is some 30 us a folder, and a run's scrubber is made for every demo
        for variant in {text, text if folder in real else os.path.realpath(text)}:
            names[variant] = replacement
    if not names:
        return lambda s: s
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    compiled: list[re.Pattern[str]] = []  # compiled on first need: most output names no path

    def replace(m: re.Match[str]) -> str:
        repl = names[m.group("path")]
        if m.group("slash"):
            return "" if repl == "." else repl + "/"
        return repl

    def scrub(s: str) -> str:
        if not s or not any(n in s for n in names):
            return s
        if not compiled:
            # Only whole path components: /srv/project must not match /srv/project2.
            compiled.append(re.compile(rf"(?P<path>{alternatives})(?:(?P<slash>/)|(?![\w.-]))"))
        return compiled[0].sub(replace, s)

    return scrub


def _failure(entry: Entry, cells: tuple[Any, ...], blocks: tuple[BlockResult, ...],
             limit: float, elapsed: float, interruption: Interruption | None) -> str | None:
    """The first problem of the run as a one-line message, or None."""
    name = entry.name
    for cell, block in zip(cells, blocks):
        err = block.error
        where = entry.place(err.line) if err and err.line else entry.rel_path  # an included file's own line
        if block.status == Outcome.RAISED and err:
            tail = f": {err.message}" if err.message else ""
            return f"{name}: block {block.name} raised {err.type} at {where}{tail}"
        if block.status == Outcome.EXITED and err:
            return f"{name}: block {block.name} exited ({err.message}) at {where}"
        if block.status == Outcome.TIMED_OUT:
            return (f"{name}: block {block.name} timed out after running {block.duration:.1f} s "
                    f"(the demo's limit of {limit:g} s was reached after {elapsed:.1f} s)")
        if block.status == Outcome.CRASHED and err:
            why = err.message.removeprefix("the process died with ")
            return f"{name}: block {block.name} crashed ({why}) at {where}"
        if block.status == Outcome.OK and "raises-exception" in cell.tags and entry.format == "py":  # notebook: allows
            tags = json.dumps(list(cell.tags))
            return f"{name}: block {block.name} was expected to raise (tags={tags}) but did not"
    if interruption:  # after the last block: the runner's own wrap-up
        if interruption.outcome == Outcome.TIMED_OUT:
            return f"{name}: timed out after {elapsed:.1f} s (limit {limit:g} s)"
        return f"{name}: the process died after the last block ({crash_error(interruption.returncode, '', '').message})"
    return None
