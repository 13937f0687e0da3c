"""Child side of the execute stage: run one demo's blocks and report each on a pipe.

Started by ``site_builder.run.execute`` as ``python -P runner.py JOB_FD EVENTS_FD`` (or forked
from ``fork_server.py``, which calls ``main`` the same way); JOB_FD holds the job's JSON.
Standard library only, and it must not import site_builder: the demo gets the
``sys.path`` that ``python demos/x.py`` would give it.  Events are JSON lines on
EVENTS_FD: ``start``/``out``/``end`` per block, then ``done`` (or ``internal-error``).
"""

from __future__ import annotations

import __future__
import ast
import builtins
import codecs
import faulthandler
import io
import json
import linecache
import os
import platform
import re
import select
import signal
import sys
import threading
import time
import traceback
import types
from typing import Any

BUILDER_DIR = "_site_builder"  # same as site_builder.run.execute.BUILDER_DIR
BUILDER_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # site_builder/
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp")
FUTURE_FLAGS = 0
for _name in __future__.all_feature_names:
    FUTURE_FLAGS |= getattr(__future__, _name).compiler_flag
_REAL_EXIT = os._exit  # the demo's os._exit is wrapped (see _report_os_exit)
# Top-level packages the fork server imported before forking (set by fork_server.py), and
# those of them the demo imported: only those count as imported, as in a fresh interpreter.
PRELOADED: frozenset[str] = frozenset()
PRELOADED_USED: set[str] = set()
KNOWN_VERSIONS: dict[str, str] = {}  # top-level package -> version, found once by the fork server
MAX_EVENT_TEXT = 1 << 20  # split huge writes so no single JSON line is enormous
BURST = 50  # writes per 10 ms beyond which output is batched


