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
import select
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

from site_builder.fs import adopt_dir, link_names, make_dirs, remove_links
from site_builder.source.blocks import Script
from site_builder.source.cell_options import display_of
from site_builder.run.demo_process import DemoProcess, start_demo_process
from site_builder.run.encoders import find_ffmpeg
from site_builder.run.capture import BlockOutput
from site_builder.run.name_refs import name_refs
from site_builder.run.quoting import glued_values, job_expressions, quoted_values, strict_failure
from site_builder.run.results import (  # noqa: F401 (re-exported: the stages import them from here)
    Artifact,
    BlockError,
    BlockEvent,
    BlockResult,
    BlockStatus,
    Display,
    OutputChunk,
    RunOptions,
    RunResult,
    Stream,
)
from site_builder.source.entries import Entry

log = logging.getLogger(__name__)

# Files the builder itself makes (figures, complete outputs, record.json) end up under
# this sub-folder of a run's folder.  While the demo runs they are written to a sibling
# folder the demo does not know of, and moved in only once the demo is dead: whatever the
# demo left under this name (a link, a file) is removed first, never written through.
BUILDER_DIR = "_site_builder"
# IPython's profile folder for a notebook's shell, in the builder's folder while the demo runs
# (never the user's ~/.ipython); removed before that folder is published.
IPYTHON_DIR = ".ipython"


EventCallback = Callable[[BlockEvent], None]


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
    run finished (the child is killed).  ``on_event`` is called from a reader thread.
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
    scrub = path_scrubber([(files_dir, "."), (root, "."), (Path.home(), "~")])
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
        "display_limit": options.display_limit,
        "animations": {"ffmpeg": find_ffmpeg(), "animation_frames": options.animation_frames,
                       "animation_size": options.animation_size},
        "blocks": [
            {"name": c.name, "text": c.text, "first_line": c.first_line, "tags": list(c.tags),
             "raises": display_of(c.tags, c.options).raises,
             "figure_size": list(display_of(c.tags, c.options).figure_size)}
            for c in cells
        ],
        "expressions": quoting,  # the prose's inline expressions, each after its block (run.quoting)
    }
    state = _RunState(entry.name, cells, builder_dir, options.output_limit, scrub, on_event)
    started_at = time.time()
    t0 = time.perf_counter()
    # Unnamed temporary files: no folder to create and remove for every demo.
    with tempfile.TemporaryFile() as job_file, tempfile.TemporaryFile() as err:
        job_file.write(json.dumps(job).encode("utf-8"))
        job_file.flush()
        job_file.seek(0)  # the runner reads it through the same open file
        read_fd, write_fd = os.pipe()
        try:
            proc = start_demo_process(job_file.fileno(), files_dir, write_fd, err.fileno(),
                                      env={**os.environ, **CHILD_ENV})
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        reader = threading.Thread(
            target=state.read, args=(read_fd,), name=f"events-{entry.name}", daemon=True
        )
        reader.start()
        try:
            timed_out = _wait(proc, state.done, t0 + options.timeout, cancel)
        finally:
            # Always: plt.show(), input() or a never-ending grandchild must not outlive us.
            killed_at = time.perf_counter()
            proc.kill_group()
            if state.final is None:
                proc.wait()  # how it ended explains the crash
            else:
                proc.release()
            state.stopping = True
            reader.join(10)
            if reader.is_alive():
                log.warning("%s: event reader still busy; leaving its pipe open", entry.name)
            else:
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
    if state.final is not None:
        interruption = None
    elif timed_out:
        interruption = ("timeout", killed_at - state.current_t0 if state.current_t0 else 0.0)
    else:
        interruption = ("crashed", proc.poll())
    blocks = state.block_results(interruption, killed_at, entry.rel_path, runner_stderr)
    final = state.final or {}
    # What linking code to its documentation costs a run (benchmark (g) sums these lines).
    resolving = sum(_seconds(ev.get("names_cpu")) for ev in [*state.ends.values(), final])
    log.debug("%s: name resolution %.6f s of the demo process's %.3f s CPU", entry.name, resolving,
              _seconds(final.get("cpu")))
    quoted = quoted_values(expressions, quoting, [e for e in state.quoting if e["event"] == "quoted"], scrub)
    failure = _failure(entry, cells, blocks, options.timeout, killed_at - t0, interruption)
    if failure is None and options.strict_expressions:
        failure = strict_failure(entry.name, entry.rel_path, quoted)
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
        glued=glued_values([e for e in state.quoting if e["event"] == "glue"], cells, state.display),
    )


