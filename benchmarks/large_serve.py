"""Benchmark (m) of issue 32: ``serve`` on a site of thousands of entries (benchmark (l)'s project).

    python benchmarks/run.py --only m --entries 10000   # 2,000 by default

``serve`` runs in the project; a comment of one entry is edited (its record holds: it does not
run), then, medians of the runs:

- from the save to the reloaded page: the page served holds the edit and the live-reload version
  moved (what makes the browser reload), less the entry's own run      target <= 1 s
- from the save to the search index caught up (the page no longer says it is catching up)
- the CPU time of serve's process tree over each of those spans (user + system of serve, and of
  the children it has waited for: Pagefind, not the demos run by the fork server)
"""

from __future__ import annotations

import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from harness import ENV, Measure

_TAG = re.compile(r'data-version="([^"]+)"( data-search="pending")?')


@dataclass
class ServeSample:
    """One save: seconds to the reloaded page (wall, CPU), its entry's run, to the search caught up."""

    reload_wall: float
    reload_cpu: float
    demo_run: float
    search_wall: float
    search_cpu: float


def _cpu(pid: int) -> float:
    """User + system seconds of process ``pid`` and of the children it waited for."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _page(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode("utf-8")
    except OSError:
        return ""


def _indexed(page: str) -> bool:
    """True when ``page`` is served and its search index is its pages' (not catching up)."""
    found = _TAG.search(_page(page))
    return found is not None and not found.group(2)


def _until(what: str, check: object, timeout: float) -> bool:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if check():  # type: ignore[operator]
            return True
        time.sleep(0.05)  # the polls cost serve CPU too: not too often
    raise SystemExit(f"serve benchmark: {what} never happened")


def serve_edits(project: Path, name: str, runs: int, timeout: float = 600, warm_up: bool = True) -> list[ServeSample]:
    """Edit ``demos/NAME.py`` ``runs`` + 1 times under ``serve`` (the first is not counted: it
    starts the fork server), or ``runs`` times when not ``warm_up`` (serve's first build ran a demo)."""
    demo = project / "demos" / f"{name}.py"
    original = demo.read_text(encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "site_builder", "serve", "--port", "0", "-j", "2"],
                            cwd=project, env=ENV, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    samples: list[ServeSample] = []
    try:
        url = re.search(r"(http://\S+/) ", proc.stdout.readline()).group(1)  # type: ignore[union-attr]
        page = f"{url}{name}/"
        # the version moves when serve's first build is done (until then it serves the site as it was)
        _until("the site served", lambda: _TAG.search(_page(page)) is not None, timeout)
        started = _TAG.search(_page(page)).group(1)  # type: ignore[union-attr]
        _until("the first build", lambda: _indexed(page) and f'"{started}"' not in _page(page), timeout)
        for n in range(0 if warm_up else 1, runs + 1):
            time.sleep(1.0)  # a quiet moment, as between two saves
            version = _TAG.search(_page(page)).group(1)  # type: ignore[union-attr]
            cpu0, t0 = _cpu(proc.pid), time.perf_counter()
            demo.write_text(original + f"# serve edit {n}\n", encoding="utf-8")
            found: list[str] = []

            def reloaded() -> bool:
                body = _page(page)
                m = _TAG.search(body)
                if m and m.group(1) != version and f"serve edit {n}" in body:
                    found.append(body)
                    return True
                return False

            _until(f"edit {n} reloaded", reloaded, timeout)
            reload_wall, cpu1 = time.perf_counter() - t0, _cpu(proc.pid)
            _until(f"edit {n} indexed", lambda: _indexed(page), timeout)
            search_wall, cpu2 = time.perf_counter() - t0, _cpu(proc.pid)
            record = json.loads((project / "_freeze" / name / "_site_builder" / "record.json").read_text())
            if n:
                samples.append(ServeSample(reload_wall, cpu1 - cpu0, float(record["duration"]),
                                           search_wall, cpu2 - cpu0))
                print(samples[-1], file=sys.stderr, flush=True)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(60)
        demo.write_text(original, encoding="utf-8")
    return samples


def summary(samples: list[ServeSample], entries: int) -> tuple[str, list[Measure]]:
    """A report line and the measures of ``samples``."""
    def median(field: str) -> float:
        return statistics.median(getattr(s, field) for s in samples)

    beyond = statistics.median(s.reload_wall - s.demo_run for s in samples)
    line = (f"  (m) serve, {entries} entries, one edited: reloaded page {median('reload_wall'):.2f} s wall "
            f"({beyond:.2f} s beyond the entry's run of {median('demo_run'):.2f} s), "
            f"{median('reload_cpu'):.2f} s CPU; search caught up {median('search_wall'):.2f} s wall, "
            f"{median('search_cpu'):.2f} s CPU; load average {os.getloadavg()[0]:.2f}")
    return line, [Measure(f"(m) serve, {entries} entries: save to reloaded page, beyond the entry's run",
                          beyond, "s", 1.0)]


def bench_large_serve(workdir: Path, runs: int, entries: int = 2000) -> list[Measure]:
    """(m): serve's save-to-reload on benchmark (l)'s project of ``entries`` entries."""
    from large_site import _large_project, _name

    project = _large_project(workdir, entries)
    line, measures = summary(serve_edits(project, _name(entries // 2), runs), entries)
    print(line, file=sys.stderr)
    return measures


if __name__ == "__main__":  # python benchmarks/large_serve.py PROJECT ENTRY [RUNS [--no-warm-up]]: a project built already
    found = serve_edits(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 3,
                        warm_up="--no-warm-up" not in sys.argv)
    print(summary(found, len(list((Path(sys.argv[1]) / "demos").glob("*.py"))))[0], file=sys.stderr)
