"""Terminal output for a web page: ANSI colour codes -> CSS classes, ``\\r`` progress bars collapsed.

A demo's output is meant for a terminal.  Colours (SGR escape sequences) become spans
with classes (``ansi-red``, ``ansi-bold``...; the page's CSP forbids inline styles, so
colours the stylesheet has no class for, 256-colour and true-colour, are dropped), every
other escape or control sequence is removed, and a line rewritten with carriage returns
(a progress bar) shows only its last state, as the terminal would.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# CSI (ESC [ ... final byte), OSC (ESC ] ... BEL or ESC \), and two-byte escapes.
_ESCAPE = re.compile(
    r"\x1b\[(?P<csi>[0-?]*)[ -/]*(?P<final>[@-~])"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[@-Z\\-_]?"
)
_SGR = re.compile(r"\x1b\[[0-9;:]*m")
# C0 controls a page cannot show; tab and newline stay, carriage return is handled first.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f]")
_COLOURS = ("black", "red", "green", "yellow", "blue", "magenta", "cyan", "white")


@dataclass(frozen=True)
class Span:
    """A run of output text with one look: ``classes`` is "" for plain text."""

    text: str
    classes: str = ""


def collapse_carriage_returns(text: str) -> str:
    """Each line as a terminal leaves it: only what follows its last ``\\r`` (colour codes kept)."""
    if "\r" not in text:
        return text
    lines = text.replace("\r\n", "\n").split("\n")
    for i, line in enumerate(lines):
        if "\r" not in line:
            continue
        parts = line.split("\r")
        # The last part that shows something; "done\r" followed by a newline shows "done".
        last = max((k for k, p in enumerate(parts) if _visible(p)), default=len(parts) - 1)
        # Colour set while drawing an overwritten state still applies to what follows.
        carried = "".join(m.group(0) for p in parts[:last] for m in _SGR.finditer(p))
        lines[i] = carried + parts[last]
    return "\n".join(lines)


def _visible(part: str) -> bool:
    return bool(_ESCAPE.sub("", part).strip())


def remove_escapes(text: str) -> str:
    """``text`` without terminal escape sequences (colours, cursor moves, titles); all else kept."""
    return _ESCAPE.sub("", text) if "\x1b" in text else text


def strip(text: str) -> str:
    """``text`` without escape sequences and unprintable control characters (``\\r`` collapsed)."""
    return _CONTROL.sub("", _ESCAPE.sub("", collapse_carriage_returns(text)))


class _Style:
    """The SGR state: what the current text looks like."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.bold = self.dim = self.italic = self.underline = self.inverse = False
        self.fg: str | None = None
        self.bg: str | None = None

    def apply(self, params: str) -> None:
        codes = [int(c) if c.isdigit() else 0 for c in re.split(r"[;:]", params)] if params else [0]
        i = 0
        while i < len(codes):
            code = codes[i]
            if code == 0:
                self.reset()
            elif code == 1:
                self.bold = True
            elif code == 2:
                self.dim = True
            elif code == 3:
                self.italic = True
            elif code == 4:
                self.underline = True
            elif code == 7:
                self.inverse = True
            elif code == 22:
                self.bold = self.dim = False
            elif code == 23:
                self.italic = False
            elif code == 24:
                self.underline = False
            elif code == 27:
                self.inverse = False
            elif 30 <= code <= 37:
                self.fg = _COLOURS[code - 30]
            elif 90 <= code <= 97:
                self.fg = "bright-" + _COLOURS[code - 90]
            elif code == 39:
                self.fg = None
            elif 40 <= code <= 47:
                self.bg = _COLOURS[code - 40]
            elif 100 <= code <= 107:
                self.bg = "bright-" + _COLOURS[code - 100]
            elif code == 49:
                self.bg = None
            elif code in (38, 48):
                i += self._extended(code, codes[i + 1:])
            i += 1

    def _extended(self, code: int, rest: list[int]) -> int:
        """Handle 38/48;5;N and 38/48;2;R;G;B; return how many codes were consumed."""
        if rest[:1] == [5] and len(rest) >= 2:
            n = rest[1]
            name = None if n > 15 else ("bright-" if n > 7 else "") + _COLOURS[n % 8]
            if code == 38:
                self.fg = name
            else:
                self.bg = name
            return 2
        if rest[:1] == [2]:  # true colour: no class for it, so the default colour
            if code == 38:
                self.fg = None
            else:
                self.bg = None
            return 4
        return 0

    def classes(self) -> str:
        names = [name for name in ("bold", "dim", "italic", "underline") if getattr(self, name)]
        fg, bg = (self.bg, self.fg) if self.inverse else (self.fg, self.bg)
        if self.inverse and fg is None:
            names.append("ansi-inverse")
        if fg:
            names.append(f"ansi-{fg}")
        if bg:
            names.append(f"ansi-bg-{bg}")
        return " ".join(n if n.startswith("ansi-") else f"ansi-{n}" for n in names)


def to_spans(text: str) -> tuple[Span, ...]:
    """Split terminal output into styled spans: colours as classes, other escapes removed."""
    text = collapse_carriage_returns(text)
    if "\x1b" not in text:
        return (Span(_CONTROL.sub("", text)),) if text else ()
    style = _Style()
    spans: list[Span] = []
    pos = 0

    def add(piece: str) -> None:
        piece = _CONTROL.sub("", piece)
        if not piece:
            return
        classes = style.classes()
        if spans and spans[-1].classes == classes:
            spans[-1] = Span(spans[-1].text + piece, classes)
        else:
            spans.append(Span(piece, classes))

    for m in _ESCAPE.finditer(text):
        add(text[pos:m.start()])
        pos = m.end()
        if m.group("final") == "m":
            style.apply(m.group("csi"))
    add(text[pos:])
    return tuple(spans)
