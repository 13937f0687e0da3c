"""The display protocol: values and display() outputs show their richest safe form, in
order with what the block prints, on the page, in the notebook and in the record."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import build_site, copy_of, run_cli, shared_folder, write_demo
from tests.page_reader import cell, page

# A 1x1 red PNG, made by hand (no library needed in the demo).
PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de"
    "0000000c4944415408d763f8cfc000000301010018dd8db00000000049454e44ae426082")).decode()

REPRS = f'''
"""reprs.py — every form of the display protocol, as a value.

Purpose
-------
Show values.
"""
import base64


class Png:
    def _repr_png_(self):
        return base64.b64decode("{PNG}")

    def __repr__(self):
        return "a red dot"


class Svg:
    """A hostile SVG: its script and handlers must never run."""

    def _repr_svg_(self):
        return ('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" onload="alert(1)">'
                '<script>alert(2)</script><circle r="5" onclick="alert(3)"/></svg>')


class Latex:
    def _repr_latex_(self):
        return r"$$\\frac{{a}}{{b}}$$"


class Md:
    def _repr_markdown_(self):
        return "some **bold-md** text <script>alert(4)</script>"


class Js:
    def _repr_json_(self):
        return {{"key": [1, 2], "name": "json-value"}}


class Bundle:
    """Claims text/html with a script, and carries a vendor type the page does not show."""

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {{"text/html": "<p>bundle-html</p><script>alert(5)</script><b onmouseover='alert(6)'>b</b>",
                "application/vnd.example.v1+json": {{"data": [], "layout": {{"title": "plot"}}}},
                "text/plain": "Bundle()"}}


class Huge:
    def _repr_html_(self):
        return "<p>" + "x" * 300_000 + "</p>"

    def __repr__(self):
        return "Huge()"


# %% B-png
Png()

# %% B-svg
Svg()

# %% B-latex
Latex()

# %% B-md
Md()

# %% B-json
Js()

# %% B-bundle
Bundle()

# %% B-huge
Huge()

# %% B-pil
from PIL import Image
Image.new("RGB", (8, 6), (0, 128, 255))
'''

DISPLAYS = '''
"""displays.py — display() calls between prints.

Purpose
-------
Show displays.
"""
from IPython.display import HTML, Markdown, display

# %% B-mixed
print("first-line")
display(HTML("<em>shown-html</em>"))
print("second-line")
display(Markdown("*shown-md*"), {"a": 1})
print("third-line")
display({"text/plain": "raw-plain", "text/html": "<i>raw-html</i>"}, raw=True)
'''


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project, built once per test run for every worker: its tests only read it (or copy it)."""

    def make(project: Path) -> None:
        (project / "pyproject.toml").write_text("[tool.site_builder]\ndisplay_limit = 100_000\n", encoding="utf-8")
        write_demo(project, "reprs", REPRS)
        try:
            import IPython  # noqa: F401
            write_demo(project, "displays", DISPLAYS)
        except ImportError:
            pass
        build_site(project)

    return shared_folder(tmp_path_factory, "display", make)


def record(built: Path, name: str) -> dict:
    return json.loads((built / "_freeze" / name / "_site_builder" / "record.json").read_text())


def _img_src(html: str) -> str:
    found = re.search(r'<img src="([^"]+)"', html)
    assert found, html
    return found.group(1)


def test_png_and_pil_images_show_as_image_files(built: Path) -> None:
    html = page(built, "reprs")
    for name in ("B-png", "B-pil"):
        src = _img_src(cell(html, name))
        assert src.endswith(".png")
        data = (built / "build" / "reprs" / src).read_bytes()
        assert data.startswith(b"\x89PNG")
    assert 'alt="a red dot"' in cell(html, "B-png")
    assert 'width="8" height="6"' in cell(html, "B-pil")


def test_hostile_svg_is_only_an_image_file(built: Path) -> None:
    html = page(built, "reprs")
    svg = cell(html, "B-svg")
    assert _img_src(svg).endswith(".svg") and "<svg" not in svg
    published = (built / "build" / "reprs" / _img_src(svg)).read_text()
    assert published.startswith("<svg") and "<circle" in published
    # opened on its own (the file is on the site's origin) it must not run anything either
    assert "<script" not in published and "alert" not in published and not re.search(r"\son\w+=", published)
    for name in ("B-svg", "B-md", "B-bundle"):
        shown = cell(html, name)
        assert "<script" not in shown, name  # markdown's raw HTML shows as text, as in prose
        assert name == "B-md" or "alert" not in shown, name
        assert not re.search(r"\son\w+=", shown), name


