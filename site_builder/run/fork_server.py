"""Fork server: a warmed interpreter that forks one fresh child per demo run.

Started once per build (kept across the rebuilds of ``serve``) by
``site_builder.run.demo_process`` as ``python -P fork_server.py FD [OPTIONS_JSON]`` (through
``preload.SERVER_BOOT``) with the environment a spawned runner gets.  Standard library only, never imports site_builder,
single-threaded (it forks) and never runs demo code itself: each child does what
``python -P runner.py JOB_FD EVENTS_FD`` would, minus the interpreter start-up and the
imports of the third-party modules the demos use, which it preloads (see ``preload``).

Messages on the SOCK_SEQPACKET socket FD, one JSON object each:

    server -> parent  {"ready": {"preloaded": [...], "skipped": {M: WHY}, "refused": {M: WHY}}}
                      first, once the preloads are done; after a refusal the server exits
    parent -> server  {"job": ID, "cwd": DIR}  with fds [job JSON, events, stderr]
    server -> parent  {"started": ID, "pid": PID} or {"failed": ID, "error": TEXT}
                      {"exited": PID, "returncode": RC}  (negative: killed by that signal)

When the parent's end closes (the builder exited or was killed), the server kills every
child's process group and exits.
"""

from __future__ import annotations

import _signal
import gc
import importlib.util
import json
import os
import select
import signal
import socket
import stat
import sys
from types import ModuleType
from typing import Any

_SIGKILL = int(signal.SIGKILL)  # a plain int: the enum member's attributes are not looked up per run
RUNNER_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runner.py")


def load_runner() -> ModuleType:
    """runner.py (and the child/ modules it loads) as a module, not in sys.modules: a demo's imports must not see it."""
    spec = importlib.util.spec_from_file_location("_site_builder_runner", RUNNER_PATH)
    assert spec is not None and spec.loader is not None
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    return runner


def warm(packages: bool) -> None:
    """Pay once, here, for what every child would otherwise import or compute itself (``packages``:
    the demos use third-party packages, whose versions they look up). Only the standard library
    and caches with no randomness in them: a package imported here (numpy's RNG) would be shared."""
    import ctypes

    if packages:  # a stdlib-only demo never looks a version up: about 20 ms of CPU saved at start
        import importlib.metadata  # noqa: F401

    ctypes.CDLL(None)  # (platform.platform() and python_version() are the builder's: see main)


def _threads() -> int:
    """Threads of this process, native ones included (a BLAS pool is invisible to ``threading``)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        import threading
        return threading.active_count()


def _sockets() -> set[int]:
    try:
        fds = [int(fd) for fd in os.listdir("/proc/self/fd")]
    except OSError:
        return set()
    found = set()
    for fd in fds:
        try:
            if stat.S_ISSOCK(os.fstat(fd).st_mode):
                found.add(fd)
        except OSError:
            pass
    return found


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _shadowed(name: str, demos: str) -> bool:
    """Whether ``python demos/x.py`` would import ``name`` from the demos folder (sys.path[0])."""
    top = name.partition(".")[0]
    try:
        listing = os.listdir(demos)
    except OSError:
        return False
    return any(n == top or n.startswith(top + ".") for n in listing)


def _installed(top: str, installed: list[str]) -> bool:
    """Whether top-level module ``top`` would be imported from an installed package's folder."""
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    places = [spec.origin] if spec.origin and spec.has_location else list(spec.submodule_search_locations or ())
    return bool(places) and all(any(_inside(os.path.realpath(p), folder) for folder in installed)
                                for p in places)


def _recorded_folder(modules: list[ModuleType], folder: str) -> str | None:
    """The first module whose globals hold ``folder`` (it recorded the working folder at import)."""
    for module in modules:
        for value in list(vars(module).values()):
            if isinstance(value, (str, os.PathLike)) and folder in os.fspath(value):
                return module.__name__
    return None


