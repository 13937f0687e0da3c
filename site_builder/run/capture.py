"""The parent's copy of one block's output, as the runner reports it: all of it up to the
limit, else head and tail in memory and the whole (to a cap) in a file.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any, BinaryIO, Callable

from site_builder.ansi import remove_escapes
from site_builder.fs import create_new
from site_builder.run.results import Display, OutputChunk

FULL_OUTPUT_CAP = 100 * 1024 * 1024  # bytes of a truncated block's complete output kept on disk


class BlockOutput:
    """One block's output: all of it up to the limit, else head + tail in memory."""

    def __init__(self, limit: int, full_path: Path, scrub: Callable[[str], str]) -> None:
        self.limit = max(2, limit)
        self.head_budget = self.limit // 2
        self.tail_budget = self.limit - self.head_budget
        self.full_path = full_path
        self.scrub = scrub
        self.parts: list[tuple[str, list[bytes]]] = []  # everything, until cut; then the head
        self.tail: deque[tuple[str, bytes]] = deque()
        self.size = self.newlines = self.tail_size = self.file_size = 0
        self.file: BinaryIO | None = None

    def add(self, stream: str, text: str) -> None:
        data = text.encode("utf-8", "replace")
        self.size += len(data)
        self.newlines += data.count(b"\n")
        if self.file is None:
            if self.parts and self.parts[-1][0] == stream:
                self.parts[-1][1].append(data)
            else:
                self.parts.append((stream, [data]))
            if self.size > self.limit:
                self._cut()
            return
        self._write_full(data)
        self._push_tail(stream, data)

    def add_display(self, display: Display) -> None:
        """A display() output, between what was written before and after it (none in the cut middle)."""
        if self.file is None:
            self.parts.append(("display", [display]))  # type: ignore[list-item]
        else:
            self.tail.append(("display", display))  # type: ignore[arg-type]

    def _cut(self) -> None:
        self.file = create_new(self.full_path)
        flat: list[tuple[str, Any]] = [(stream, pieces[0] if stream == "display" else b"".join(pieces))
                                       for stream, pieces in self.parts]
        for stream, data in flat:
            if stream != "display":
                self._write_full(data)
        head: list[tuple[str, list[Any]]] = []
        n = 0
        for stream, data in flat:
            if n >= self.head_budget:
                break
            if stream == "display":
                head.append((stream, [data]))
                continue
            take = data[: self.head_budget - n]
            head.append((stream, [take]))
            n += len(take)
        self.parts = head
        for stream, data in reversed(flat):
            if self.tail_size >= self.tail_budget:
                break
            if stream == "display":
                self.tail.appendleft((stream, data))
                continue
            take = data[-(self.tail_budget - self.tail_size):]
            self.tail.appendleft((stream, take))
            self.tail_size += len(take)

    def _push_tail(self, stream: str, data: bytes) -> None:
        self.tail.append((stream, data[-self.tail_budget:]))
        self.tail_size += len(self.tail[-1][1])
        while self.tail_size - _size(self.tail[0][1]) >= self.tail_budget:
            self.tail_size -= _size(self.tail.popleft()[1])
        while self.tail[0][0] == "display":  # its text went out of the tail before it
            self.tail.popleft()
        excess = self.tail_size - self.tail_budget
        if excess > 0:
            stream0, first = self.tail[0]
            self.tail[0] = (stream0, first[excess:])
            self.tail_size -= excess

    def _write_full(self, data: bytes) -> None:
        assert self.file is not None
        if self.file_size >= FULL_OUTPUT_CAP:
            return
        # The complete output is a text file: colour codes would show as garbage in a browser.
        text = self.scrub(remove_escapes(data.decode("utf-8", "ignore"))).encode("utf-8")
        room = FULL_OUTPUT_CAP - self.file_size
        if len(text) > room:
            text = text[:room] + b"\n[site_builder: output cut at 100 MB]\n"
        self.file.write(text)
        self.file_size += len(text)

    def result(self, builder_rel: str) -> dict[str, Any]:
        """BlockResult fields describing this output."""
        head = self._merge([(s, p[0] if s == "display" else b"".join(p)) for s, p in self.parts])
        if self.file is None:
            return {"output": head}
        self.file.close()
        tail = self._merge(list(self.tail))
        kept = sum(len(p) for s, pieces in self.parts if s != "display" for p in pieces) + self.tail_size
        kept_lines = sum(p.count(b"\n") for s, pieces in self.parts if s != "display" for p in pieces)
        kept_lines += sum(d.count(b"\n") for s, d in self.tail if s != "display")
        return {
            "output": head + tail,
            "omitted_bytes": self.size - kept,
            "omitted_lines": self.newlines - kept_lines,
            "full_output": builder_rel,
            "omitted_at": len(head),
        }

    def _merge(self, pieces: list[tuple[str, Any]]) -> tuple[OutputChunk, ...]:
        merged: list[tuple[str, list[Any]]] = []
        for stream, data in pieces:
            if merged and merged[-1][0] == stream and stream != "display":
                merged[-1][1].append(data)
            elif data:
                merged.append((stream, [data]))
        # "ignore": the only undecodable bytes are characters cut in half at the cut
        return tuple(
            OutputChunk("display", p[0].text, p[0]) if stream == "display" else
            OutputChunk(stream, self.scrub(b"".join(p).decode("utf-8", "ignore")))  # type: ignore[arg-type]
            for stream, p in merged
        )


def _size(data: Any) -> int:
    """Bytes of a piece of output (a display counts for nothing)."""
    return len(data) if isinstance(data, bytes) else 0
