"""Child side of the execute stage: run one demo's blocks and report each on a pipe.

Started by ``site_builder.run.execute`` as ``python -P runner.py JOB_FD EVENTS_FD`` (or forked
from ``fork_server.py``, which calls ``main`` the same way); JOB_FD holds the job's JSON.
Standard library only, and it must not import site_builder: the demo gets the
``sys.path`` and ``sys.modules`` that ``python demos/x.py`` would give it.  Events are JSON
lines on EVENTS_FD: ``start``/``out``/``end`` per block, then ``done`` (or ``internal-error``).

The work is done by the modules of ``child/`` (see its ``__init__``), loaded here by path
under a private package name that is taken out of ``sys.modules`` again once they are
loaded: a demo never sees them, and no ``sys.path`` entry is added for them.
"""

from __future__ import annotations

import builtins
import faulthandler
import importlib.util
import json
import linecache
import os
import sys
import time
import traceback
import types
from typing import Any

CHILD_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "child")
CHILD_PACKAGE = "_site_builder_child"  # in sys.modules only while the modules load


def _child_module_names() -> tuple[str, ...]:
    """Every module of child/ and its sub-packages, by dotted name inside child/ ("cells",
    "outputs.figures"); all are loaded (their relative imports settle the order), so a new
    one needs no entry here."""
    found = []
    for folder, _, names in os.walk(CHILD_DIR):
        package = os.path.relpath(folder, CHILD_DIR).replace(os.sep, ".")
        prefix = "" if package == "." else package + "."
        found += [prefix + name[:-3] for name in names if name.endswith(".py") and name != "__init__.py"]
    return tuple(sorted(found))


CHILD_MODULES = _child_module_names()


def load_child_modules() -> dict[str, types.ModuleType]:
    """The modules of ``child/`` by dotted name, loaded by path and left out of ``sys.modules``.

    They import one another at their top only (``from .streams import Sink``), which is
    why the package may leave ``sys.modules`` once they are loaded.
    """
    spec = importlib.util.spec_from_file_location(
        CHILD_PACKAGE, os.path.join(CHILD_DIR, "__init__.py"), submodule_search_locations=[CHILD_DIR])
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules[CHILD_PACKAGE] = package
    try:
        spec.loader.exec_module(package)
        return {name: importlib.import_module(f"{CHILD_PACKAGE}.{name}") for name in CHILD_MODULES}
    finally:
        for name in [n for n in sys.modules if n == CHILD_PACKAGE or n.startswith(CHILD_PACKAGE + ".")]:
            del sys.modules[name]


_child = load_child_modules()
process, streams, files = _child["process"], _child["streams"], _child["files"]
cells, figures, environment = _child["cells"], _child["outputs.figures"], _child["environment"]
displays_out, quoted = _child["outputs.displays"], _child["outputs.quoted"]
api_names, shell_module = _child["api_names"], _child["shell"]
protocol = _child["protocol"]  # the events sent to the parent, typed (child/protocol.py)
Event = protocol.Event
# What fork_server.py calls on the runner it loaded.
become_subreaper = process.become_subreaper
kill_tree = process.kill_tree
live_children = process.live_children
warm_realpaths = files.warm_realpaths


def set_platform(name: str | None, python: str | None = None) -> None:
    """Tell the children ``platform.platform()`` and ``platform.python_version()`` as the builder
    found them (None: they find them)."""
    environment.PLATFORM, environment.PYTHON = name, python


def set_preloaded(packages: frozenset[str], versions: dict[str, str]) -> None:
    """Tell the children which top-level packages the fork server imported, and their versions."""
    environment.PRELOADED = packages
    environment.KNOWN_VERSIONS = versions


def main(argv: list[str]) -> None:
    job = json.loads(_read_all(int(argv[1])))  # closed: the demo must not inherit it
    events = streams.Events(int(argv[2]))
    process.become_subreaper()
    os.set_inheritable(events.fd, False)  # grandchildren must not keep the pipe open
    saved_err = os.dup(2)  # the runner's own stderr (a file the parent reads)
    faulthandler.enable(file=saved_err)  # a segfault's traceback: the parent finds the line
    try:
        _run(job, events)
    except BaseException:
        tb = traceback.format_exc()
        os.write(saved_err, tb.encode("utf-8", "replace"))
        events.send([protocol.InternalErrorEvent(event=Event.INTERNAL_ERROR, traceback=tb)])
        process.REAL_EXIT(70)
    process.REAL_EXIT(0)  # skip interpreter shutdown: demo threads or atexit hooks must not hang us


def _read_all(fd: int) -> bytes:
    """The bytes of ``fd`` (then closed), without a text file object: in a forked child the
    codec and buffer machinery of ``open`` would copy some 35 pages of the fork server."""
    chunks = []
    try:
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)