def _seconds(value: Any) -> float:
    """A duration from a runner event; 0.0 when it is missing or not a number."""
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        return 0.0


def _wait(proc: DemoProcess, done: threading.Event, deadline: float,
          cancel: threading.Event | None = None) -> bool:
    """Wait for the runner to report ``done``, die or be cancelled; True when the deadline passed first."""
    while True:
        remaining = deadline - time.perf_counter()
        if done.wait(max(0.0, min(0.05, remaining))):
            return False
        if proc.poll() is not None or (cancel is not None and cancel.is_set()):
            return False
        if remaining <= 0:
            return True


def path_scrubber(folders: list[tuple[Path, str]]) -> Callable[[str], str]:
    """Return a function replacing the given folders in text: ``folder/x`` -> ``x`` or ``~/x``.

    Earlier pairs win when two folders are the same; longer paths match first.
    """
    names: dict[str, str] = {}
    for folder, replacement in reversed(folders):
        text = str(folder)
        if text in ("", "/", "."):
            continue
        for variant in {text, os.path.realpath(text)}:
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


class _RunState:
    """What the event reader learned from the runner, shared with ``run_demo``."""

    def __init__(self, entry: str, cells: tuple[Any, ...], builder_dir: Path, limit: int,
                 scrub: Callable[[str], str], on_event: EventCallback | None) -> None:
        self.entry, self.cells, self.builder_dir = entry, cells, builder_dir
        self.limit, self.scrub, self.on_event = limit, scrub, on_event
        self.outputs: dict[int, BlockOutput] = {}
        self.ends: dict[int, dict[str, Any]] = {}
        self.current: int | None = None
        self.current_t0 = 0.0
        self.final: dict[str, Any] | None = None
        self.os_exit: dict[str, Any] | None = None
        self.internal_error: str | None = None
        self.reader_error: str | None = None
        self.write_error: OSError | None = None  # writing a long output's file failed (disk full...)
        self.done = threading.Event()
        self.stopping = False
        self.quoting: list[dict[str, Any]] = []  # the "quoted" and "glue" events (run.quoting)

    def read(self, fd: int) -> None:
        """Read JSON lines from the runner until EOF (or, once told to stop, until idle)."""
        buf = bytearray()
        stop_deadline: float | None = None
        while True:
            # Read before waiting: only a wait begun after the stop finds the pipe truly idle.
            # (A wait that timed out just before it, in a thread then kept waiting for the CPU,
            # would leave the runner's last events unread: a finished demo taken for a crash.)
            stopping = self.stopping
            if stopping and stop_deadline is None:
                stop_deadline = time.perf_counter() + 5.0  # a starved reader on a busy machine still drains the runner
            ready, _, _ = select.select([fd], [], [], 0.1)
            if not ready:
                if stopping:
                    break
                continue
            if stop_deadline is not None and time.perf_counter() > stop_deadline:
                break  # an escaped grandchild keeps writing: stop listening
            data = os.read(fd, 1 << 20)
            if not data:
                break
            buf += data
            start = 0
            while (nl := buf.find(b"\n", start)) >= 0:
                self._handle(bytes(buf[start:nl]))
                start = nl + 1
            del buf[:start]

    def _handle(self, line: bytes) -> None:
        try:
            event = json.loads(line)
            kind = event.get("event")
            if kind == "out":
                if self.write_error is None:
                    self._output(event["i"]).add(event["stream"], event["text"])
            elif kind == "display":
                if self.write_error is None:
                    self._output(event["i"]).add_display(self.display(event))
            elif kind == "start":
                self.current, self.current_t0 = event["i"], _started_at(event)
                self._notify(BlockEvent(self.entry, self.cells[event["i"]].name, "start"))
            elif kind == "end":
                self.ends[event["i"]] = event
                self.current = None
                self._notify(BlockEvent(self.entry, self.cells[event["i"]].name, "end",
                                        event["status"], float(event["duration"])))
            elif kind in ("quoted", "glue"):
                self.quoting.append(event)
            elif kind == "done":
                self.final = event
                self.done.set()
            elif kind == "os-exit":  # the demo called os._exit: where, for the crash message
                self.os_exit = event
            elif kind == "internal-error":
                self.internal_error = event.get("traceback", "")
                self.done.set()
        except OSError as exc:  # run_demo raises it once the demo is over
            self.write_error = exc
        except Exception as exc:  # a builder bug: report it rather than lose events silently
            log.exception("%s: bad runner event", self.entry)
            self.reader_error = f"{type(exc).__name__}: {exc}"

    def _output(self, i: int) -> BlockOutput:
        if i not in self.outputs:
            name = f"output-{_safe_name(self.cells[i].name)}.txt"
            self.outputs[i] = BlockOutput(self.limit, self.builder_dir / name, self.scrub)
        return self.outputs[i]

    def _notify(self, event: BlockEvent) -> None:
        if self.on_event is not None:
            try:
                self.on_event(event)
            except Exception:
                log.exception("%s: progress callback failed", self.entry)

    def block_results(self, interruption: tuple[str, Any] | None, killed_at: float,
                      rel_path: str, runner_stderr: str) -> tuple[BlockResult, ...]:
        """One BlockResult per cell, the interrupted one (timeout/crash) included."""
        interrupted = self.current
        if interruption and interrupted is None:
            interrupted = next((i for i in range(len(self.cells)) if i not in self.ends), None)
        results = []
        # The names of the functions' parameters, known once the script ended (runner's "done").
        parameters = self.final.get("parameter_names") if isinstance(self.final, dict) else None
        parameters = parameters if isinstance(parameters, dict) else {}
        for i, cell in enumerate(self.cells):
            out = self.outputs[i].result(
                f"{BUILDER_DIR}/output-{_safe_name(cell.name)}.txt"
            ) if i in self.outputs else {}
            if i in self.ends:
                ev = self.ends[i]
                results.append(BlockResult(
                    name=cell.name, status=ev["status"], duration=float(ev["duration"]),
                    error=self._error(ev.get("error")), value=self._value(ev.get("value")),
                    names=name_refs(_list(ev.get("names")) + _list(parameters.get(str(i)))),
                    artifacts=tuple(Artifact(**a) for a in ev.get("artifacts", ())), **out,
                ))
            elif interruption and i == interrupted:
                kind, detail = interruption
                if kind == "timeout":
                    # The cell already says "Timed out": the message says how long it ran.
                    message = f"stopped after running {detail:.1f} s: the demo reached its time limit"
                    error = BlockError("Timeout", message, None, "")
                    status = "timeout"
                else:
                    error = _crash_error(detail, rel_path, runner_stderr, self.os_exit)
                    status = "crashed"
                start = self.current_t0 if self.current == i else killed_at
                results.append(BlockResult(cell.name, status, killed_at - start if start else 0.0,
                                           error=error, **out))  # type: ignore[arg-type]
                self._notify(BlockEvent(self.entry, cell.name, "end", status, results[-1].duration))
            else:
                results.append(BlockResult(cell.name, "not-run", 0.0, **out))
        return tuple(results)

    def _value(self, raw: dict[str, Any] | None) -> Display | None:
        return self.display(raw) if raw else None

    def display(self, raw: dict[str, Any]) -> Display:
        """A Display from the runner's event, text scrubbed of the machine's paths."""
        return Display(data={str(k): self.scrub(str(v)) for k, v in raw.get("data", {}).items()},
                       files={str(k): str(v) for k, v in raw.get("files", {}).items()},
                       omitted={str(k): int(v) for k, v in raw.get("omitted", {}).items()})

    def _error(self, raw: dict[str, Any] | None) -> BlockError | None:
        if raw is None:
            return None
        return BlockError(raw["type"], self.scrub(raw["message"]), raw["line"],
                          self.scrub(raw["traceback"]))


