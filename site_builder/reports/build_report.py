"""What a build did, as the reports (progress summary, JUnit, annotations, shard outcome) read it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from site_builder.site.sitefiles import EntryBuild


@dataclass
class BuildReport:
    """What a build did: one result per entry, the failures, where the site went."""

    builds: list[EntryBuild] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    site_dir: Path | None = None
    published: bool = False
    from_cache: set[str] = field(default_factory=set)  # entries whose result came from the records
    not_run: list[str] = field(default_factory=list)  # entries --fail-fast stopped before they ran
    wall_time: float = 0.0  # seconds the whole build took
    unchanged: bool = False  # nothing changed since the published site was built: nothing was written
    pruned: str = ""  # what the build removed because its entry or figure is gone (one line), or ""
    search_pending: bool = False  # published with the previous search index (defer_search): made later

    @property
    def ok(self) -> bool:
        return not self.failures
