"""Sharded execution: split the entries into N cost-balanced shares, the same on every machine.

``build --shard K/N`` runs on N separate machines (CI jobs), each checking out the same
commit.  Each must compute the *same* partition without talking to the others, so the
costs below use only what every machine sees identically: the run records as committed
at git's ``HEAD`` (their recorded ``duration``) and the demo files (their size).  Never the
records in the working tree: a shard writes some, and shards run one after the other on
one machine would then split the entries differently, leaving some in no shard at all.
Outside a git repository (or without git) every entry is costed by its size.
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
from pathlib import Path

from site_builder.patterns import PathPattern
from site_builder.source.entries import Entry
from site_builder.run.records.record_json import RECORD_FILE
from site_builder.run.records.store import store_dir

log = logging.getLogger(__name__)

MAX_SHARDS = 1000  # more CI jobs than any matrix runs (GitHub Actions allows 256)


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` -> (K, N) with 1 <= K <= N (an argparse type: a bad value is a usage error)."""
    k_text, slash, n_text = text.partition("/")
    try:
        if not slash:
            raise ValueError
        k, n = int(k_text), int(n_text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected K/N, e.g. 2/4, not {text!r}") from None
    if n < 1 or not 1 <= k <= n:
        raise argparse.ArgumentTypeError(f"K/N needs 1 <= K <= N, not {text!r}")
    if n > MAX_SHARDS:
        raise argparse.ArgumentTypeError(f"N is at most {MAX_SHARDS} shares, not {n}")
    return k, n


def recorded_durations(records: Path, entries: list[Entry]) -> dict[str, float]:
    """Each entry's run time in its record in the working tree (the records folder ``records``,
    in seconds), when it has a readable one.

    Only the JSON's ``duration`` is read (no file hashes, no input checks): the duration of
    a stale record is still the best estimate there is.  For ordering one machine's work;
    shards use :func:`committed_durations`.
    """
    durations: dict[str, float] = {}
    for entry in entries:
        path = store_dir(records, entry.name) / RECORD_FILE
        try:
            duration = _duration(path.read_bytes())
        except OSError:
            continue  # no record: estimated from the file's size
        if duration is not None:
            durations[entry.name] = duration
    return durations


def committed_durations(records: Path, root: Path, entries: list[Entry]) -> dict[str, float]:
    """Each entry's run time as recorded in the records committed at ``HEAD`` (none outside git),
    the records folder ``records`` being in the project (and repository) folder ``root``."""
    try:
        in_git = records.relative_to(root).as_posix()
    except ValueError:
        return {}  # records outside the project: nothing all machines are sure to share
    requests = "".join(f"HEAD:./{in_git}/{e.name}/{RECORD_FILE}\n" for e in entries)
    try:
        done = subprocess.run(["git", "cat-file", "--batch"], cwd=root, input=requests.encode(),
                              capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        log.debug("no committed records to balance shards with: %s", exc)
        return {}
    if done.returncode != 0:
        return {}  # not a git repository, or no commit yet
    durations: dict[str, float] = {}
    out, pos = done.stdout, 0
    for entry in entries:  # each answer: "<oid> blob <size>\n<content>\n" or "<request> missing\n"
        end = out.find(b"\n", pos)
        if end < 0:
            break
        header = out[pos:end].split()
        pos = end + 1
        if len(header) != 3 or header[1] != b"blob":
            continue
        size = int(header[2])
        content, pos = out[pos:pos + size], pos + size + 1
        duration = _duration(content)
        if duration is not None:
            durations[entry.name] = duration
    return durations


def _duration(record_json: bytes) -> float | None:
    """The top-level ``duration`` of a record's JSON, or None when there is no usable one."""
    try:
        duration = float(json.loads(record_json)["duration"])
    except (ValueError, KeyError, TypeError):
        return None
    return duration if duration >= 0 and duration != float("inf") else None


def estimated_seconds(entries: list[Entry], recorded: dict[str, float]) -> dict[str, float]:
    """Every entry's expected run time: its recorded one, else its size at the recorded seconds per byte.

    When no entry has a record, the size alone ranks them (one "second" per byte).
    """
    known = [e for e in entries if e.name in recorded]
    known_bytes = sum(len(e.source_bytes) for e in known)
    rate = sum(recorded[e.name] for e in known) / known_bytes if known_bytes else 1.0
    return {e.name: recorded.get(e.name, len(e.source_bytes) * rate) for e in entries}


def partition(costs: dict[str, float], shards: int) -> list[list[str]]:
    """Split names into ``shards`` lists of near-equal total cost (longest-processing-time first).

    Deterministic: the names go in order of decreasing cost (ties: by name), each to the
    share with the smallest total so far (ties: the lowest index).  Each list is sorted.
    """
    loads = [0.0] * shards
    shares: list[list[str]] = [[] for _ in range(shards)]
    for name in sorted(costs, key=lambda n: (-costs[n], n)):
        lightest = min(range(shards), key=lambda i: (loads[i], i))
        loads[lightest] += costs[name]
        shares[lightest].append(name)
    return [sorted(share) for share in shares]


def shard_entries(entries: list[Entry], shard: tuple[int, int], run_only: PathPattern | None,
                  records: Path, root: Path) -> list[Entry]:
    """The entries of shard K of N (``shard`` = (K, N)), in discovery order; entries whose
    demos_path ``run_only`` (the run_pattern setting; None: all run) leaves out are in none (they
    never run, so they have no record).  ``records``, ``root``: see committed_durations."""
    k, n = shard
    entries = [e for e in entries if run_only is None or run_only.search(e.demos_path)]
    costs = estimated_seconds(entries, committed_durations(records, root, entries))
    mine = set(partition(costs, n)[k - 1])
    return [e for e in entries if e.name in mine]