def _list(raw: Any) -> list[Any]:
    return raw if isinstance(raw, list) else []


def _crash_error(returncode: int | None, rel_path: str, runner_stderr: str,
                 os_exit: dict[str, Any] | None = None) -> BlockError:
    """Describe a runner that died mid-block, with the faulthandler dump's script line."""
    if os_exit is not None:  # the demo called os._exit(status): no dump, but the runner saw where
        line = os_exit.get("line")
        traceback = f'  File "{rel_path}", line {line}\n' if line else ""
        return BlockError("Crash", f"os._exit({os_exit.get('status')!r})", line, traceback)
    if returncode is not None and returncode < 0:
        try:
            why = f"signal {signal.Signals(-returncode).name}"
        except ValueError:
            why = f"signal {-returncode}"
        message = f"the process died with {why}"
    else:
        message = f"exit status {returncode}"
    line = None
    frames: list[str] = []
    _, found, current = runner_stderr.partition("Current thread")
    if found:
        for m in re.finditer(r'^[ \t]*File "([^"]+)", line (\d+) in (.*)$', current, re.M):  # [ \t]: linear
            if m.group(1) == rel_path:
                frames.append(m.group(0).strip())
                if line is None:
                    line = int(m.group(2))  # most recent call first: the innermost
    traceback = "".join(f"  {f}\n" for f in reversed(frames))
    return BlockError("Crash", message, line, traceback)