def test_latex_markdown_and_json_forms(built: Path) -> None:
    html = page(built, "reprs")
    assert "<math" in cell(html, "B-latex") and "<mfrac>" in cell(html, "B-latex")
    md = cell(html, "B-md")
    assert "<strong>bold-md</strong>" in md and "<script" not in md
    js = cell(html, "B-json")
    assert 'class="output value value-json"' in js and "&#34;name&#34;: &#34;json-value&#34;" in js


def test_a_bundle_claiming_html_with_a_script_is_sanitised_and_keeps_every_type(built: Path) -> None:
    bundle = cell(page(built, "reprs"), "B-bundle")
    assert "<p>bundle-html</p>" in bundle and "<script" not in bundle and "onmouseover" not in bundle
    value = next(b["value"] for b in record(built, "reprs")["blocks"] if b["name"] == "B-bundle")
    assert sorted(value["data"]) == ["application/vnd.example.v1+json", "text/html", "text/plain"]
    assert json.loads("".join(value["data"]["application/vnd.example.v1+json"]))["layout"] == {"title": "plot"}


def test_a_form_over_the_size_cap_is_named_in_a_note(built: Path) -> None:
    huge = cell(page(built, "reprs"), "B-huge")
    assert "xxxxxxxx" not in huge and "Huge()" in huge  # the repr instead
    assert "text/html form (300.0 kB) is left out" in huge and "<code>display_limit</code>" in huge
    value = next(b["value"] for b in record(built, "reprs")["blocks"] if b["name"] == "B-huge")
    assert value["omitted"] == {"text/html": 300_007}


def test_display_calls_interleave_with_prints(built: Path) -> None:
    pytest.importorskip("IPython", reason="display() comes from IPython")
    mixed = cell(page(built, "displays"), "B-mixed")
    mixed = mixed[mixed.index('<pre class="output">'):]  # what the block made, after its code
    order = [mixed.index(s) for s in ("first-line", "<em>shown-html</em>", "second-line",
                                       "<em>shown-md</em>", "{&#39;a&#39;: 1}", "third-line", "<i>raw-html</i>")]
    assert order == sorted(order)
    outputs = record(built, "displays")["blocks"][1]["output"]
    assert [o["stream"] for o in outputs] == ["stdout", "display", "stdout", "display", "display", "stdout",
                                              "display"]


