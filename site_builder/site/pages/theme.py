"""Code colours for the light and dark themes, readable in both (WCAG AA, 4.5:1).

The page follows the system setting unless the reader picked a theme with the toggle,
which sets ``data-theme`` on ``<html>``; the rules below cover the four cases without
one theme's token colours leaking into the other's.
"""

from __future__ import annotations

import functools
import re

from pygments.formatters import HtmlFormatter
from pygments.styles import get_style_by_name

LIGHT_STYLE = "default"
DARK_STYLE = "github-dark"
MIN_CONTRAST = 4.5  # WCAG AA for normal text
# "color: #abc" but not "background-color: #abc"
_COLOR = re.compile(r"(?<![\w-])color:\s*#([0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b")


def _rgb(hex_colour: str) -> tuple[float, float, float]:
    h = hex_colour.lstrip("#")
    if len(h) == 3:
        h = "".join(c * 2 for c in h)
    return (int(h[0:2], 16) / 255, int(h[2:4], 16) / 255, int(h[4:6], 16) / 255)


def _luminance(rgb: tuple[float, float, float]) -> float:
    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(foreground: str, background: str) -> float:
    """WCAG contrast ratio of two ``#rrggbb`` colours (1 to 21)."""
    a, b = sorted((_luminance(_rgb(foreground)), _luminance(_rgb(background))), reverse=True)
    return (a + 0.05) / (b + 0.05)


def readable(foreground: str, background: str) -> str:
    """``foreground``, moved towards black or white just enough to reach 4.5:1 on ``background``."""
    if contrast(foreground, background) >= MIN_CONTRAST:
        return foreground
    target = 0.0 if _luminance(_rgb(background)) > 0.18 else 1.0
    rgb = _rgb(foreground)
    for step in range(1, 21):
        t = step / 20
        mixed = tuple(c + (target - c) * t for c in rgb)
        colour = "#" + "".join(f"{round(c * 255):02x}" for c in mixed)
        if contrast(colour, background) >= MIN_CONTRAST:
            return colour
    return "#000000" if target == 0.0 else "#ffffff"


def _style_defs(style: str, selectors: list[str]) -> str:
    """Background and token rules of a Pygments style under ``selectors``, colours made readable."""
    formatter = HtmlFormatter(style=style, cssclass="highlight")
    background = get_style_by_name(style).background_color
    rules = [*formatter.get_background_style_defs(selectors), *formatter.get_token_style_defs(selectors)]
    css = "\n".join(rules)
    return _COLOR.sub(lambda m: "color: " + readable("#" + m.group(1), background), css)


def _indent(css: str) -> str:
    return "\n".join("  " + line for line in css.splitlines())


@functools.cache  # the same text for every page and build of a process (serve's rebuilds): about 8 ms of CPU
def pygments_css() -> str:
    """Code colours: chosen theme via ``[data-theme]``, else the system's ``prefers-color-scheme``."""
    light = _style_defs(LIGHT_STYLE, [':root[data-theme="light"] .highlight'])
    light_default = _style_defs(LIGHT_STYLE, [":root:not([data-theme]) .highlight"])
    light_print = _style_defs(LIGHT_STYLE, [":root .highlight"])
    dark = _style_defs(DARK_STYLE, [':root[data-theme="dark"] .highlight'])
    dark_default = _style_defs(DARK_STYLE, [":root:not([data-theme]) .highlight"])
    return (
        f"/* Pygments: {LIGHT_STYLE} (light), {DARK_STYLE} (dark), colours raised to "
        f"{MIN_CONTRAST}:1 where needed */\n"
        f"{light}\n"
        f"@media not all and (prefers-color-scheme: dark) {{\n{_indent(light_default)}\n}}\n"
        # Paper is white: dark colours are for screens only, print always uses the light ones.
        f"@media print {{\n{_indent(light_print)}\n}}\n"
        f"@media screen {{\n{_indent(dark)}\n}}\n"
        f"@media screen and (prefers-color-scheme: dark) {{\n{_indent(dark_default)}\n}}\n"
    )
