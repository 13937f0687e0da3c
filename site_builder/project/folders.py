"""The project's own folders that every command shares: the builder's cache in the records folder."""

from __future__ import annotations

from pathlib import Path

from site_builder.config import Config
from site_builder.fs import make_dirs, write_new, writing

CACHE_DIR = ".cache"  # inside the records folder


def cache_dir(config: Config) -> Path:
    """The builder's own cache folder, inside the records folder and git-ignored."""
    return config.records / CACHE_DIR


def ensure_cache_dir(config: Config) -> Path:
    """The cache folder, created with the ``.gitignore`` that keeps it out of commits."""
    folder = cache_dir(config)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        with writing("creating the builder's cache folder", folder, config.root):
            make_dirs(folder)
            write_new(ignore, b"# the site builder's cache: never commit it\n*\n")
    return folder