def test_notebook_carries_the_same_bundles(built: Path) -> None:
    notebook = json.loads((built / "build" / "reprs" / "reprs.ipynb").read_text())
    results = {"".join(c["source"]).splitlines()[-1]: o for c in notebook["cells"] if c["cell_type"] == "code"
               for o in c["outputs"] if o["output_type"] == "execute_result"}
    assert base64.b64decode(results["Png()"]["data"]["image/png"]).startswith(b"\x89PNG")
    svg = "".join(results["Svg()"]["data"]["image/svg+xml"])
    assert svg.startswith("<svg") and "<circle" in svg and "alert" not in svg  # made inert, as on the site
    # A vendor type the page does not show is left out (some carry code for their renderer).
    assert list(results["Bundle()"]["data"]) == ["text/html", "text/plain"]
    assert "<script" not in "".join(results["Bundle()"]["data"]["text/html"])
    pytest.importorskip("IPython", reason="display() comes from IPython")
    notebook = json.loads((built / "build" / "displays" / "displays.ipynb").read_text())
    outputs = [o for c in notebook["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
    kinds = [o["output_type"] for o in outputs]
    assert kinds == ["stream", "display_data", "stream", "display_data", "display_data", "stream", "display_data"]
    assert "".join(outputs[1]["data"]["text/html"]) == "<em>shown-html</em>"


def test_a_second_build_shows_the_same_from_the_records(built: Path, tmp_path: Path) -> None:
    before = page(built, "reprs")
    project = copy_of(built, tmp_path, built.name)  # the others read the shared one; the name is the site's title
    result = run_cli("build", cwd=project)
    assert result.returncode == 0, result.stderr
    assert page(project, "reprs") == before


def test_display_is_hooked_when_the_demo_imports_ipython_itself(tmp_path: Path) -> None:
    # Run directly (no preloading): IPython is imported by the demo's block, after the hook.
    pytest.importorskip("IPython", reason="display() comes from IPython")
    from tests.test_execute import run

    r = run(tmp_path, [
        ("setup", "import sys\nprint('before', 'IPython' in sys.modules)"),
        ("B-show", "from IPython.display import display, Latex\n"
                   "import IPython.display\n"
                   "print('a')\ndisplay(Latex('$x$'))\nIPython.display.display(3)\nprint('b')"),
    ])
    assert r.ok, r.failure
    assert [(c.stream, c.text) for c in r.blocks[0].output] == [("stdout", "before False\n")]
    shown = [(c.stream, c.text, c.display.data if c.display else None) for c in r.blocks[1].output]
    assert shown == [("stdout", "a\n", None),
                     ("display", "<IPython.core.display.Latex object>", {"text/plain": "<IPython.core.display.Latex object>",
                                                                         "text/latex": "$x$"}),
                     ("display", "3", {"text/plain": "3"}),
                     ("stdout", "b\n", None)]


def test_a_hostile_record_cannot_point_a_display_elsewhere(built: Path) -> None:
    from site_builder.run.records.schema import SchemaError, parse_record
    from site_builder.run.records.record_json import from_record

    path = built / "_freeze" / "reprs" / "_site_builder" / "record.json"
    data = json.loads(path.read_text())
    png = next(b for b in data["blocks"] if b["name"] == "B-png")
    png["value"]["files"]["image/png"] = "../../etc/passwd"
    with pytest.raises(SchemaError, match=r"blocks\[1\]\.value"):
        parse_record(json.dumps(data).encode())
    png["value"]["files"] = {"image/png": "reprs.py"}  # a file, but no display file of the block
    result, _ = from_record(parse_record(json.dumps(data).encode()), path.parent.parent)
    value = next(b for b in result.blocks if b.name == "B-png").value
    assert value is not None and value.files == {} and value.text == "a red dot"
    png["value"]["data"] = {"Text/HTML; x": ["<b>"]}
    with pytest.raises(SchemaError):
        parse_record(json.dumps(data).encode())


@pytest.fixture(scope="module")
def display_url(browser: Any, built: Path) -> Iterator[str]:
    from tests.browser_support import serve_site

    with serve_site(built / "build") as url:
        yield url


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_display_pages_have_no_serious_accessibility_violation(scheme_looks: Any, display_url: str, built: Path,
                                                               scheme: str) -> None:
    from tests.browser_support import describe_violations, serious_look

    def look(page: Any, scheme: str) -> tuple[bool, list[dict[str, Any]]]:
        shown = page.locator("section#B-png img" if name == "reprs" else "section#B-mixed em").first.is_visible()
        return shown, serious_look(page, scheme)

    # reprs has every form; the dark run checks it alone (axe costs seconds a page)
    names = ["reprs", "displays"] if scheme == "light" else ["reprs"]
    for name in [n for n in names if (built / "build" / n).is_dir()]:
        (shown, serious), watch = scheme_looks.seen(display_url, display_url + f"{name}/index.html", scheme, look,
                                                    both=name == "reprs", timeout_ms=None)
        assert shown
        assert not serious, f"{name} ({scheme}): " + describe_violations(serious)
        watch.assert_clean()


def test_displays_keep_their_place_when_the_output_is_cut(tmp_path: Path) -> None:
    from site_builder.run.capture import BlockOutput
    from site_builder.run.results import Display

    out = BlockOutput(100, tmp_path / "full.txt", lambda s: s)
    first, middle, last = (Display(data={"text/plain": name}) for name in ("first", "middle", "last"))
    out.add("stdout", "a" * 20 + "\n")
    out.add_display(first)
    out.add("stdout", "b" * 300 + "\n")  # past the limit: the output is cut
    out.add_display(middle)
    out.add("stdout", "c" * 300 + "\n")
    out.add_display(last)
    out.add("stdout", "d" * 10 + "\n")
    result = out.result("_site_builder/full.txt")
    shown = [c.display.text for c in result["output"] if c.display is not None]
    assert shown == ["first", "last"]  # the one in the left-out middle is left out with it
    streams = [c.stream for c in result["output"]]
    assert streams[:2] == ["stdout", "display"] and streams[-2:] == ["display", "stdout"]
    assert result["omitted_bytes"] > 0 and (tmp_path / "full.txt").read_text().count("b") == 300
