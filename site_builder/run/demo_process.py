"""Start the child process that runs one demo: forked from a warmed fork server, or spawned.

Both ways give the runner the same fresh process (own session and group, cwd, fds,
environment); forking skips the interpreter start-up, which dominates small demos.
``SITE_BUILDER_FORK_SERVER=0`` forces spawning (for debugging); so does a platform
without fork and fd passing, or a server that cannot start.  The server imports the
modules ``set_preload`` names before its first fork; it is replaced when the environment
or that set changes, and lives on between builds when the caller keeps it (``serve``).
"""

from __future__ import annotations

import atexit
import dataclasses
import itertools
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from collections.abc import Callable
from typing import Any, Protocol

from site_builder.run.preload import SERVER_BOOT, Preload, server_options
from site_builder.run.child.process import kill_now, kill_tree

log = logging.getLogger(__name__)

RUNNER = Path(__file__).with_name("runner.py")
FORK_SERVER = Path(__file__).with_name("fork_server.py")
ENV_SWITCH = "SITE_BUILDER_FORK_SERVER"


class DemoProcess(Protocol):
    """A running runner process: the few things ``execute`` needs of it."""

    pid: int

    def poll(self) -> int | None:
        """Its return code (negative: killed by that signal), or None while it runs."""

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait until it has exited (or ``timeout`` passed); its return code or None."""

    def kill_group(self) -> None:
        """SIGKILL it, its process group and every process below it (detached ones too, on Linux)."""

    def end(self) -> None:
        """After its ``done`` event (it is exiting): SIGKILL what is left of it, let it be reaped."""


class SpawnedProcess:
    """``python -P runner.py JOB_FD EVENTS_FD`` started with Popen."""

    def __init__(self, job_fd: int, cwd: Path, events_fd: int, stderr_fd: int,
                 env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            # -P: the runner's folder must not shadow the demo's imports
            [sys.executable, "-P", str(RUNNER), str(job_fd), str(events_fd)],
            cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr_fd,
            env=env, pass_fds=(job_fd, events_fd), start_new_session=True,
        )
        self.pid = self.proc.pid

    def poll(self) -> int | None:
        return self.proc.poll()

    def wait(self, timeout: float | None = None) -> int | None:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill_group(self) -> None:
        kill_tree(self.pid)

    def end(self) -> None:
        kill_tree(self.pid)  # what escaped its group has no fork server to adopt it
        self.proc.wait()  # quick: it has been killed


class ForkedProcess:
    """A child of the fork server; its exit status arrives as a message from the server."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self.exited = threading.Event()
        self.orphaned = False  # the server died first: watch the pid ourselves

    def poll(self) -> int | None:
        return self.wait(0)

    def wait(self, timeout: float | None = None) -> int | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        # In slices: the server may die while we wait, and then nobody would tell us.
        while not self.exited.wait(min(0.05, _remaining(deadline))):
            if self.orphaned and not _alive(self.pid):
                # Its runner kills itself when its parent goes (runner.watch_parent).
                self.returncode = -signal.SIGKILL
                self.exited.set()
            elif deadline is not None and time.monotonic() >= deadline:
                return None
        return self.returncode

    def kill_group(self) -> None:
        if not self.exited.is_set():  # after the exit the server killed the group itself
            kill_tree(self.pid)

    def end(self) -> None:
        # The server (a subreaper) adopts and kills what a demo thread started after the runner's own
        # kill: no look in /proc, whose entries cost the server's kernel ~0.4 ms a run to tidy.
        if not self.exited.is_set():  # the server reaps it: no need to wait for the message
            (kill_tree if self.orphaned else kill_now)(self.pid)


