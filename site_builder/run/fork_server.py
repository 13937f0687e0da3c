"""Fork server: a warmed interpreter that forks one fresh child per demo run.

Started once per build by ``site_builder.run.demo_process`` as ``python -P fork_server.py FD``
with the environment a spawned runner gets.  Standard library only, never imports
site_builder, single-threaded (it forks) and never runs demo code itself: each child
does what ``python -P runner.py JOB_FD EVENTS_FD`` would, minus the interpreter start-up.

Messages on the SOCK_SEQPACKET socket FD, one JSON object each:

    parent -> server  {"job": ID, "cwd": DIR}  with fds [job JSON, events, stderr]
    server -> parent  {"started": ID, "pid": PID} or {"failed": ID, "error": TEXT}
                      {"exited": PID, "returncode": RC}  (negative: killed by that signal)

When the parent's end closes (the builder exited or was killed), the server kills every
child's process group and exits.
"""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import select
import signal
import socket
import sys
from types import ModuleType
from typing import Any

RUNNER_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runner.py")


def load_runner() -> ModuleType:
    """runner.py as a module (not in sys.modules: a demo's imports must not see it)."""
    spec = importlib.util.spec_from_file_location("_site_builder_runner", RUNNER_PATH)
    assert spec is not None and spec.loader is not None
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    return runner


def warm() -> None:
    """Pay once, here, for what every child would otherwise import or compute itself.

    Only the standard library and caches with no randomness in them: a third-party
    package imported here (numpy's global RNG) would be shared by every demo.
    """
    import ctypes
    import importlib.metadata  # noqa: F401  (the environment of demos using packages)
    import platform

    ctypes.CDLL(None)
    platform.platform()  # cached: libc_ver() reads the interpreter binary


class Server:
    """The select loop: start children on request, report their exits."""

    def __init__(self, sock: socket.socket, runner: ModuleType) -> None:
        self.sock, self.runner = sock, runner
        self.children: set[int] = set()
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        self.default_sigchld = signal.getsignal(signal.SIGCHLD)
        # A Python handler plus the wakeup fd: select() wakes on SIGCHLD without threads.
        signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)
        signal.set_wakeup_fd(self.wake_w)

    def serve(self) -> None:
        try:
            while True:
                ready, _, _ = select.select([self.sock, self.wake_r], [], [])
                if self.wake_r in ready:
                    while _read_some(self.wake_r):
                        pass
                self.reap()
                self.kill_orphans()
                if self.sock in ready and not self.request():
                    return
        finally:
            for pid in self.children:
                self.runner.kill_tree(pid)
            self.kill_orphans()

    def request(self) -> bool:
        """Handle one message; False when the parent has gone."""
        try:
            msg, fds, _flags, _addr = socket.recv_fds(self.sock, 1 << 16, 4)
        except OSError:
            return False
        if not msg:
            return False
        try:
            job = json.loads(msg)
            pid = os.fork() if len(fds) == 3 else -1
        except Exception as exc:  # bad message or fork failed (EAGAIN, ENOMEM)
            for fd in fds:
                os.close(fd)
            return self.send({"failed": _job_id(msg), "error": f"{type(exc).__name__}: {exc}"})
        if pid == 0:
            self.child(job, fds)
        for fd in fds:
            os.close(fd)
        if pid < 0:
            return self.send({"failed": job.get("job"), "error": f"expected 3 fds, got {len(fds)}"})
        self.children.add(pid)
        return self.send({"started": job["job"], "pid": pid})

    def reap(self) -> None:
        """Report every child that has exited, after killing what it left in its group."""
        while True:  # its runners, and the orphans it adopted
            try:
                # WNOWAIT: the zombie keeps its pid (and so its group id) from being reused
                # until the group is killed.
                info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return
            if info is None or info.si_pid == 0:
                return
            pid = info.si_pid
            _kill_group(pid)  # grandchildren of the demo (a never-ending subprocess)
            _, status = os.waitpid(pid, 0)
            if pid in self.children:  # not an orphan it adopted
                self.children.discard(pid)
                self.send({"exited": pid, "returncode": os.waitstatus_to_exitcode(status)})

    def kill_orphans(self) -> None:
        """Kill what a runner that died (a crash, a timeout) left running: as a subreaper the
        server adopts it instead of init; its death brings the next generation here in turn."""
        for pid in self.runner.live_children(os.getpid()):
            if pid not in self.children:
                self.runner.kill_tree(pid)

    def send(self, message: dict[str, Any]) -> bool:
        try:
            self.sock.send(json.dumps(message).encode("utf-8"))
        except OSError:
            return False
        return True

    def child(self, job: dict[str, Any], fds: list[int]) -> None:
        """In the fork: become what a freshly spawned runner is, then run it; never returns."""
        try:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, self.default_sigchld)
            os.setsid()  # its own session and group: timeouts kill the whole group
            self.sock.close()
            os.close(self.wake_r)
            os.close(self.wake_w)
            job_fd, events_fd, err_fd = fds
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, 0)
            os.dup2(null, 1)
            os.dup2(err_fd, 2)
            os.close(null)
            os.close(err_fd)
            os.chdir(job["cwd"])
        except BaseException:
            os._exit(71)
        try:
            self.runner.main([RUNNER_PATH, str(job_fd), str(events_fd)])
        finally:
            os._exit(70)  # main() ends with os._exit; this only catches the impossible


def _read_some(fd: int) -> bool:
    try:
        return bool(os.read(fd, 4096))
    except (BlockingIOError, InterruptedError):
        return False


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _job_id(msg: bytes) -> Any:
    try:
        return json.loads(msg).get("job")
    except Exception:
        return None


def main(argv: list[str]) -> None:
    sock = socket.socket(fileno=int(argv[1]))
    os.set_inheritable(sock.fileno(), False)
    runner = load_runner()
    runner.become_subreaper()  # the orphans of a runner that died come here, not to init
    warm()
    runner.warm_realpaths()
    # Keep the collector away from everything loaded so far: a collection in a child
    # would touch (and so copy) every page the children share with the server.
    gc.freeze()
    Server(sock, runner).serve()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
