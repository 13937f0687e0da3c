"""How a block's outcome reads on its page: output as styled spans, notes on why it did not run.

Used by the render stage; kept apart so render.py stays about pages and files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from site_builder.ansi import Span, to_spans
from site_builder.fs import UnsafeFileError, open_regular
from site_builder.run.execute import BlockResult, Display, OutputChunk, RunResult

FAILED_STATUSES = ("error", "timeout", "crashed", "exited")


@dataclass(frozen=True)
class OutputView:
    """One stream's run of output, as spans ready for the template."""

    stream: str  # "stdout" or "stderr"
    spans: tuple[Span, ...]


@dataclass(frozen=True)
class FoldedOutput:
    """A run of output as the page shows it: all of it, or a head and a tail around a folded middle."""

    head: tuple[OutputView, ...]  # everything when nothing is folded
    middle: tuple[OutputView, ...] = ()  # the lines hidden until the reader asks for them
    tail: tuple[OutputView, ...] = ()
    lines: int = 0  # lines in all three parts

    @property
    def folded(self) -> bool:
        """True when some lines are hidden behind the "show all" control."""
        return bool(self.middle)

    @property
    def hidden_lines(self) -> int:
        """How many lines the middle holds."""
        return _count_lines(self.middle)


def fold_output(views: tuple[OutputView, ...], max_lines: int) -> FoldedOutput:
    """Split output longer than ``max_lines`` lines into head (3/4), middle and tail (1/4)."""
    total = _count_lines(views)
    if max_lines <= 0 or total <= max_lines:
        return FoldedOutput(head=views, lines=total)
    tail_lines = max_lines // 4
    head_lines = max_lines - tail_lines
    head, rest = _split_at_line(views, head_lines)
    middle, tail = _split_at_line(rest, total - head_lines - tail_lines)
    return FoldedOutput(head=head, middle=middle, tail=tail, lines=total)


def _count_lines(views: tuple[OutputView, ...]) -> int:
    """Lines as a reader counts them: a last line without its newline still counts."""
    text = "".join(s.text for v in views for s in v.spans)
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _split_at_line(views: tuple[OutputView, ...], lines: int) -> tuple[tuple[OutputView, ...], tuple[OutputView, ...]]:
    """(the first ``lines`` lines, the rest), cutting spans and chunks at the newline that ends them."""
    before: list[OutputView] = []
    after: list[OutputView] = []
    left = lines
    for view in views:
        first: list[Span] = []
        second: list[Span] = []
        for span in view.spans:
            if left <= 0:
                second.append(span)
                continue
            cut = _after_newlines(span.text, left)
            if cut is None:  # the whole span fits
                left -= span.text.count("\n")
                first.append(span)
                continue
            left = 0
            first.append(Span(span.text[:cut], span.classes))
            if span.text[cut:]:
                second.append(Span(span.text[cut:], span.classes))
        if first:
            before.append(OutputView(view.stream, tuple(first)))
        if second:
            after.append(OutputView(view.stream, tuple(second)))
    return tuple(before), tuple(after)


def _after_newlines(text: str, n: int) -> int | None:
    """The index just past the ``n``-th newline of ``text``, or None when it has fewer."""
    at = -1
    for _ in range(n):
        at = text.find("\n", at + 1)
        if at == -1:
            return None
    return at + 1


@dataclass(frozen=True)
class OutputPart:
    """A run of printed output, folded when long, or one display() output (as the page's view
    of it), in the order the block made them."""

    fold: FoldedOutput | None = None
    display: object | None = None


def output_parts(block: BlockResult, max_lines: int,
                 view: Callable[[Display], object]) -> tuple[tuple[OutputPart, ...], tuple[OutputPart, ...]]:
    """The block's output as (head, tail) parts: the tail is empty unless the output was cut;
    ``view`` makes the page's view of a Display."""
    cut = block.omitted_at if block.full_output and block.omitted_at is not None else len(block.output)
    return _parts(block.output[:cut], max_lines, view), _parts(block.output[cut:], max_lines, view)


def _parts(chunks: tuple[OutputChunk, ...], max_lines: int,
           view: Callable[[Display], object]) -> tuple[OutputPart, ...]:
    parts: list[OutputPart] = []
    run: list[OutputChunk] = []

    def close_run() -> None:
        fold = fold_output(_views(tuple(run)), max_lines)
        if fold.lines:
            parts.append(OutputPart(fold=fold))
        run.clear()

    for chunk in chunks:
        if chunk.display is None:
            run.append(chunk)
            continue
        close_run()
        parts.append(OutputPart(display=view(chunk.display)))
    close_run()
    return tuple(parts)


def _views(chunks: tuple[OutputChunk, ...]) -> tuple[OutputView, ...]:
    views = (OutputView(c.stream, to_spans(c.text)) for c in chunks)
    return tuple(v for v in views if v.spans)


def block_note(block: BlockResult, result: RunResult, expects_error: bool) -> str:
    """A sentence for a block that did not run, ended the script, or should have raised; else ""."""
    if block.status == "not-run" and block.error is not None:  # found before anything ran
        line = f" at line {block.error.line}" if block.error.line else ""
        return f"Not run: this block has a {block.error.type}{line}: {block.error.message}"
    if block.status == "not-run":
        return not_run_reason(result)
    if block.status == "ok" and block.error is not None and block.error.type == "SystemExit":
        return f"Ended the script here ({block.error.message}); the blocks after it were not run."
    if block.status == "ok" and expects_error:
        return 'Expected to raise an exception (tags=["raises-exception"]), but it did not.'
    return ""


def not_run_reason(result: RunResult) -> str:
    """Why the blocks of ``result`` that have no outcome were not run."""
    if result.shown_only:
        return "Not run: the run_pattern setting shows this entry without running it."
    for block in result.blocks:
        if block.status in FAILED_STATUSES:
            return f"Not run: the script stopped at block {block.name}."
        if block.status == "ok" and block.error is not None and block.error.type == "SystemExit":
            return f"Not run: block {block.name} ended the script ({block.error.message})."
    if result.failure:
        return "Not run: this demo could not be started (see the message at the top of the page)."
    return "Not run."


def unpublishable(files_dir: Path, rel: str, safe: str | None, page_paths: set[str],
                  published: Iterable[str] = ()) -> str | None:
    """Why the file ``rel`` a demo wrote can't be published beside its page, or None when it can.

    ``published``: the paths already published beside the page (a name differing only in
    case from one of them is skipped: some hosts cannot tell them apart).
    """
    if safe is None:
        return "its path leaves the entry's folder"
    if any(part.startswith(".") for part in safe.split("/")):
        return "hidden files (names starting with '.', such as .htaccess) are never published"
    folded = {p.lower(): p for p in page_paths}
    if safe.lower() in folded:
        return f"its name clashes with the page's own {folded[safe.lower()]}"
    for other in published:
        if other != safe and other.lower() == safe.lower():
            return f"its name differs only in case from {other}, published already"
    try:
        open_regular(files_dir, safe).close()  # a link could publish any file of the machine
    except UnsafeFileError as exc:
        return exc.reason
    return None
