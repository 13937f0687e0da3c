"""What builds that died left behind, removed at the start of every build (holding the project's lock).

The temporary files and folders (``*.tmp-PID...``, PID a process that is gone) of builds that
died (SIGKILL, power loss) in the records folder and the record folders' sections, the
builder's cache and beside the output folder.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from site_builder.fs import relative_to_root, remove_dead_temporaries
from site_builder.project.folders import Folders

log = logging.getLogger(__name__)


def remove_leftovers(folders: Folders, names: Iterable[str]) -> None:
    """Remove what builds that died left behind beside the records of the entries ``names`` (and
    in the cache, beside the output folder); say so in one line when there was something."""
    # each section once: a site of thousands of entries has a few sections
    sections = {folders.records.joinpath(*section.split("/"))
                for section in {name.rpartition("/")[0] for name in names} if section} | {folders.records}
    # (folder, the start of the names the builder gives its temporaries there)
    places = [*((folder, ".") for folder in sorted(sections)), (folders.cache, ""),
              (folders.cache / "thumbnails", ""), (folders.output.parent, f".{folders.output.name}.tmp-")]
    removed = []
    for folder, prefix in places:
        shown = relative_to_root(folder, folders.root, as_folder=True)
        removed += [f"{shown}{name}" for name in remove_dead_temporaries(folder, prefix)]
    if removed:
        shown = ", ".join(removed[:3]) + (f" and {len(removed) - 3} more" if len(removed) > 3 else "")
        log.info("removed %d temporary file(s) left by a build that was killed: %s", len(removed), shown)
