"""The demo's process tree, seen from its runner: adopt orphans, kill every descendant,
notice the builder's death (a demo's ``os._exit`` is reported by streams.py, beside the events).

A process group is not enough to find a demo's processes: a child may start its own
session (start_new_session=True, a daemon's double fork).  On Linux the runner becomes a
child subreaper, so the orphans of its tree are re-parented to it rather than to init, and
/proc lists every process below it.  Elsewhere only the group is killed.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from typing import Any
REAL_EXIT = os._exit  # the demo's os._exit is wrapped (see streams.report_os_exit)


def exit_if_orphaned(parent: int) -> None:
    """Kill the demo's whole process tree when the builder (or fork server) has died:
    after a SIGKILL there is nobody else to do it."""
    if os.getppid() != parent:
        kill_descendants(os.getpid())
        os.killpg(0, signal.SIGKILL)  # the runner leads its own session and group


_PR_SET_CHILD_SUBREAPER = 36  # from <linux/prctl.h>


def become_subreaper() -> bool:
    """Adopt the orphans of this process's descendants (Linux); False where that is not possible."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return libc().prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


_LIBC: list[object] = []  # the C library's handle, made once (in the fork server: its children share it)


def libc() -> Any:
    """The process's C library through ctypes (prctl, fflush); raises OSError where there is none."""
    if not _LIBC:
        import ctypes

        _LIBC.append(ctypes.CDLL(None, use_errno=True))
    return _LIBC[0]


def live_children(pid: int, known: set[int] | frozenset[int] = frozenset()) -> list[int]:
    """The child processes of ``pid`` that have not exited (from /proc; [] where there is none),
    but for those in ``known`` (not looked at: each look is a /proc file the kernel then tidies)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:  # an adopted orphan is the child of whichever thread adopted it
        try:
            found += [int(c) for c in _read_proc(f"/proc/{pid}/task/{tid}/children").split()]
        except (OSError, ValueError):
            continue
    return [c for c in found if c not in known and not _exited(c)]


def _read_proc(path: str) -> bytes:
    """A /proc file's bytes, read with os.read: the fork server reads them after each fork,
    and a buffered file object would write (and so copy) some 20 more of its pages each time."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := os.read(fd, 4096):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _exited(pid: int) -> bool:
    try:
        stat = _read_proc(f"/proc/{pid}/stat")
    except OSError:
        return True
    return stat[stat.rfind(b")") + 2:][:1] in (b"Z", b"X")  # a zombie: dead, not yet reaped


def _has_children() -> bool:
    """Whether this process has a child, running or a zombie (any of its threads'). A subreaper
    without one has no descendant at all: every orphan below it is its child. Looking in /proc
    instead makes the kernel build entries there that it must tidy away when the process is
    reaped, some 0.3 ms of CPU per run in a fork server's child."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    except (AttributeError, OSError):  # no waitid here: look
        return True
    return True


def kill_descendants(pid: int, patience: float = 5.0) -> None:
    """SIGKILL every process below ``pid`` (which lives on), until none is left or ``patience`` s passed.

    ``pid`` should be a subreaper: then the children of a killed process come back to it.
    """
    if pid == os.getpid() and not _has_children():
        return  # most demos start no process: /proc is not read at all (see _has_children)
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
    kill_now(pid)


def kill_now(pid: int) -> None:
    """SIGKILL the process group ``pid`` leads, and ``pid`` (nothing looked up below it)."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except OSError:
            pass