class Events:
    """Writes JSON lines to the parent; silent in forked children of the demo."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.pid = os.getpid()

    def send(self, objs: list[dict[str, Any]]) -> None:
        if os.getpid() != self.pid or not objs:
            return
        text = "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs)
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates from a demo's str
            data = text.encode("utf-8", "replace")
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.fd, view):]
        except OSError:
            _REAL_EXIT(75)  # the parent is gone: nobody wants our results


class Sink:
    """Collects one block's output from Python-level writes and from the fd 1/2 pipes.

    Python-level writes are recorded directly, after draining whatever is already in
    the fd pipes, so their order is exact; a thread drains the pipes continuously so
    a writer (C code, child processes) never blocks on a full pipe.
    """

    def __init__(self, events: Events, out_fd: int, err_fd: int) -> None:
        self.events = events
        self.lock = threading.Lock()
        self.fds = {out_fd: "stdout", err_fd: "stderr"}
        self.raw_fds = {"stdout": 1, "stderr": 2}
        self.decoders = {
            s: codecs.getincrementaldecoder("utf-8")("replace") for s in ("stdout", "stderr")
        }
        self.poller = select.poll()  # used under the lock
        self.pump_poller = select.poll()  # the drain thread's own (poll objects are not shared)
        for fd in self.fds:
            os.set_blocking(fd, False)
            self.poller.register(fd, select.POLLIN)
            self.pump_poller.register(fd, select.POLLIN)
        self.block: int | None = None
        self.pending: list[list[Any]] = []  # [stream, [texts]]
        self.pending_size = 0
        self.window = 0
        self.writes = 0
        self.busy = False  # the previous 10 ms window was a print loop too
        self.forked = False
        self.stopped = False
        self.thread = threading.Thread(target=self._pump, name="site_builder-capture", daemon=True)
        self.thread.start()

    def write(self, stream: str, text: str) -> None:
        if self.forked:  # a fork of the demo: plain fd writes, the runner is not there
            os.write(self.raw_fds[stream], text.encode("utf-8", "replace"))
            return
        window = int(time.perf_counter() * 100)
        with self.lock:
            if window != self.window:
                # A print loop stays batched across windows, or every new window would
                # pay BURST unbatched writes again (a third of the time of a long loop).
                self.busy = self.writes > BURST and window - self.window == 1
                self.window, self.writes = window, 0
            self.writes += 1
            # Up to BURST writes per 10 ms window each poll the pipes and go straight to
            # the parent (exact order; a crash right after loses nothing).  Beyond that
            # it is a print loop: batch, for throughput, and let the pump thread flush.
            if self.busy or self.writes > BURST:
                if not self.writes & 255:
                    self._drain()
                pending = self.pending
                if pending and pending[-1][0] == stream:
                    pending[-1][1].append(text)
                else:
                    pending.append([stream, [text]])
                self.pending_size += len(text)
                if self.pending_size > 65536:
                    self._flush()
                return
            self._drain()
            self._add(stream, text)
            self._flush()

    def flush(self) -> None:
        if self.forked or self.busy or self.writes > BURST:
            return
        with self.lock:
            self._drain()
            self._flush()

    def begin(self, index: int) -> None:
        with self.lock:
            self.block = index
            self.writes = 0
            self.busy = False

    def finish(self) -> None:
        """End the current block: everything written so far is sent before returning."""
        _fflush_libc()
        with self.lock:
            self._drain()
            self._flush()
            self.block = None

    def stop(self) -> None:
        self.stopped = True

    def after_fork(self) -> None:
        """In a fork of the demo (multiprocessing): plain line-buffered fd 1/2 writes."""
        self.forked = True
        self.lock = threading.Lock()
        for name, fd in (("stdout", 1), ("stderr", 2)):
            if isinstance(getattr(sys, name), TextStream):
                setattr(sys, name, io.TextIOWrapper(io.FileIO(fd, "w", closefd=False),
                                                    encoding="utf-8", errors="replace",
                                                    line_buffering=True))

    def _pump(self) -> None:
        # This thread also watches for the builder's death (one thread fewer to start:
        # thread start-up is a visible part of a small demo's run).
        parent, ticks = os.getppid(), 0
        while not self.stopped:
            ready = self.pump_poller.poll(10)
            with self.lock:
                if ready:
                    self._drain()
                if self.pending:
                    self._flush()
            ticks += 1
            if not ticks % 20:
                _exit_if_orphaned(parent)
        while True:  # the wrap-up (environment, reads) may still take a moment
            time.sleep(0.2)
            _exit_if_orphaned(parent)

    def _drain(self) -> None:
        for fd, _event in self.poller.poll(0):
            stream = self.fds[fd]
            while True:
                try:
                    data = os.read(fd, 65536)
                except (BlockingIOError, InterruptedError):
                    break
                if not data:
                    break
                text = self.decoders[stream].decode(data)
                if text:
                    self._add(stream, text)
                if len(data) < 65536:
                    break

    def _add(self, stream: str, text: str) -> None:
        if self.pending and self.pending[-1][0] == stream:
            self.pending[-1][1].append(text)
        else:
            self.pending.append([stream, [text]])
        self.pending_size += len(text)

    def _flush(self) -> None:
        if self.block is None:
            # Between blocks: keep it for the next block, unless something floods.
            if self.pending_size > (1 << 20):
                self.pending, self.pending_size = [], 0
            return
        objs = []
        for stream, texts in self.pending:
            text = "".join(texts)
            for i in range(0, len(text), MAX_EVENT_TEXT):
                objs.append({"event": "out", "i": self.block, "stream": stream,
                             "text": text[i:i + MAX_EVENT_TEXT]})
        self.pending, self.pending_size = [], 0
        self.events.send(objs)


class TextStream(io.TextIOBase):
    """Stands in for sys.stdout / sys.stderr: records writes into the sink."""

    encoding = "utf-8"
    errors = "replace"
    newlines = None
    line_buffering = True

    def __init__(self, sink: Sink, stream: str, fd: int) -> None:
        super().__init__()
        self._sink, self._stream, self._fd = sink, stream, fd
        self.name = f"<{stream}>"
        self.buffer = BinaryStream(self)

    def reconfigure(self, **_options: Any) -> None:
        pass  # demos often ask for UTF-8 or line buffering: that is what they already get

    def write(self, s: str) -> int:
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        if s:
            self._sink.write(self._stream, s)
        return len(s)

    def writable(self) -> bool:
        return True

    def flush(self) -> None:
        self._sink.flush()

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return False

    def close(self) -> None:
        pass  # a demo closing sys.stdout must not break the capture of later blocks


class BinaryStream(io.RawIOBase):
    """``sys.stdout.buffer``: bytes written through it are decoded like fd output."""

    def __init__(self, text: TextStream) -> None:
        super().__init__()
        self._text = text
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def write(self, b: Any) -> int:
        data = bytes(b)
        self._text.write(self._decoder.decode(data))
        return len(data)

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._text.fileno()

    def close(self) -> None:
        pass


def _fflush_libc() -> None:
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except Exception:
        pass


class Paths:
    """Decides which paths count as project files (for reads and tracebacks)."""

    def __init__(self, project_root: str, files_dir: str) -> None:
        self.root = os.path.realpath(project_root)
        self.files_dir = os.path.realpath(files_dir)
        outside = {sys.prefix, sys.base_prefix, sys.exec_prefix}
        outside |= {p for p in sys.path if "site-packages" in p or "dist-packages" in p}
        # The builder itself (run_cell's frame): it may sit inside the project (a checkout of
        # the builder building its own demos) and must never show in a demo's traceback.
        outside.add(BUILDER_PACKAGE)
        self.outside = [cached_realpath(p) for p in outside if p]

    def project_rel(self, path: str) -> str | None:
        real = cached_realpath(path)
        if not _inside(real, self.root) or _inside(real, self.files_dir):
            return None
        if any(_inside(real, p) for p in self.outside):
            return None
        rel = os.path.relpath(real, self.root).replace(os.sep, "/")
        return None if "__pycache__" in rel.split("/") else rel


_REALPATHS: dict[str, str] = {}


def cached_realpath(path: str) -> str:
    """``os.path.realpath``, remembered: every module file is resolved twice per run.

    The fork server fills it for the modules it has loaded (see ``warm_realpaths``), so
    its children resolve only what their demo imported.
    """
    real = _REALPATHS.get(path)
    if real is None:
        real = _REALPATHS[path] = os.path.realpath(path)
    return real


def warm_realpaths() -> None:
    """Resolve the files of every module loaded so far, and the folders Paths looks at."""
    for p in [sys.prefix, sys.base_prefix, sys.exec_prefix, *sys.path]:
        cached_realpath(p)
    for module in list(sys.modules.values()):
        f = getattr(module, "__file__", None)
        if isinstance(f, str):
            cached_realpath(os.path.abspath(f))


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


class ReadAudit:
    """Records files opened for reading, via an audit hook (it cannot be removed)."""

    def __init__(self) -> None:
        self.on = False
        self.opened: set[str] = set()
        sys.addaudithook(self._hook)

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if event != "open" or not self.on:
            return
        try:
            path, mode, flags = args
            if isinstance(path, int) or path is None:
                return
            if mode is not None:
                reading = "r" in mode
            else:
                reading = (flags & os.O_ACCMODE) != os.O_WRONLY and not flags & os.O_TRUNC
            if reading:
                self.opened.add(os.path.abspath(os.fsdecode(path)))
        except Exception:
            pass  # an audit hook must never break the demo


def describe_error(exc: BaseException, rel_path: str, paths: Paths) -> dict[str, Any]:
    """Type, first message line, innermost script line and script-only traceback of ``exc``."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == rel_path:
            line = tb.tb_lineno
        tb = tb.tb_next
    if line is None and isinstance(exc, SyntaxError) and exc.filename == rel_path:
        line = exc.lineno
    try:
        message = exc.msg if isinstance(exc, SyntaxError) else str(exc)
        te = traceback.TracebackException(type(exc), exc, exc.__traceback__, compact=True)
        _keep_script_frames(te, rel_path, paths, set())
        text = "".join(te.format())
    except Exception as bad:  # a demo's exception whose __str__ itself fails
        message, text = f"<unprintable: {type(bad).__name__}>", ""
    lines = str(message or "").strip().splitlines()
    return {"type": type(exc).__name__, "message": lines[0] if lines else "",
            "line": line, "traceback": text}


