"""Disk helpers every stage shares: safe joins, link-free reads and copies, atomic folder swaps.

Shared bottom layer: imports nothing of site_builder but ``errors``.  ``reading``: records
and demo files are data, read only through :func:`open_regular`, which follows no link.
``writes``: every write the builder makes goes through one of its functions, each of which
calls :func:`note_write` first (the tests make the Nth write fail there), and every failed
write reaches the user through :func:`writing` as one line: what, where, what to do.
``dirs``: atomic folder swaps, dead builds' leftovers, what the builder may replace.
The stages import these names from ``site_builder.fs``.
"""

from __future__ import annotations

from site_builder.fs.reading import (
    UnsafeFileError,
    UnsafePathError,
    open_regular,
    racy,
    safe_join,
    sha256_regular,
    walk_names,
)
from site_builder.fs.writes import (
    copy_regular,
    create_new,
    link_or_copy,
    make_dirs,
    make_temp_dir,
    note_write,
    open_for_update,
    relative_to_root,
    rename,
    write_atomic,
    write_failure,
    write_new,
    writing,
)
from site_builder.fs.dirs import (
    SITE_MARK,
    adopt_dir,
    check_replaceable,
    link_names,
    make_records_dir,
    recover,
    remove_dead_temporaries,
    remove_links,
    replace_dir,
)

__all__ = [
    "SITE_MARK", "UnsafeFileError", "UnsafePathError", "adopt_dir", "check_replaceable", "copy_regular",
    "create_new", "link_names", "link_or_copy", "make_dirs", "make_records_dir", "make_temp_dir", "note_write",
    "open_for_update", "open_regular", "racy", "recover", "relative_to_root", "remove_dead_temporaries", "remove_links",
    "rename", "replace_dir", "safe_join", "sha256_regular", "walk_names", "write_atomic",
    "write_failure", "write_new", "writing",
]
