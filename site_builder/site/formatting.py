"""Small formatters shared by the pages, the progress display and ``check``.

Standard library only, so that the progress display and a build with nothing to render
do not import the rendering libraries.
"""

from __future__ import annotations


def format_size(n: int) -> str:
    """Human-readable decimal size: "512 bytes", "12.3 kB", "4.0 MB"."""
    if n < 1000:
        return f"{n} byte" if n == 1 else f"{n} bytes"
    value = float(n)
    for unit in ("kB", "MB", "GB", "TB"):
        value /= 1000
        if value < 999.95 or unit == "TB":
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


def format_duration(seconds: float) -> str:
    """Short duration: "12 ms", "3.4 s", "2 min 05 s"."""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes} min {secs:02d} s"


def join_words(words: tuple[str, ...] | list[str]) -> str:
    """English list: "A", "A and B", "A, B and C"."""
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]
