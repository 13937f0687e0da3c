"""Entry point for ``python -m site_builder``."""

from __future__ import annotations

from site_builder.cli import run

if __name__ == "__main__":
    run()