def _keep_script_frames(te: Any, rel_path: str, paths: Paths, seen: set[int]) -> None:
    # The runner's own frames (and library internals) are noise to a reader of the demo.
    if te is None or id(te) in seen:
        return
    seen.add(id(te))
    keep = [f for f in te.stack
            if f.filename == rel_path or (os.path.isabs(f.filename) and paths.project_rel(f.filename))]
    te.stack = traceback.StackSummary.from_list(keep)
    _keep_script_frames(te.__cause__, rel_path, paths, seen)
    _keep_script_frames(te.__context__, rel_path, paths, seen)
    for sub in getattr(te, "exceptions", None) or ():
        _keep_script_frames(sub, rel_path, paths, seen)


# A repr that says only "an object lives here" tells a reader nothing (Matplotlib's
# `<matplotlib.colorbar.Colorbar object at 0x7f...>`): such values are not shown.
_DEFAULT_REPR = re.compile(r"<[^\n]* at 0x[0-9a-fA-F]+>")
VALUE_TEXT_LIMIT = 20_000  # characters of a value's repr kept
VALUE_HTML_LIMIT = 200_000  # characters of a value's _repr_html_ kept; longer: the repr instead
HIDE_VALUE_TAG = "hide-value"


def _noise(value: Any, text: str) -> bool:
    """True for None, a default repr, a list/tuple of only such values (e.g. ``plt.plot``'s),
    or any repr naming a memory address: it differs on every run, so ``check`` would call it drift."""
    if value is None or _DEFAULT_REPR.fullmatch(text) or _DEFAULT_REPR.search(text):
        return True
    if type(value) in (list, tuple) and 0 < len(value) <= 1000:
        try:
            return all(_DEFAULT_REPR.fullmatch(repr(v)) for v in value)
        except Exception:
            return False
    return False


