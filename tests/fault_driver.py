"""Run ``python -m site_builder ARGS`` with a fault injected into the builder's writes (tests only).

Every write the builder makes calls ``site_builder.fs.note_write`` first; this driver
replaces it.  Each call is known by its *site*: the builder's function that asked for the
write and the chain of ``fs`` functions it went through (``record_file.py:save_record:write_new``).

- ``FAULT_LOG=FILE``: append the site of every write, one a line (the counting pass);
- ``FAULT_SITE=SITE`` and ``FAULT_ERRNO=N``: the first write at that site fails with OSError(N).

Usage: ``python tests/fault_driver.py build -j 1``.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import site_builder.fs as fs

_LOCK = threading.Lock()
_FIRED = False


def site_of_caller() -> str:
    """``module.py:function:fs_function>fs_function`` of the write being made."""
    frame = sys._getframe(2)  # the fs function that called note_write
    chain = []
    while frame is not None and Path(frame.f_code.co_filename).parent.name == "fs":
        chain.append(frame.f_code.co_name)
        frame = frame.f_back
    caller = f"{Path(frame.f_code.co_filename).name}:{frame.f_code.co_name}" if frame else "?"
    return f"{caller}:{'>'.join(reversed(chain))}"


def note_write(path: Path) -> None:
    global _FIRED
    site = site_of_caller()
    with _LOCK:
        if os.environ.get("FAULT_LOG"):
            with open(os.environ["FAULT_LOG"], "a", encoding="utf-8") as log:
                log.write(site + "\n")
        if not _FIRED and site == os.environ.get("FAULT_SITE"):
            _FIRED = True
            code = int(os.environ["FAULT_ERRNO"])
            raise OSError(code, os.strerror(code), str(path))


def install() -> None:
    """Put ``note_write`` in place of fs's, also in every builder module that already imported it
    by name (the tests' warm interpreter has imported the whole builder before this runs)."""
    original = fs.note_write
    for name, module in list(sys.modules.items()):
        if name.startswith("site_builder") and getattr(module, "note_write", None) is original:
            module.note_write = note_write  # type: ignore[attr-defined]


if __name__ == "__main__":
    install()
    sys.argv = ["site_builder", *sys.argv[1:]]
    from site_builder.cli import run

    run()
