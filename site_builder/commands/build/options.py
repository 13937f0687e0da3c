"""What a build is asked to do: the command line's options of ``build``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BuildOptions:
    """Command-line choices that shape one build."""

    jobs: int = 1
    fail_fast: bool = False
    force: bool = False  # re-run every demo, whatever its record says
    force_names: frozenset[str] = frozenset()  # re-run these entries
    frozen: bool = False  # run nothing: every result comes from its record
    wait: bool = True  # another build of the project is running: wait for it (else exit status 2)
    shard: tuple[int, int] | None = None  # (K, N): run only shard K of N, record it, write no site
    keep_warm: bool = False  # leave the fork server running for the next build (serve)
    prune: bool = False  # once published, remove the records of entries that are gone (the demos folder is the project's)