def real_method(value: Any, name: str) -> Any:
    """``value``'s bound method ``name`` as IPython finds it (a property may return it, as
    scikit-learn's ``_repr_html_`` does), or None: never on a class, nor on an object that
    answers every attribute (IPython's canary)."""
    try:
        if getattr(value, "_ipython_canary_method_should_not_exist_", None) is not None:
            return None
        method = getattr(value, name, None)
    except Exception:
        return None
    if isinstance(value, type) and not isinstance(method, types.MethodType):
        return None
    return method if callable(method) else None


def describe_value(value: Any) -> dict[str, str] | None:
    """What a block's last expression evaluated to, as Jupyter shows it (repr, _repr_html_), or None."""
    if value is None:
        return None
    try:
        text = repr(value)
    except Exception:
        return None
    if not isinstance(text, str):
        return None
    html = None
    html_method = real_method(value, "_repr_html_")
    if html_method is not None:
        try:
            html = html_method()
        except Exception:
            html = None
    if not (isinstance(html, str) and html.strip() and len(html) <= VALUE_HTML_LIMIT):
        html = None
        if _noise(value, text):  # an object with an HTML view is worth showing whatever its repr
            return None
    if len(text) > VALUE_TEXT_LIMIT:
        text = text[:VALUE_TEXT_LIMIT] + "\n…"
    return {"text": text, "html": html} if html else {"text": text}


def _compile_cell(source: str, rel_path: str, flags: int, with_value: bool) -> tuple[Any, Any]:
    """(statements, last expression or None): the last expression is compiled apart, as IPython does."""
    if not with_value:
        return compile(source, rel_path, "exec", flags=flags, dont_inherit=True), None
    tree = compile(source, rel_path, "exec", flags=flags | ast.PyCF_ONLY_AST, dont_inherit=True)
    last = tree.body[-1] if tree.body else None
    # A bare string is a docstring or a comment in a script (Sphinx-Gallery's text blocks), not a result.
    is_text = isinstance(last, ast.Expr) and isinstance(last.value, ast.Constant) and isinstance(last.value.value, str)
    if not isinstance(last, ast.Expr) or is_text:
        return compile(tree, rel_path, "exec", flags=flags, dont_inherit=True), None
    body = ast.Module(body=tree.body[:-1], type_ignores=tree.type_ignores)
    expression = ast.Expression(body=last.value)
    return (compile(body, rel_path, "exec", flags=flags, dont_inherit=True),
            compile(expression, rel_path, "eval", flags=flags, dont_inherit=True))