class ForkServer:
    """Client of one ``fork_server.py`` process, shared by the build's worker threads."""

    def __init__(self, env: dict[str, str], preload: Preload | None = None) -> None:
        self.env = env
        self.preload = preload
        self.ready = threading.Event()
        self.preloaded: dict[str, Any] = {}  # the server's "ready" message
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-P", "-c", SERVER_BOOT, str(FORK_SERVER), str(theirs.fileno()),
                 server_options(preload)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                env=env, pass_fds=(theirs.fileno(),), start_new_session=True,
            )
        finally:
            theirs.close()
        self.lock = threading.Lock()  # one request (and its reply) at a time
        self.ids = itertools.count(1)
        self.replies: dict[int, dict[str, Any]] = {}
        self.replied = threading.Condition(threading.Lock())
        self.children: dict[int, ForkedProcess] = {}
        self.alive = True
        self.started_any = False
        self.requests = 0  # sent, not yet answered
        self.reader = threading.Thread(target=self._read, name="fork-server-reader", daemon=True)
        self.reader.start()

    def start(self, job_fd: int, cwd: Path, events_fd: int, stderr_fd: int) -> ForkedProcess:
        """Fork a runner for the job in ``job_fd``; OSError when the server is gone or refused."""
        job_id = next(self.ids)
        message = json.dumps({"job": job_id, "cwd": str(cwd)})
        with self.replied:
            self.requests += 1
        try:
            with self.lock:
                socket.send_fds(self.sock, [message.encode("utf-8")], [job_fd, events_fd, stderr_fd])
            with self.replied:
                while job_id not in self.replies:
                    if not self.alive:
                        raise OSError("the fork server has exited")
                    self.replied.wait(1.0)
                reply = self.replies.pop(job_id)
        finally:
            with self.replied:
                self.requests -= 1
        if "process" not in reply:
            raise OSError(f"the fork server could not start the demo: {reply.get('error')}")
        return reply["process"]

    def wait_ready(self) -> bool:
        """Wait until its preloads are done; False when it exited without saying so."""
        while not self.ready.wait(0.05):
            if not self.alive:
                # A server that refused a preload sends "ready" and exits at once: the reader
                # may take both in between our timed-out wait and this check.
                return self.ready.is_set()
        return True

    def busy(self) -> bool:
        """Whether a demo it started (or is starting) may still run."""
        with self.replied:
            return self.alive and bool(self.requests or self.children)

    def _read(self) -> None:
        try:
            while True:
                data = self.sock.recv(1 << 16)
                if not data:
                    break
                self._handle(json.loads(data))
        except (OSError, ValueError):
            pass
        with self.replied:
            self.alive = False
            for child in self.children.values():
                child.orphaned = True
            self.replied.notify_all()

    def _handle(self, message: dict[str, Any]) -> None:
        if "ready" in message:
            self.preloaded = message["ready"]
            self.ready.set()
            return
        if "exited" in message:
            child = self.children.pop(message["exited"], None)
            if child is not None:
                child.returncode = int(message["returncode"])
                child.exited.set()
            return
        job_id = message.get("started", message.get("failed"))
        if "started" in message:
            # In the reply too: its "exited" may come before the requester wakes up.
            self.started_any = True
            message["process"] = self.children[message["pid"]] = ForkedProcess(message["pid"])
        with self.replied:
            self.replies[job_id] = message
            self.replied.notify_all()

    def close(self) -> None:
        """Stop the server: it kills whatever children are left and exits."""
        log.debug("fork server %d: peak memory %s", self.proc.pid, _peak_memory(self.proc.pid))
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.reader.join(5)


_server: ForkServer | None = None
_retired: list[ForkServer] = []  # replaced while their demos may still run: closed at the end
_server_lock = threading.Lock()
_server_broken = False  # it could not start once: spawn for the rest of this process
_preload_source: Callable[[], Preload] | None = None
_preload: Preload | None = None  # _preload_source(), once per set_preload
_preload_known = True
_refused: set[str] = set()  # modules whose import is not fork-safe: never preloaded again here
_starting: list[threading.Thread] = []  # start_fork_server's threads


def set_preload(source: Callable[[], Preload] | None) -> None:
    """What the fork server of the next demos preloads: ``source()``, asked once, when one starts.

    A server already running with another set (or environment) is replaced.
    """
    global _preload_source, _preload_known
    with _server_lock:
        _preload_source, _preload_known = source, False


