"""SVG files the site publishes are inert: no script, handler, foreign content or outside link."""

from __future__ import annotations

import pytest

from site_builder.site.safety.svg import UnsafeSvgError, clean_svg

HOSTILE = b"""<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"
 width="20" height="20" onload="alert(1)">
<script>alert(2)</script>
<foreignObject><body xmlns="http://www.w3.org/1999/xhtml"><img src="x" onerror="alert(3)"/></body></foreignObject>
<a xlink:href="javascript:alert(4)"><circle r="5" onclick="alert(5)"/></a>
<a href="https://example.org/"><rect width="2" height="2"/></a>
<set attributeName="onmouseover" to="alert(6)"/>
<animate attributeName="href" values="javascript:alert(7)"/>
<defs><path id="m" d="M0 0L1 1"/></defs><use xlink:href="#m"/>
<image href="data:image/png;base64,iVBORw0KGgo="/><image href="https://example.org/x.png"/>
<style>circle { fill: url(https://example.org/track); } rect { fill: url(#grad); }</style>
<rect style="fill: url(http://example.org/)" width="1" height="1"/>
</svg>"""


def test_scripts_handlers_and_outside_links_are_removed() -> None:
    out = clean_svg(HOSTILE).decode()
    for bad in ("<script", "alert", "foreignObject", "javascript:", "example.org", "onload", "onclick"):
        assert bad not in out, bad
    # what draws stays: shapes, local references, embedded raster images, local paints
    assert "<circle" in out and '<use xlink:href="#m"' in out and "data:image/png;base64" in out
    assert "url(#grad)" in out


def test_matplotlib_svg_keeps_its_drawing() -> None:
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0], "o-")
    buf = io.BytesIO()
    fig.savefig(buf, format="svg")
    plt.close(fig)
    out = clean_svg(buf.getvalue())
    assert out.count(b"<use") == buf.getvalue().count(b"<use") > 0  # the markers
    assert out.count(b"<path") == buf.getvalue().count(b"<path")


@pytest.mark.parametrize("data", [
    b"<!DOCTYPE svg [<!ENTITY a 'aaaa'>]><svg xmlns='http://www.w3.org/2000/svg'>&a;</svg>",
    b"<svg xmlns='http://www.w3.org/2000/svg'><circle></svg>",
    b"<html><script>alert(1)</script></html>",
])
def test_what_cannot_be_made_safe_is_refused(data: bytes) -> None:
    with pytest.raises(UnsafeSvgError):
        clean_svg(data)
