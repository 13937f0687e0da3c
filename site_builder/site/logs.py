"""What the builder logs, captured: collected to be said again, or held back to be said later.

The one log-capture helper: an unchanged rebuild says again the warnings the last render
said (commands/build.py), and a page rendered while demos ran holds back what rendering it
logged until the site is assembled in site order (pages/early.py).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def captured_records(level: int = logging.NOTSET, hold: bool = False) -> Iterator[list[logging.LogRecord]]:
    """The records of ``level`` or above that the builder logs meanwhile, in order; with ``hold``,
    only this thread's, held back from every handler (other threads' records pass as usual)."""
    me = threading.get_ident()
    found: list[logging.LogRecord] = []

    def passes(record: logging.LogRecord) -> bool:
        return record.thread != me

    class _Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if not hold or record.thread == me:
                found.append(record)

    keep = _Keep(level)
    if not hold:
        logger = logging.getLogger("site_builder")
        logger.addHandler(keep)
        try:
            yield found
        finally:
            logger.removeHandler(keep)
        return
    chain: list[logging.Handler] = []
    walked: logging.Logger | None = logging.getLogger("site_builder")
    while walked is not None:
        chain.extend(walked.handlers)
        walked = walked.parent if walked.propagate else None
    for handler in chain:
        handler.addFilter(passes)
    logging.getLogger().addHandler(keep)  # a handler found: no last-resort printing meanwhile
    try:
        yield found
    finally:
        logging.getLogger().removeHandler(keep)
        for handler in chain:
            handler.removeFilter(passes)