def preload(names: list[str], demos: str, project: str) -> dict[str, Any]:
    """Import the third-party modules the demos use, once, so no child pays for them.

    A module is only kept when importing it is invisible to a demo: it runs in an empty
    temporary working folder (what a demo's fresh scratch folder is at import time) with
    the children's environment; it is skipped when it is missing or the demos folder
    would shadow it, and refused (the server then exits, the parent starts another
    without it) when its import started a thread, opened a socket, loaded a project
    file or kept the working folder's name.
    """
    import shutil  # here: a server that preloads nothing (stdlib-only demos) never needs them
    import tempfile
    preloaded: list[str] = []
    skipped: dict[str, str] = {}
    refused: dict[str, str] = {}
    root = os.path.realpath(project)
    # as child/files.Paths: installed packages are never project files, even inside the project
    outside = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    outside |= {p for p in sys.path if "site-packages" in p or "dist-packages" in p}
    installed = [os.path.realpath(p) for p in outside if p]
    packages = [os.path.realpath(p) for p in sys.path if "site-packages" in p or "dist-packages" in p]
    home = os.getcwd()
    scratch = tempfile.mkdtemp(prefix="site_builder-preload-")
    argv = sys.argv
    try:
        os.chdir(scratch)
        sys.argv = [""]
        for name in names:
            if name in sys.modules:  # loaded by an earlier one
                preloaded.append(name)
                continue
            if _shadowed(name, demos):
                skipped[name] = "a file of the demos folder has its name"
                continue
            if not _installed(name.partition(".")[0], packages):
                # on PYTHONPATH or installed in editable mode: it may change while serve runs
                skipped[name] = "not an installed package (site-packages)"
                continue
            threads, sockets, before = _threads(), _sockets(), set(sys.modules)
            try:
                importlib.import_module(name)
            except BaseException as exc:  # an optional dependency, a broken install
                skipped[name] = f"{type(exc).__name__}: {exc}"
                continue
            new = [m for k, m in list(sys.modules.items()) if k not in before and m is not None]
            files = [os.path.realpath(f) for m in new if isinstance(f := getattr(m, "__file__", None), str)]
            if _threads() > threads:
                refused[name] = f"importing it started {_threads() - threads} thread(s)"
            elif _sockets() - sockets:
                refused[name] = "importing it opened a socket"
            elif any(_inside(f, root) and not any(_inside(f, o) for o in installed) for f in files):
                refused[name] = "importing it loads a file of the project"
            elif (holder := _recorded_folder(new, scratch)) is not None:
                refused[name] = f"{holder} keeps the working folder of its import"
            if refused:
                break  # this interpreter is no longer a fresh one: the parent starts another
            preloaded.append(name)
            if name == "matplotlib.pyplot":
                _warm_matplotlib()
    finally:
        sys.argv = argv
        os.chdir(home)
        shutil.rmtree(scratch, ignore_errors=True)
    return {"preloaded": preloaded, "skipped": skipped, "refused": refused}


def _warm_matplotlib() -> None:
    """Draw one figure outside pyplot (no figure number, no registry, rcParams untouched):
    fonts, the Agg renderer, the PNG writer and the mathtext parser are then loaded once, not
    in every child.  (The parser's grammar cost a demo with a ``$...$`` label 40 to 80 ms of
    CPU, and this warm-up 45 ms more; Matplotlib's own gallery labels with mathtext often.)"""
    try:
        import io

        # by name: this file imports nothing outside the standard library unless asked to
        figure = importlib.import_module("matplotlib.figure").Figure()
        importlib.import_module("matplotlib.backends.backend_agg").FigureCanvasAgg(figure)
        axes = figure.add_subplot()
        axes.plot([0, 1], [0, 1], label="a")
        axes.set_title("warm")
        axes.set_xlabel("$x$")
        axes.legend()
        figure.savefig(io.BytesIO(), format="png", metadata={"Software": None})
    except Exception:
        pass  # only a warm-up: each child would do the same work itself


def _version(distribution: str) -> str | None:
    import importlib.metadata

    try:
        return importlib.metadata.version(distribution)
    except Exception:  # not a distribution's name (PIL is Pillow's): the child looks it up
        return None