def run_cell(cell: dict[str, Any], ns: dict[str, Any], rel_path: str, paths: Paths,
             flags: int) -> tuple[str, dict[str, Any] | None, bool, int, dict[str, str] | None]:
    """Run one cell; return (status, error, stop, future flags for later cells, its value or None)."""
    source = "\n" * (cell["first_line"] - 1) + cell["text"] + "\n"
    shown = None
    try:
        with_value = HIDE_VALUE_TAG not in cell["tags"]
        code, expression = _compile_cell(source, rel_path, flags, with_value)
        flags |= code.co_flags & FUTURE_FLAGS  # `from __future__` in setup covers later cells
        exec(code, ns)
        if expression is not None:
            shown = describe_value(eval(expression, ns))
    except SystemExit as exc:
        status = exc.code
        err = describe_error(exc, rel_path, paths)
        if status is None or status is False or status == 0:
            # A clean end of the script: not a failure, but the page says where it ended.
            err["message"] = f"sys.exit({status!r})" if status is not None else "sys.exit()"
            err["traceback"] = ""
            return "ok", err, True, flags, None
        if isinstance(status, int):
            err["message"] = f"exit status {status}"
        else:
            sys.stderr.write(f"{status}\n")  # as the interpreter would print it
            first = str(status).strip().splitlines()
            err["message"] = "exit status 1" + (f": {first[0]}" if first else "")
        return "exited", err, True, flags, None
    except BaseException as exc:
        err = describe_error(exc, rel_path, paths)
        if "raises-exception" in cell["tags"]:
            return "expected-error", err, False, flags, None
        return "error", err, True, flags, None
    return "ok", None, False, flags, shown


def snapshot(root: str) -> dict[str, tuple[int, int]]:
    """relpath -> (size, mtime_ns) of every file under ``root`` except BUILDER_DIR."""
    found: dict[str, tuple[int, int]] = {}
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for e in entries:
            if folder == root and e.name == BUILDER_DIR:
                continue
            try:
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                elif e.is_file(follow_symlinks=False):  # a symlink could publish any file
                    st = e.stat()
                    rel = os.path.relpath(e.path, root).replace(os.sep, "/")
                    found[rel] = (st.st_size, st.st_mtime_ns)
            except OSError:
                continue
    return found


def png_size(path: str) -> tuple[int, int] | None:
    try:
        with open(path, "rb") as f:
            head = f.read(24)
    except OSError:
        return None
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def file_artifacts(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]],
                   files_dir: str) -> list[dict[str, Any]]:
    arts = []
    for rel in sorted(after):
        if before.get(rel) == after[rel]:
            continue
        is_image = rel.lower().endswith(IMAGE_SUFFIXES)
        size = png_size(os.path.join(files_dir, rel)) if rel.lower().endswith(".png") else None
        arts.append({"path": rel, "kind": "image" if is_image else "file", "size": after[rel][0],
                     "alt": "", "width": size[0] if size else None,
                     "height": size[1] if size else None})
    return arts


def save_figures(block: str, builder_dir: str, scale: float = 2.0) -> list[dict[str, Any]]:
    """Save every open Matplotlib figure as a PNG artifact (``scale`` pixels per CSS pixel),
    then close them all.

    ``builder_dir`` is the builder's own folder, outside the demo's working folder: the
    builder moves it to BUILDER_DIR of the run's folder once the demo is dead.
    """
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return []
    arts = []
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", block)  # as execute._safe_name
    for k, num in enumerate(plt.get_fignums(), start=1):
        rel = f"{BUILDER_DIR}/{safe}-figure-{k}.png"
        path = os.path.join(builder_dir, f"{safe}-figure-{k}.png")
        try:
            fig = plt.figure(num)
            save_png(fig, path, scale * fig.dpi)
            size = png_size(path)
            arts.append({"path": rel, "kind": "figure", "size": os.path.getsize(path),
                         "alt": figure_alt(fig), "width": round(size[0] / scale) if size else None,
                         "height": round(size[1] / scale) if size else None})
        except Exception as exc:
            sys.stderr.write(f"site_builder: could not save figure {num}: {type(exc).__name__}: {exc}\n")
    plt.close("all")
    return arts


class _Pixels:
    """A file for ``savefig(format="rgba")``: keeps the buffer Agg writes, which knows its shape."""

    buffer: Any = None

    def write(self, data: Any) -> int:
        self.buffer = data if self.buffer is None else None  # more than one write: not the buffer
        return len(data)

    def seek(self, offset: int, whence: int = 0) -> int:  # Matplotlib takes only seekable files
        return 0


