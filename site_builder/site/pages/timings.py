"""What the pages say about time: when and on what each demo ran, and the timings page.

Everything here is taken from the run results (recorded ones included), never from the
clock of the current build, so a rebuild from the cache renders the same pages.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from site_builder.config import source_date_epoch
from site_builder.run.execute import RunResult

# Distribution name -> how its project writes it; others are shown as their distribution name.
PACKAGE_NAMES = {
    "numpy": "NumPy",
    "matplotlib": "Matplotlib",
    "scipy": "SciPy",
    "pandas": "pandas",
    "scikit-learn": "scikit-learn",
    "torch": "PyTorch",
    "jax": "JAX",
}
_NOT_PACKAGES = {"python", "platform", "blas"}  # the other keys of RunResult.environment


@dataclass(frozen=True)
class EnvironmentView:
    """On what a demo ran: Python, the packages it imported, platform, BLAS ("" when unknown)."""

    python: str
    packages: tuple[tuple[str, str], ...]  # (display name, version), NumPy and Matplotlib first
    platform: str
    blas: str


@dataclass(frozen=True)
class EntryTiming:
    """One demo's row of the timings page."""

    name: str
    status: str  # "ok", "failed", "not run"
    duration: float  # seconds
    blocks_run: int
    blocks_total: int
    ran_at: str
    environment: EnvironmentView


@dataclass(frozen=True)
class BlockTiming:
    """One block's row of the timings page."""

    entry: str
    name: str
    status: str  # BlockStatus
    duration: float  # seconds
    anchor: str = ""  # its id on its page ("" : its name; label_ids.block_ids)


def entry_status(result: RunResult) -> str:
    """"ok", "failed", or "not run" (never started: fail-fast stop, syntax error)."""
    if result.shown_only:
        return "not run"
    if result.ok:
        return "ok"
    if all(b.status == "not-run" for b in result.blocks) and result.duration == 0.0:
        return "not run"
    return "failed"


def format_ran_at(started_at: float) -> str:
    """When a run started, in UTC to the minute: "2024-05-01 14:03 UTC".

    ``SOURCE_DATE_EPOCH`` (reproducible builds) stands in for the run's time.
    """
    epoch = source_date_epoch()  # checked when the command started: never raises here
    if epoch is not None:
        started_at = float(epoch)
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started_at))


def environment_view(environment: dict[str, str]) -> EnvironmentView:
    """The page's view of ``RunResult.environment``."""
    first = list(PACKAGE_NAMES)
    dists = sorted((k for k in environment if k not in _NOT_PACKAGES),
                   key=lambda d: (first.index(d) if d in first else len(first), d.lower()))
    return EnvironmentView(
        python=environment.get("python", ""),
        packages=tuple((PACKAGE_NAMES.get(d, d), environment[d]) for d in dists),
        platform=environment.get("platform", ""),
        blas=environment.get("blas", ""),
    )


def entry_timings(results: list[RunResult]) -> list[EntryTiming]:
    """Every demo, slowest first (ties by name, so the page is stable)."""
    rows = [
        EntryTiming(
            name=r.entry,
            status=entry_status(r),
            duration=r.duration,
            blocks_run=sum(b.status != "not-run" for b in r.blocks),
            blocks_total=len(r.blocks),
            ran_at=format_ran_at(r.started_at),
            environment=environment_view(r.environment),
        )
        for r in results
    ]
    return sorted(rows, key=lambda t: (-t.duration, t.name))


def block_timings(results: list[RunResult], anchors: Mapping[str, Mapping[str, str]] | None = None
                  ) -> list[BlockTiming]:
    """Every block of every demo that ran, slowest first (ties by demo, then script order);
    ``anchors``: entry -> block name -> its id on the entry's page."""
    anchors = anchors or {}
    rows = [
        (BlockTiming(r.entry, b.name, b.status, b.duration, anchors.get(r.entry, {}).get(b.name, "")), i)
        for r in results
        for i, b in enumerate(r.blocks)
        if b.status != "not-run"
    ]
    return [t for t, _ in sorted(rows, key=lambda p: (-p[0].duration, p[0].entry, p[1]))]
