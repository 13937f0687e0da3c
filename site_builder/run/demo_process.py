"""Start the child process that runs one demo: forked from a warmed fork server, or spawned.

Both ways give the runner the same fresh process (own session and group, cwd, fds,
environment); forking skips the interpreter start-up, which dominates small demos.
``SITE_BUILDER_FORK_SERVER=0`` forces spawning (for debugging); so does a platform
without fork and fd passing, or a server that cannot start.
"""

from __future__ import annotations

import atexit
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
from typing import Any, Protocol

from site_builder.run.runner import kill_tree

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

    def release(self) -> None:
        """After ``kill_group``, when its exit status does not matter: let it be reaped."""


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

    def release(self) -> None:
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

    def release(self) -> None:
        pass  # the server reaps it: no need to wait for the message


class ForkServer:
    """Client of one ``fork_server.py`` process, shared by the build's worker threads."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-P", str(FORK_SERVER), str(theirs.fileno())],
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


def close_fork_server() -> None:
    """Stop this process's fork server, if one runs (the next demo starts a new one)."""
    global _server
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
        if _server is not None and (not _server.alive or _server.env != env):
            if _server.alive:
                log.debug("fork server: the environment changed; starting another")
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
        if _server is None:
            try:
                _server = ForkServer(env)
            except OSError as exc:
                _server_broken = True
                log.debug("fork server could not start (%s); spawning demos", exc)
                return None
        return _server


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