def save_png(fig: Any, path: str, dpi: float) -> None:
    """Save ``fig`` as the PNG ``savefig`` would, without an alpha channel when it is opaque.

    An opaque figure (most are) then takes a quarter less to compress and to download.
    Backends that write no shaped buffer get ``savefig``'s own PNG.
    """
    image_module = sys.modules.get("PIL.Image")  # matplotlib.image imports Pillow
    pixels = _Pixels()
    shape = None
    if image_module is not None:
        fig.savefig(pixels, format="rgba", dpi=dpi)  # the same drawing (bbox, facecolor) as png
        shape = getattr(pixels.buffer, "shape", None)
    if shape is None or len(shape) != 3 or shape[2] != 4:
        fig.savefig(path, format="png", dpi=dpi, metadata={"Software": None})
        return
    image = image_module.frombuffer("RGBA", (shape[1], shape[0]), pixels.buffer, "raw", "RGBA", 0, 1)
    if image.getchannel("A").getextrema() == (255, 255):
        image = image.convert("RGB")
    image.save(path, format="png", dpi=(dpi, dpi))


def figure_alt(fig: Any) -> str:
    parts = []
    suptitle = getattr(fig, "_suptitle", None)
    if suptitle is not None and suptitle.get_text():
        parts.append(suptitle.get_text())
    for ax in fig.axes:
        for loc in ("left", "center", "right"):
            parts.append(ax.get_title(loc=loc))
        parts += [ax.get_xlabel(), ax.get_ylabel()]
    return "; ".join(p.strip() for p in parts if p and p.strip())


def environment(namespaces: list[dict[str, Any]]) -> dict[str, str]:
    """Python, platform, the third-party packages the demo's code imported, numpy's BLAS."""
    env = {"python": platform.python_version(), "platform": platform.platform()}
    try:
        tops = sorted(imported_packages(namespaces))
        if tops:  # a stdlib-only demo skips importlib.metadata altogether
            env.update(_versions(tops))
    except Exception:
        pass
    numpy = sys.modules.get("numpy")
    if numpy is not None and ("numpy" not in PRELOADED or "numpy" in PRELOADED_USED):
        try:
            blas = numpy.show_config(mode="dicts")["Build Dependencies"]["blas"]
            env["blas"] = f"{blas.get('name', '')} {blas.get('version', '')}".strip()
        except Exception:
            pass
    return env


def _versions(tops: list[str]) -> dict[str, str]:
    """Distribution name -> version for the given top-level packages.

    Most distributions are named like their package (numpy, matplotlib) and are looked up
    directly; only the others need ``packages_distributions()``, which scans every
    installed distribution (about 0.1-0.5 s, more than a small demo's whole run).
    """
    from importlib import metadata

    found: dict[str, str] = {}
    unnamed = []
    for top in tops:
        if top in KNOWN_VERSIONS:  # each lookup scans the import path: ~0.1 s
            found[top] = KNOWN_VERSIONS[top]
            continue
        try:
            found[top] = metadata.version(top)
        except Exception:
            unnamed.append(top)
    if unnamed:
        dists = metadata.packages_distributions()
        for top in unnamed:
            for dist in dists.get(top, ()):
                try:
                    found[dist] = metadata.version(dist)
                except Exception:
                    pass
    return found


def imported_packages(namespaces: list[dict[str, Any]]) -> set[str]:
    """Top-level non-stdlib packages bound in the demo's namespaces (``import numpy as np``,
    ``from scipy import stats``); what those packages import in turn is left out."""
    tops = set()
    for ns in namespaces:
        for value in list(ns.values()):
            try:
                if isinstance(value, types.ModuleType):
                    name = value.__name__
                else:
                    name = getattr(value, "__module__", None)
            except Exception:  # lazy proxies and other odd objects
                continue
            if isinstance(name, str):
                tops.add(name.partition(".")[0])
    return {t for t in tops if t and not t.startswith("_") and t not in sys.stdlib_module_names
            and t != "builtins"}


def track_preloaded_imports() -> None:
    """Note each import statement (the demo's, or a module's it loads) naming a preloaded package."""
    real = builtins.__import__

    def __import__(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (),  # noqa: A002
                   level: int = 0) -> Any:
        if level == 0 and (top := name.partition(".")[0]) in PRELOADED:
            PRELOADED_USED.add(top)
        return real(name, globals, locals, fromlist, level)

    builtins.__import__ = __import__