def _started_at(event: dict[str, Any]) -> float:
    """When a block began, on this process's perf_counter clock: the child's monotonic time
    stamp taken back by its age (the event may be read long after it was sent)."""
    now = time.perf_counter()
    sent = event.get("t")
    if isinstance(sent, (int, float)) and not isinstance(sent, bool):
        return now - min(max(time.monotonic() - float(sent), 0.0), 3600.0)
    return now


def _failure(entry: Entry, cells: tuple[Any, ...], blocks: tuple[BlockResult, ...],
             limit: float, elapsed: float, interruption: tuple[str, Any] | None) -> str | None:
    """The first problem of the run as a one-line message, or None."""
    name = entry.name
    for cell, block in zip(cells, blocks):
        err = block.error
        where = entry.rel_path + (f":{err.line}" if err and err.line else "")
        if block.status == "error" and err:
            tail = f": {err.message}" if err.message else ""
            return f"{name}: block {block.name} raised {err.type} at {where}{tail}"
        if block.status == "exited" and err:
            return f"{name}: block {block.name} exited ({err.message}) at {where}"
        if block.status == "timeout":
            return (f"{name}: block {block.name} timed out after running {block.duration:.1f} s "
                    f"(the demo's limit of {limit:g} s was reached after {elapsed:.1f} s)")
        if block.status == "crashed" and err:
            why = err.message.removeprefix("the process died with ")
            return f"{name}: block {block.name} crashed ({why}) at {where}"
        if block.status == "ok" and "raises-exception" in cell.tags and entry.format == "py":  # notebook: allows
            tags = json.dumps(list(cell.tags))
            return f"{name}: block {block.name} was expected to raise (tags={tags}) but did not"
    if interruption:  # after the last block: the runner's own wrap-up
        kind, detail = interruption
        if kind == "timeout":
            return f"{name}: timed out after {elapsed:.1f} s (limit {limit:g} s)"
        return f"{name}: the process died after the last block ({_crash_error(detail, '', '').message})"
    return None


def _safe_name(block: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", block)
