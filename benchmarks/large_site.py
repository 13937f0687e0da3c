"""Benchmark (l) of issue 32: a change costs what it touches, on a site of thousands of entries.

    python benchmarks/run.py --only l --entries 10000   # 2,000 by default

A project of N tiny two-block entries is built once; then, medians of the runs:

- a no-change rebuild                                       target <= 1 s at 10,000 entries
- a rebuild after a comment edited in one entry (that entry runs again, the others come
  from their records)                                        target <= 2 s wall
- the builder's peak memory over those builds                target <= 300 MB

Every entry's first run is not what this measures, and 10,000 of them take minutes of CPU
(the ~43 ms each of item 2 of the issue): the entries' scripts repeat every 2,000 (entry i
holds the script of entry i mod 2,000, so its title says which), the 2,000 distinct ones
run once in a project of their own, and their records are copied to the entries with the
same script, as the run would have written them (only the entry's name differs). The large
project is then built from those records (nothing runs) before the measured rebuilds.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
from pathlib import Path

from harness import Measure, project_with
from scale import Sample, build

DISTINCT = 2000
ENTRY = '''\
"""Generated entry {j}: a two-block entry."""
N = {j}

# %% B-sum
print(sum(range(N + 10)))
'''


def _name(i: int) -> str:
    return f"tiny{i:05d}"


def _large_project(workdir: Path, entries: int) -> Path:
    """A project of ``entries`` entries with a record each, built once from those records."""
    distinct = min(entries, DISTINCT)
    seed = project_with(workdir, "seed", {f"{_name(i)}.py": ENTRY.format(j=i) for i in range(distinct)})
    first = build(seed, "-j", "2")
    print(f"  (l) {distinct} distinct entries run: {first.wall:.1f} s wall, {first.cpu:.1f} s CPU", file=sys.stderr)
    project = project_with(workdir, "large", {f"{_name(i)}.py": ENTRY.format(j=i % DISTINCT)
                                              for i in range(entries)})
    for i in range(entries):
        source = seed / "_freeze" / _name(i % DISTINCT)
        target = project / "_freeze" / _name(i)
        shutil.copytree(source, target)
        record = target / "_site_builder" / "record.json"
        data = json.loads(record.read_text(encoding="utf-8"))
        data["entry"] = _name(i)
        record.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    shutil.rmtree(seed)
    full = build(project, "-j", "2")
    print(f"  (l) {entries} entries built from their records: {full.wall:.1f} s wall, {full.cpu:.1f} s CPU, "
          f"builder {full.builder_mb:.0f} MB", file=sys.stderr)
    return project


def bench_large(workdir: Path, runs: int, entries: int = 2000) -> list[Measure]:
    """(l): no-change and one-entry-changed rebuilds of a site of ``entries`` entries."""
    project = _large_project(workdir, entries)
    demo = project / "demos" / f"{_name(entries // 2)}.py"
    original = demo.read_text(encoding="utf-8")
    unchanged: list[Sample] = []
    edited: list[Sample] = []
    for n in range(runs + 1):  # the first edit's rebuild warms the caches: not counted
        demo.write_text(original + f"# edit {n}\n", encoding="utf-8")
        one = build(project, "-j", "2")
        same = build(project, "-j", "2")
        if n:
            edited.append(one)
            unchanged.append(same)
    load = os.getloadavg()[0]
    same_s, one_s = statistics.median(s.wall for s in unchanged), statistics.median(s.wall for s in edited)
    peak = max(s.builder_mb for s in unchanged + edited)
    print(f"  (l) {entries} entries: no-change {same_s:.2f} s wall / "
          f"{statistics.median(s.cpu for s in unchanged):.2f} s CPU; one edited {one_s:.2f} s wall / "
          f"{statistics.median(s.cpu for s in edited):.2f} s CPU; builder peak {peak:.0f} MB; "
          f"load average {load:.2f} at the end", file=sys.stderr)
    return [
        Measure(f"(l) {entries} entries: no-change rebuild", same_s, "s", 1.0),
        Measure(f"(l) {entries} entries: one entry edited (it runs), rebuild", one_s, "s", 2.0),
        Measure(f"(l) {entries} entries: builder peak memory (MB)", peak, "x", 300.0),
    ]