def modules_since(preloaded: dict[str, Any]) -> list[types.ModuleType]:
    """Modules imported since ``preloaded`` (a copy of sys.modules) was taken, ``__main__`` aside.

    What the interpreter loaded before the demo started (the standard library, site) is
    never a project file, and looking each of them up again costs a small demo's run time.
    """
    main = sys.modules.get("__main__")
    return [m for name, m in list(sys.modules.items())
            if preloaded.get(name) is not m and m is not main]


def reads(audit: ReadAudit, paths: Paths, modules: list[types.ModuleType]) -> list[str]:
    """Project-relative paths of files read and of the project ``modules`` imported.

    The script itself is listed only when the demo opened it (``open(__file__)``,
    ``inspect.getsource``): then its exact text, comments included, shapes the output.
    """
    found = set(audit.opened)
    for module in modules:
        f = getattr(module, "__file__", None)
        if isinstance(f, str):
            found.add(os.path.abspath(f))
    rels = {paths.project_rel(p) for p in found if os.path.isfile(p)}
    return sorted(r for r in rels if r)


def main(argv: list[str]) -> None:
    with open(int(argv[1]), encoding="utf-8") as f:  # closes it: the demo must not inherit it
        job = json.load(f)
    events = Events(int(argv[2]))
    become_subreaper()
    os.set_inheritable(events.fd, False)  # grandchildren must not keep the pipe open
    saved_err = os.dup(2)  # the runner's own stderr (a file the parent reads)
    faulthandler.enable(file=saved_err)  # a segfault's traceback: the parent finds the line
    try:
        _run(job, events)
    except BaseException:
        tb = traceback.format_exc()
        os.write(saved_err, tb.encode("utf-8", "replace"))
        events.send([{"event": "internal-error", "traceback": tb}])
        _REAL_EXIT(70)
    _REAL_EXIT(0)  # skip interpreter shutdown: demo threads or atexit hooks must not hang us


def _exit_if_orphaned(parent: int) -> None:
    """Kill the demo's whole process tree when the builder (or fork server) has died:
    after a SIGKILL there is nobody else to do it."""
    if os.getppid() != parent:
        kill_descendants(os.getpid())
        os.killpg(0, signal.SIGKILL)  # the runner leads its own session and group


# ---- the demo's process tree ----------------------------------------------------------
# A process group is not enough to find a demo's processes: a child may start its own
# session (start_new_session=True, a daemon's double fork).  On Linux the runner becomes a
# child subreaper, so the orphans of its tree are re-parented to it rather than to init, and
# /proc lists every process below it.  Elsewhere only the group is killed.

_PR_SET_CHILD_SUBREAPER = 36  # from <linux/prctl.h>


def become_subreaper() -> bool:
    """Adopt the orphans of this process's descendants (Linux); False where that is not possible."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def live_children(pid: int) -> list[int]:
    """The child processes of ``pid`` that have not exited (from /proc; [] where there is none)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:  # an adopted orphan is the child of whichever thread adopted it
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                found += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            continue
    return [c for c in found if not _exited(c)]


