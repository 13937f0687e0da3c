"""Compare two runs of a demo block by block: what ``check`` calls drift, as unified diffs.

Each block becomes a list of lines a reader can diff: its status, what it printed
(stderr lines marked), its error, the figures it made and the files it wrote, with the
lines of every text file (CSV, JSON, ...).  Numbers may differ by a relative tolerance:
a line is split into numbers and the text between them; the text must match exactly,
the numbers with ``math.isclose``.

Binary files and figures are compared by presence only, and a change of their bytes is a
note, not drift: PNG bytes change with the Matplotlib, FreeType and zlib versions even
when the picture does not, so they would make every check on another machine fail.
What a figure shows is checked through the numbers the block prints.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from site_builder.run.execute import BlockResult, RunResult
from site_builder.run.results import QuotedValue
from site_builder.fs import UnsafePathError, safe_join
from site_builder.run.records.inputs import sha256_file

# an optional sign, digits with an optional fraction (or a bare fraction), an optional exponent
NUMBER = re.compile(r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")
ABS_TOLERANCE = 1e-12  # below this, two numbers are the same whatever the relative tolerance
TEXT_FILE_LIMIT = 1 << 20  # bytes: larger files are compared by their hash alone
QUOTED = "values quoted in the page"  # the pseudo-block whose lines are the prose's values


@dataclass(frozen=True)
class BlockDrift:
    """One block whose two runs differ, with the unified diff saying how."""

    block: str
    diff: list[str]


@dataclass
class Comparison:
    """What differs between two runs of the same demo."""

    drifts: list[BlockDrift] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # binary files whose bytes changed

    @property
    def same(self) -> bool:
        return not self.drifts


def lines_match(old: str, new: str, tolerance: float) -> bool:
    """True when the lines are equal, their numbers within ``tolerance`` (relative) of each other."""
    if old == new:
        return True
    if tolerance <= 0:
        return False
    old_parts, new_parts = NUMBER.split(old), NUMBER.split(new)
    if len(old_parts) != len(new_parts):
        return False
    for i, (a, b) in enumerate(zip(old_parts, new_parts)):
        if i % 2 == 0:  # the text between numbers
            if a != b:
                return False
        elif a != b and not math.isclose(float(a), float(b), rel_tol=tolerance, abs_tol=ABS_TOLERANCE):
            return False
    return True


def _skeleton(line: str) -> str:
    return NUMBER.sub("#", line)


def _tolerated(old: list[str], new: list[str], tolerance: float) -> list[str]:
    """``new`` with each line that matches its counterpart in ``old`` within tolerance replaced by it."""
    if tolerance <= 0 or old == new:
        return new
    result = list(new)
    matcher = difflib.SequenceMatcher(None, [_skeleton(s) for s in old], [_skeleton(s) for s in new],
                                      autojunk=False)
    for tag, i1, i2, j1, _j2 in matcher.get_opcodes():
        if tag == "equal":
            for k in range(i2 - i1):
                if lines_match(old[i1 + k], new[j1 + k], tolerance):
                    result[j1 + k] = old[i1 + k]
    return result


def _file_lines(folder: Path, rel: str) -> tuple[list[str] | None, str | None]:
    """(the text file's lines or None when binary/too big, its sha256 or None when it is gone)."""
    try:
        path = safe_join(folder, rel)
        data = path.read_bytes() if path.stat().st_size <= TEXT_FILE_LIMIT else None
        sha = sha256_file(path)
    except (OSError, UnsafePathError):
        return None, None
    if data is None or b"\0" in data:
        return None, sha
    try:
        return data.decode("utf-8").splitlines(), sha
    except UnicodeDecodeError:
        return None, sha


def block_lines(block: BlockResult, folder: Path) -> tuple[list[str], dict[str, str | None]]:
    """The diffable lines of ``block`` (files in ``folder``), and the sha256 of each binary file."""
    lines = [f"status: {block.status}"]
    for chunk in block.output:
        mark = {"stderr": "[stderr] ", "display": "[display] "}.get(chunk.stream, "")  # display: its text/plain
        lines.extend(mark + line for line in chunk.text.splitlines())
    if block.omitted_lines:
        lines.append(f"({block.omitted_lines} lines of output omitted)")
    if block.error is not None:
        lines.append(f"error: {block.error.type}: {block.error.message}")
    binaries: dict[str, str | None] = {}
    for art in block.artifacts:
        if art.kind == "figure":
            lines.append(f"figure: {art.alt or 'no title'}")
            binaries[art.path] = _file_lines(folder, art.path)[1]
            continue
        text, sha = _file_lines(folder, art.path)
        if text is None:
            lines.append(f"file {art.path} (binary)" if sha else f"file {art.path} (deleted by the demo)")
            binaries[art.path] = sha
        else:
            lines.append(f"file {art.path}:")
            lines.extend(f"  {line}" for line in text)
    return lines, binaries


def _quoted(value: QuotedValue, rel_path: str) -> str:
    where = f"{rel_path}:{value.line}" if value.line else rel_path
    where += f" ({value.place})" if value.place else ""
    what = f"export {value.export}" if value.export else value.written
    shown = value.error or value.text if value.evaluated else "(not evaluated)"
    return f"{where}: {what} = {' '.join(shown.split())}"


def quoted_lines(result: RunResult, rel_path: str) -> list[str]:
    """The diffable lines of the values the page quotes: where, what is written, what it shows;
    then what ``glue()`` kept (its text)."""
    lines = [_quoted(v, rel_path) for v in result.quoted]
    lines += [f"glue {g.name} ({g.block}) = {' '.join(g.display.text.split())}" for g in result.glued]
    return lines


def compare_runs(old: RunResult, new: RunResult, tolerance: float, labels: tuple[str, str],
                 rel_path: str = "") -> Comparison:
    """Every block of ``old`` and ``new`` (matched by name) that differs, as unified diffs, and the
    values the page quotes (``QUOTED``, each line naming the entry's file, line and expression)."""
    comparison = Comparison()
    old_blocks = {b.name: b for b in old.blocks}
    new_blocks = {b.name: b for b in new.blocks}
    names = [b.name for b in old.blocks] + [b.name for b in new.blocks if b.name not in old_blocks]
    for name in names:
        old_lines, old_bin = block_lines(old_blocks[name], old.files_dir) if name in old_blocks else ([], {})
        new_lines, new_bin = block_lines(new_blocks[name], new.files_dir) if name in new_blocks else ([], {})
        shown = _tolerated(old_lines, new_lines, tolerance)
        if shown != old_lines:
            diff = difflib.unified_diff(old_lines, shown, f"{old.entry} {name} ({labels[0]})",
                                        f"{new.entry} {name} ({labels[1]})", lineterm="")
            comparison.drifts.append(BlockDrift(name, list(diff)))
        for path in sorted(old_bin.keys() & new_bin.keys()):
            if old_bin[path] != new_bin[path]:
                comparison.notes.append(f"{name}: the bytes of {path} differ (binary: compared by presence only)")
    old_lines, new_lines = quoted_lines(old, rel_path or old.entry), quoted_lines(new, rel_path or new.entry)
    shown = _tolerated(old_lines, new_lines, tolerance)
    if shown != old_lines:
        diff = difflib.unified_diff(old_lines, shown, f"{old.entry} page ({labels[0]})",
                                    f"{new.entry} page ({labels[1]})", lineterm="")
        comparison.drifts.append(BlockDrift(QUOTED, list(diff)))
    return comparison


def environment_rows(old: dict[str, str], new: dict[str, str]) -> list[tuple[str, str, str]] | None:
    """(key, old, new) for every environment key, Python and platform first; None when all are equal."""
    if old == new:
        return None
    first = ["python", "platform", "blas"]
    keys = [k for k in first if k in old or k in new]
    keys += sorted((old.keys() | new.keys()) - set(first))
    return [(k, old.get(k, "-"), new.get(k, "-")) for k in keys]
