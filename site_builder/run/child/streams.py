"""Capture of the demo's output: the events pipe to the parent, the sink that orders
Python-level writes with what reaches fd 1/2, and the ``sys.stdout``/``sys.stderr`` stand-ins, and a demo's ``os._exit`` reported through them."""

from __future__ import annotations

import _thread
import codecs
import io
import json
import json.encoder
import os
import select
import sys
import time
from typing import Any

from .protocol import DisplayEvent, DisplayPayload, Event, OsExitEvent, OutEvent, RunnerEvent
from .process import REAL_EXIT, exit_if_orphaned, kill_descendants, libc

MAX_EVENT_TEXT = 1 << 20  # split huge writes so no single JSON line is enormous

BURST = 50  # writes per 10 ms beyond which output is batched


# json.dumps(obj, ensure_ascii=False) calls this C encoder with these arguments, after building a
# JSONEncoder and closures each time: Python code every child of the fork server ran afresh
_MAKE_ENCODER = json.encoder.c_make_encoder
_REFUSE = json.JSONEncoder().default  # what json.dumps does with a type it cannot encode


def event_json(obj: Any) -> str:
    """``json.dumps(obj, ensure_ascii=False)``'s text."""
    if _MAKE_ENCODER is None:
        return json.dumps(obj, ensure_ascii=False)
    encode = _MAKE_ENCODER({}, _REFUSE, json.encoder.encode_basestring, None, ": ", ", ", False, False, True)
    return "".join(encode(obj, 0))


class Events:
    """Writes JSON lines to the parent; silent in forked children of the demo."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.pid = os.getpid()

    def send(self, objs: list[RunnerEvent]) -> None:
        if os.getpid() != self.pid or not objs:
            return
        text = "".join(event_json(o) + "\n" for o in objs)
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates from a demo's str
            data = text.encode("utf-8", "replace")
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.fd, view):]
        except OSError:
            REAL_EXIT(75)  # the parent is gone: nobody wants our results


class Sink:
    """Collects one block's output from Python-level writes and from the fd 1/2 pipes.

    Python-level writes are recorded directly, after draining whatever is already in
    the fd pipes, so their order is exact; a thread drains the pipes continuously so
    a writer (C code, child processes) never blocks on a full pipe.
    """

    def __init__(self, events: Events, out_fd: int, err_fd: int) -> None:
        self.events = events
        # _thread's lock (the very type threading.Lock is): threading stays unimported, as under plain
        # python, and its after-fork hook does not run in each child of the fork server (~100 pages)
        self.lock = _thread.allocate_lock()
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
        # A bare thread, not a threading.Thread: the demo's threading.enumerate() lists only
        # its own threads, as under plain python, and starting it copies some 70 fewer of the
        # fork server's pages (a Thread's events, conditions and registries).
        # The parent is read here, not in the thread: one that first runs after the demo
        # killed its parent would take the new one for its own and never notice.
        _thread.start_new_thread(self._pump, (os.getppid(),))

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

    def display(self, record: DisplayPayload) -> None:
        """Send a display output of the current block, after everything written before it."""
        if self.forked or self.block is None:
            return
        fflush_libc()
        with self.lock:
            self._drain()
            self._flush()
            self.events.send([DisplayEvent(event=Event.DISPLAY, i=self.block, **record)])

    def begin(self, index: int) -> None:
        with self.lock:
            self.block = index
            self.writes = 0
            self.busy = False

    def finish(self) -> None:
        """End the current block: everything written so far is sent before returning."""
        fflush_libc()
        with self.lock:
            self._drain()
            self._flush()
            self.block = None

    def stop(self) -> None:
        self.stopped = True

    def after_fork(self) -> None:
        """In a fork of the demo (multiprocessing): plain line-buffered fd 1/2 writes."""
        self.forked = True
        self.lock = _thread.allocate_lock()
        for name, fd in (("stdout", 1), ("stderr", 2)):
            if isinstance(getattr(sys, name), TextStream):
                setattr(sys, name, io.TextIOWrapper(io.FileIO(fd, "w", closefd=False),
                                                    encoding="utf-8", errors="replace",
                                                    line_buffering=True))

    def _pump(self, parent: int) -> None:
        # This thread also watches for the builder's death (one thread fewer to start:
        # thread start-up is a visible part of a small demo's run).
        ticks = 0
        while not self.stopped:
            ready = self.pump_poller.poll(10)
            with self.lock:
                if ready:
                    self._drain()
                if self.pending:
                    self._flush()
            ticks += 1
            if not ticks % 20:
                exit_if_orphaned(parent)
        while True:  # the wrap-up (environment, reads) may still take a moment
            time.sleep(0.2)
            exit_if_orphaned(parent)

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
        objs: list[RunnerEvent] = []
        for stream, texts in self.pending:
            text = "".join(texts)
            for i in range(0, len(text), MAX_EVENT_TEXT):
                objs.append(OutEvent(event=Event.OUT, i=self.block, stream=stream, text=text[i:i + MAX_EVENT_TEXT]))
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


def fflush_libc() -> None:
    try:
        libc().fflush(None)
    except Exception:
        pass


def report_os_exit(events: Events, sink: Sink, rel_path: str) -> None:
    """Wrap ``os._exit`` so a demo that calls it keeps its output and the page names the line."""

    def _exit(status: int) -> None:
        if os.getpid() == events.pid:  # forks of the demo (multiprocessing) exit as usual
            frame = sys._getframe(1)
            while frame is not None and frame.f_code.co_filename != rel_path:
                frame = frame.f_back
            try:
                sink.finish()
                events.send([OsExitEvent(event=Event.OS_EXIT, status=status,
                                         line=frame.f_lineno if frame is not None else None)])
                kill_descendants(os.getpid())
            except Exception:
                pass
        REAL_EXIT(status)

    os._exit = _exit  # type: ignore[assignment]