def _exited(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return True
    return stat[stat.rfind(b")") + 2:][:1] in (b"Z", b"X")  # a zombie: dead, not yet reaped


def kill_descendants(pid: int, patience: float = 5.0) -> None:
    """SIGKILL every process below ``pid`` (which lives on), until none is left or ``patience`` s passed.

    ``pid`` should be a subreaper: then the children of a killed process come back to it.
    """
    deadline, pause = time.monotonic() + patience, 0.0005
    while True:
        found, stack = [], [pid]
        while stack:
            for child in live_children(stack.pop()):
                found.append(child)
                stack.append(child)
        if not found:
            return
        for child in found:
            try:
                os.kill(child, signal.SIGKILL)
            except OSError:
                pass
        if time.monotonic() > deadline:
            return
        time.sleep(pause)  # a killed process takes a moment to become a zombie
        pause = min(2 * pause, 0.05)


def kill_tree(pid: int) -> None:
    """SIGKILL the runner ``pid``, its process group and every process below it, detached ones too."""
    for kill in (os.kill, os.killpg):
        try:
            kill(pid, signal.SIGSTOP)  # frozen, the runner and its group start nothing new
        except OSError:
            pass
    kill_descendants(pid)
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except OSError:
            pass


def flush_demo_files(namespace: dict[str, Any]) -> None:
    """Flush what interpreter shutdown would (the runner skips it): a ``sys.stdout`` or
    ``sys.stderr`` the demo replaced (``sys.stdout = open("log.txt", "w")``) and files its
    globals hold open, so what it wrote is on disk before its files are listed."""
    for stream in [sys.stdout, sys.stderr, *list(namespace.values())]:
        if isinstance(stream, io.IOBase) and not isinstance(stream, (TextStream, BinaryStream)):
            try:
                if not stream.closed:
                    stream.flush()
            except Exception:
                pass  # a demo's broken stream: shutdown would have ignored it too


def report_os_exit(events: Events, sink: Sink, rel_path: str) -> None:
    """Wrap ``os._exit`` so a demo that calls it keeps its output and the page names the line."""

    def _exit(status: int) -> None:
        if os.getpid() == events.pid:  # forks of the demo (multiprocessing) exit as usual
            frame = sys._getframe(1)
            while frame is not None and frame.f_code.co_filename != rel_path:
                frame = frame.f_back
            try:
                sink.finish()
                events.send([{"event": "os-exit", "status": status,
                              "line": frame.f_lineno if frame is not None else None}])
                kill_descendants(os.getpid())
            except Exception:
                pass
        _REAL_EXIT(status)

    os._exit = _exit  # type: ignore[assignment]


def _run(job: dict[str, Any], events: Events) -> None:
    script, rel_path, files_dir = job["script"], job["rel_path"], job["files_dir"]
    paths = Paths(job["project_root"], files_dir)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    os.dup2(out_w, 1)  # dup2 makes 1/2 inheritable: child processes write into the pipes
    os.dup2(err_w, 2)
    os.close(out_w)
    os.close(err_w)
    sink = Sink(events, out_r, err_r)
    os.register_at_fork(after_in_child=sink.after_fork)
    sys.stdout = TextStream(sink, "stdout", 1)
    sys.stderr = TextStream(sink, "stderr", 2)
    report_os_exit(events, sink, rel_path)

    lines = job["source"].splitlines(keepends=True)
    linecache.cache[rel_path] = (len(job["source"]), None, lines, rel_path)
    module = types.ModuleType("__main__")
    module.__file__ = script
    module.__builtins__ = builtins  # type: ignore[attr-defined]  # a module, as in python x.py
    sys.modules["__main__"] = module
    sys.path.insert(0, os.path.dirname(script))
    sys.argv = [script]
    ns = module.__dict__
    if PRELOADED:
        track_preloaded_imports()
    audit = ReadAudit()
    preloaded = dict(sys.modules)

    flags = 0
    for index, cell in enumerate(job["blocks"]):
        events.send([{"event": "start", "i": index, "block": cell["name"]}])
        before = snapshot(files_dir)
        sink.begin(index)
        audit.on = True
        t0 = time.perf_counter()
        status, error, stop, flags, value = run_cell(cell, ns, rel_path, paths, flags)
        if stop or index == len(job["blocks"]) - 1:
            flush_demo_files(ns)  # the script has ended
        duration = time.perf_counter() - t0
        audit.on = False
        artifacts = save_figures(cell["name"], job["builder_dir"], job.get("figure_scale", 2.0))
        artifacts += file_artifacts(before, snapshot(files_dir), files_dir)
        sink.finish()
        events.send([{"event": "end", "i": index, "block": cell["name"], "status": status,
                      "duration": duration, "error": error, "artifacts": artifacts, "value": value}])
        if stop:
            break
    sink.stop()
    kill_descendants(os.getpid())  # no process the demo started outlives it
    # The script's namespace and those of project modules it imported (demos/_shared.py).
    imported = modules_since(preloaded)
    namespaces = [ns] + [vars(m) for m in imported
                         if isinstance(getattr(m, "__file__", None), str)
                         and paths.project_rel(m.__file__)]
    events.send([{"event": "done", "environment": environment(namespaces),
                  "reads": reads(audit, paths, imported)}])


if __name__ == "__main__":
    main(sys.argv)