def start_demo_process(job_fd: int, cwd: Path, events_fd: int, stderr_fd: int,
                       env: dict[str, str]) -> DemoProcess:
    """Start the runner: job JSON readable from ``job_fd``, events to ``events_fd``."""
    server = _fork_server(env)
    if server is not None:
        try:
            return server.start(job_fd, cwd, events_fd, stderr_fd)
        except OSError as exc:
            log.debug("fork server: %s; spawning instead", exc)
    return SpawnedProcess(job_fd, cwd, events_fd, stderr_fd, env)


def start_fork_server(env: dict[str, str]) -> None:
    """Start the fork server for ``env`` in the background, before any demo asks for it (its
    preloads take most of a second of its own CPU); the first demo waits only for what is left."""
    if not fork_server_enabled():
        return

    def start() -> None:
        try:
            _fork_server(env)
        except Exception as exc:  # the first demo meets the same problem and reports it
            log.debug("fork server: could not start it early: %s", exc)

    thread = threading.Thread(target=start, name="fork-server-start", daemon=True)
    _starting[:] = [t for t in _starting if t.is_alive()] + [thread]
    thread.start()


def close_fork_server() -> None:
    """Stop this process's fork server, if one runs (the next demo starts a new one)."""
    global _server
    while _starting:  # a server being started early is closed too, once it is up
        _starting.pop().join()
    with _server_lock:
        servers = _retired + ([_server] if _server is not None else [])
        _server = None
        _retired.clear()
    for server in servers:
        server.close()


def fork_server_enabled() -> bool:
    """Whether demos are forked from a server here (platform support and the env switch)."""
    return (os.environ.get(ENV_SWITCH, "1").strip() not in ("0", "false", "no", "off")
            and hasattr(os, "fork") and hasattr(os, "waitid") and hasattr(socket, "send_fds")
            and hasattr(socket, "SOCK_SEQPACKET") and not _server_broken)


def _fork_server(env: dict[str, str]) -> ForkServer | None:
    """The running server for ``env``, started on first use; None to spawn instead."""
    global _server, _server_broken
    if not fork_server_enabled():
        return None
    with _server_lock:
        for idle in [r for r in _retired if not r.busy()]:
            _retired.remove(idle)
            idle.close()
        preload = _current_preload()
        if _server is not None and (not _server.alive or _server.env != env or _server.preload != preload):
            if _server.alive:
                log.debug("fork server: the environment or the preloaded modules changed; starting another")
            elif _server.started_any:
                log.warning("the fork server died (did a demo kill it?); starting a new one")
            else:  # it never worked here: do not retry for every demo
                _server_broken = True
                log.debug("the fork server exited at start; spawning demos")
            if _server.busy():
                _retired.append(_server)  # its running demos finish first
            else:
                _server.close()
            _server = None
            if _server_broken:
                return None
        while _server is None:
            try:
                _server = ForkServer(env, preload)
            except OSError as exc:
                _server_broken = True
                log.debug("fork server could not start (%s); spawning demos", exc)
                return None
            if not _server.wait_ready():
                _server.close()
                _server, _server_broken = None, True
                log.debug("the fork server exited at start; spawning demos")
                return None
            refused: dict[str, str] = _server.preloaded.get("refused", {})
            for module, why in _server.preloaded.get("skipped", {}).items():
                log.debug("fork server: not preloading %s: %s", module, why)
            if refused:  # that server is no fresh interpreter any more: start one without them
                for module, why in refused.items():
                    log.warning("not preloading %s in the fork server: %s; demos import it themselves", module, why)
                _refused.update(refused)
                _server.close()
                _server = None
                preload = _current_preload()
        return _server


def _current_preload() -> Preload | None:
    """This build's preload set (computed on first need), less the modules refused so far."""
    global _preload, _preload_known
    if not _preload_known:
        _preload = _preload_source() if _preload_source is not None else None
        _preload_known = True
    if _preload is None or not _refused & set(_preload.modules):
        return _preload
    kept = tuple(m for m in _preload.modules if m not in _refused and m.partition(".")[0] not in _refused)
    return dataclasses.replace(_preload, modules=kept)


def _peak_memory(pid: int) -> str:
    """The peak resident memory of a process (Linux: VmHWM), for the debug log."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remaining(deadline: float | None) -> float:
    return float("inf") if deadline is None else max(0.0, deadline - time.monotonic())


atexit.register(close_fork_server)
