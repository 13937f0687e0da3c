"""Entry point for ``python -m site_builder``."""

from __future__ import annotations

import sys

from site_builder.cli import main

if __name__ == "__main__":
    sys.exit(main())
