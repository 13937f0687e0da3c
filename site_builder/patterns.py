"""The ``run_pattern`` and ``ignore_pattern`` settings: regular expressions run with a time bound.

Settings are data, not code: a pattern like ``(a|aa)+$`` backtracks for ages on a long file
name, and Python's ``re`` cannot be stopped.  The ``regex`` package runs the same syntax
(``VERSION0``: as ``re`` reads it) with a timeout; a pattern that exceeds it is a
configuration error naming the setting (exit status 2).
"""

from __future__ import annotations

from dataclasses import dataclass

from site_builder.errors import UsageError

# How long one search of a setting's pattern may take on one path: far more than any sane
# pattern needs on a file name, far less than a user would wait without a word.
PATTERN_SECONDS = 1.0


@dataclass(frozen=True)
class PathPattern:
    """The setting ``setting`` (e.g. "run_pattern") holding ``pattern``, searched in demos-folder paths."""

    setting: str
    pattern: str

    def search(self, path: str) -> bool:
        """True when the pattern is found in ``path`` (``re.search``); UsageError when it takes too long."""
        import regex

        try:
            return regex.search(self.pattern, path, flags=regex.VERSION0, timeout=PATTERN_SECONDS) is not None
        except TimeoutError:
            raise UsageError(
                f"pyproject.toml: [tool.site_builder] {self.setting} took more than {PATTERN_SECONDS:g} s on "
                f"{path!r}: the pattern backtracks without end (nested repetition such as (a+)+ or (a|aa)+); "
                f"simplify it: {self.pattern!r}") from None