def reseed() -> None:
    """In a child: give generators seeded at import what a fresh interpreter gives them.

    (``random`` reseeds itself after a fork.)  NumPy's legacy global generator
    (``np.random.seed`` / ``np.random.rand``) gets the state a fresh import would give it:
    one seeded from OS entropy."""
    mtrand = sys.modules.get("numpy.random.mtrand")
    if mtrand is not None:
        mtrand._rand.set_state(mtrand.RandomState().get_state())


class Server:
    """The select loop: start children on request, report their exits."""

    def __init__(self, sock: socket.socket, runner: ModuleType) -> None:
        self.sock, self.runner = sock, runner
        self.children: set[int] = set()
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        # given back to _signal in each child: signal.signal's enum conversions copy ~40 pages a run
        self.default_sigchld = _signal.getsignal(_signal.SIGCHLD)
        # A Python handler plus the wakeup fd: select() wakes on SIGCHLD without threads.
        signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)
        signal.set_wakeup_fd(self.wake_w)

    def serve(self) -> None:
        try:
            while True:
                ready, _, _ = select.select([self.sock, self.wake_r], [], [])
                if self.wake_r in ready:  # SIGCHLD: a child exited
                    while _read_some(self.wake_r):
                        pass
                    self.reap()
                    # a runner's orphans are this server's children once it has exited,
                    # before its SIGCHLD is sent: nothing else brings new ones
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
        job_id = job["job"]
        if type(job_id) is int:  # the builder's ids: see send_bytes
            return self.send_bytes(b'{"started": %d, "pid": %d}' % (job_id, pid))
        return self.send({"started": job_id, "pid": pid})

    def reap(self) -> None:
        """Report every child that has exited, after killing what it left in its group."""
        while True:  # its runners, and the orphans it adopted
            try:
                # WNOWAIT: the zombie keeps its pid (its group id) from reuse until the group is killed
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
                self.send_bytes(b'{"exited": %d, "returncode": %d}' % (pid, os.waitstatus_to_exitcode(status)))

    def kill_orphans(self) -> None:
        """Kill what a runner that died (a crash, a timeout) left running: as a subreaper the
        server adopts it instead of init; its death brings the next generation here in turn."""
        for pid in self.runner.live_children(os.getpid(), known=self.children):
            self.runner.kill_tree(pid)

    def send(self, message: dict[str, Any]) -> bool:
        return self.send_bytes(json.dumps(message).encode("utf-8"))

    def send_bytes(self, data: bytes) -> bool:
        """Send one message, ``data`` already JSON; the replies for every run are written by hand (as
        json.dumps would): while a child lives each page the server writes is copied, ~30 per run."""
        try:
            self.sock.send(data)
        except OSError:
            return False
        return True

    def child(self, job: dict[str, Any], fds: list[int]) -> None:
        """In the fork: become what a freshly spawned runner is, then run it; never returns."""
        try:
            signal.set_wakeup_fd(-1)
            _signal.signal(_signal.SIGCHLD, self.default_sigchld)
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
            reseed()
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
        os.killpg(pid, _SIGKILL)
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
    wanted = json.loads(argv[2]) if len(argv) > 2 else {}
    warm(bool(wanted.get("modules")))
    runner.set_platform(wanted.get("platform"), wanted.get("python"))  # the builder's (see preload.server_options)
    before = {name.partition(".")[0] for name in sys.modules}
    ready = (preload(wanted["modules"], wanted.get("demos", ""), wanted.get("project", "/")) if wanted.get("modules")
             else {"preloaded": [], "skipped": {}, "refused": {}})  # nothing to import: no scratch folder either
    # every package the preloads loaded, their dependencies too (numpy under matplotlib),
    # and the versions of those the demos import by name (numpy, matplotlib), looked up once
    named = sorted({m.partition(".")[0] for m in ready["preloaded"]})
    runner.set_preloaded(frozenset({name.partition(".")[0] for name in sys.modules} - before),
                         {top: version for top in named if (version := _version(top))})
    runner.warm_realpaths()
    # Keep the collector away from everything loaded so far: a collection in a child
    # would touch (and so copy) every page the children share with the server.
    gc.freeze()
    server = Server(sock, runner)
    if server.send({"ready": ready}) and not ready["refused"]:
        server.serve()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