def _run(job: dict[str, Any], events: Any) -> None:
    script, rel_path, files_dir = job["script"], job["rel_path"], job["files_dir"]
    paths = files.Paths(job["project_root"], files_dir)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    os.dup2(out_w, 1)  # dup2 makes 1/2 inheritable: child processes write into the pipes
    os.dup2(err_w, 2)
    os.close(out_w)
    os.close(err_w)
    sink = streams.Sink(events, out_r, err_r)
    os.register_at_fork(after_in_child=sink.after_fork)
    sys.stdout = streams.TextStream(sink, "stdout", 1)
    sys.stderr = streams.TextStream(sink, "stderr", 2)
    streams.report_os_exit(events, sink, rel_path)
    displays = displays_out.Displays(sink, job["builder_dir"], job.get("display_limit", 5_000_000))
    notebook = bool(job.get("notebook"))
    if not notebook:  # a notebook's display() is IPython's own, publishing through its shell
        displays_out.hook_ipython_display(displays)
    _child["outputs.plotly_show"].hook_plotly(displays)

    lines = job["source"].splitlines(keepends=True)
    linecache.cache[rel_path] = (len(job["source"]), None, lines, rel_path)
    module = types.ModuleType("__main__")
    # (Jupyter gives a notebook no __file__; here its working folder is the run folder, so the
    # notebook's path is how it finds the files next to it, as a script does.)
    module.__file__ = script
    module.__builtins__ = builtins  # type: ignore[attr-defined]  # a module, as in python x.py
    sys.modules["__main__"] = module
    # A kernel's path starts with "" (the working folder: files a cell wrote import, as after
    # %%writefile); the notebook's folder comes next, where its helper modules are.
    sys.path[:0] = ["", os.path.dirname(script)] if notebook else [os.path.dirname(script)]
    sys.argv = [script]
    ns = module.__dict__
    figures.thumbnail_of(job.get("thumbnail_number"))
    shell = shell_module.NotebookShell(module, rel_path, paths, displays, job["ipython_dir"], job["builder_dir"],
                                       job.get("figure_scale", 2.0), job.get("animations")) if notebook else None
    if environment.PRELOADED:
        environment.track_preloaded_imports()
    audit = files.ReadAudit()
    preloaded = files.modules_mark()

    expressions = job.get("expressions", [])

    def evaluate_at(place: int | None) -> None:
        """Evaluate the prose's expressions whose place is after block ``place`` (None: the run)."""
        scale = job.get("figure_scale", 2.0)
        found = [quoted.evaluate(e, ns, lambda value, text: displays.picture(value, text, scale))
                 for e in expressions if e["after"] == place]
        if found:
            events.send([protocol.QuotedEvent(event=Event.QUOTED, values=found)])

    flags = 0
    # CPU spent on names outside the blocks (the parent adds each block's); on Python 3.12+
    # the call watching's callbacks run inside the blocks and are counted with the demo
    run_resolving = time.thread_time()
    resolver = api_names.NameResolver()
    resolver.watch_calls(rel_path)  # the script's code is compiled under that name (cells.compile_cell)
    run_resolving = time.thread_time() - run_resolving
    evaluate_at(-1)  # prose above the first block
    for index, cell in enumerate(job["blocks"]):
        # "t": when it started (the system-wide monotonic clock), so a parent that reads the
        # event late, a loaded machine's timeout say, still knows how long the block ran.
        events.send([protocol.StartEvent(event=Event.START, i=index, block=cell["name"], t=time.monotonic())])
        before = files.snapshot(files_dir)
        sink.begin(index)
        displays.begin(index, cell["name"])
        audit.on = True
        # CPU spent resolving names (this copy and block_names), for the parent's debug line
        resolving = time.thread_time()
        before_ns = dict(ns)
        resolving = time.thread_time() - resolving
        t0 = time.perf_counter()
        if shell is not None:
            ran = shell.run_cell(cell)
        else:
            ran, flags = cells.run_cell(cell, ns, rel_path, paths, flags, displays.value)
        stop = ran.stop
        if stop or index == len(job["blocks"]) - 1:
            files.flush_demo_files(ns)  # the script has ended
        duration = time.perf_counter() - t0
        audit.on = False
        resolving -= time.thread_time()
        if shell is None:
            names = resolver.block_names(cell, before_ns, ns)
        else:
            names = shell.block_names(resolver, cell, before_ns)
        resolving += time.thread_time()
        if shell is None:
            artifacts = figures.save_figures(cell["name"], job["builder_dir"], job.get("figure_scale", 2.0), ns,
                                             job.get("animations"))
        else:
            artifacts = shell.cell_figures()
        artifacts += files.file_artifacts(before, files.snapshot(files_dir), files_dir)
        sink.finish()
        evaluate_at(index)  # while the block is open: an image a value gives is one of its files
        if stop or index == len(job["blocks"]) - 1:
            evaluate_at(None)  # the docstring's prose and the exported names: after the whole run
        artifacts += displays.end()
        events.send([protocol.EndEvent(event=Event.END, i=index, block=cell["name"], status=ran.outcome,
                                       duration=duration, error=ran.error, artifacts=artifacts,
                                       value=ran.value, names=names, names_cpu=resolving)])
        if stop:
            break
    if not job["blocks"]:
        evaluate_at(None)
    run_resolving -= time.thread_time()
    parameters = resolver.parameter_names()  # known only now the script has ended
    run_resolving += time.thread_time()
    if shell is not None:
        shell.close()
    sink.stop()
    process.kill_descendants(os.getpid())  # no process the demo started outlives it
    # The script's namespace and those of project modules it imported (demos/_shared.py).
    imported = files.modules_since(preloaded)
    namespaces = [ns] + [vars(m) for m in imported
                         if isinstance(getattr(m, "__file__", None), str)
                         and paths.project_rel(m.__file__)]
    events.send([protocol.DoneEvent(event=Event.DONE, environment=environment.environment_of(namespaces),
                                    reads=files.reads(audit, paths, imported), parameter_names=parameters,
                                    names_cpu=run_resolving, cpu=time.process_time())])


if __name__ == "__main__":
    main(sys.argv)
