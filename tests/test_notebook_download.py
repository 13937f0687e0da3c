"""The notebook download is as careful as the page: every rich output through the page's
sanitisers, or left out; no script in any form (see downloads/notebook.py)."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.conftest import build_site, write_demo

HOSTILE_SVG = ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" '
               'height="10" onload="alert(1)"><script>alert(2)</script><a xlink:href="javascript:alert(3)">'
               '<circle r="5" onclick="alert(4)"/></a><foreignObject><p>alert(5)</p></foreignObject></svg>')

VALUES = f'''
"""values.py — values whose every form carries something hostile.

Purpose
-------
Values for the notebook download.
"""


class Everything:
    def _repr_mimebundle_(self, include=None, exclude=None):
        return {{
            "text/plain": "Everything()",
            "text/html": "<p>html-form</p><script>alert(6)</script><img src=x onerror='alert(7)'>",
            "image/svg+xml": {HOSTILE_SVG!r},
            "text/markdown": "*md-form* <img src=x onerror='alert(8)'> <script>alert(9)</script>",
            "text/latex": r"$\\frac{{a}}{{b}}$",
            "application/javascript": "alert(10)",
            "application/vnd.bokehjs_load.v0+json": "alert(11)",
            "application/json": {{"json-form": 1}},
        }}


class MarkdownOnly:
    def _repr_markdown_(self):
        return "**md-only** <b onmouseover='alert(12)'>raw</b> [js](javascript:alert(13))"


class HostileLatex:
    def _repr_latex_(self):
        return r"$\\href{{javascript:alert(14)}}{{click}}$"

    def __repr__(self):
        return "HostileLatex()"


class Svg:
    def _repr_svg_(self):
        return {HOSTILE_SVG!r}


class Lines:
    def _repr_html_(self):
        return "<p>one</p>\\n<p>two — zwei</p>\\n"

    def __repr__(self):
        return "Lines(\\n  two — zwei\\n)"


# %% B-everything
Everything()

# %% B-markdown
MarkdownOnly()

# %% B-latex
HostileLatex()

# %% B-svg tags=["hide-input"]
Svg()

# %% B-lines
print("first line\\nsecond line, é")
Lines()
'''

DISPLAYS = f'''
"""displays.py — display() outputs whose every form carries something hostile.

Purpose
-------
Displays for the notebook download.
"""
from IPython.display import HTML, SVG, Javascript, Markdown, display

# %% B-displays
display(HTML("<i>shown-html</i><script>alert(20)</script>"))
display(SVG({HOSTILE_SVG!r}))
display(Markdown("*shown-md* <script>alert(21)</script>"))
display(Javascript("alert(22)"))
display({{"text/plain": "raw-plain", "application/javascript": "alert(23)", "text/html": "<b onclick='alert(24)'>raw-html</b>"}}, raw=True)
print("after")
'''


@pytest.fixture(scope="module")
def downloads(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """Each demo's notebook download, as its file's bytes."""
    project = tmp_path_factory.mktemp("download")
    write_demo(project, "values", VALUES)
    names = ["values"]
    try:
        import IPython  # noqa: F401
        write_demo(project, "displays", DISPLAYS)
        names.append("displays")
    except ImportError:
        pass
    site = build_site(project)
    return {name: (site / name / f"{name}.ipynb").read_bytes() for name in names}


@pytest.fixture(scope="module")
def notebooks(downloads: dict[str, bytes]) -> dict[str, dict]:
    return {name: json.loads(raw.decode("utf-8")) for name, raw in downloads.items()}


def outputs(notebook: dict) -> dict[str, list[dict]]:
    """Each code cell's outputs, by the block name in its source's last line."""
    return {"".join(c["source"]).strip().splitlines()[-1]: c["outputs"]
            for c in notebook["cells"] if c["cell_type"] == "code"}


def text(data: dict, mime: str) -> str:
    value = data[mime]
    return "".join(value) if isinstance(value, list) else value


class _Markup(HTMLParser):
    """Every element and attribute of an HTML or SVG form, as a viewer's browser would build them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += [(name, value or "") for name, value in attrs]


def test_no_script_reaches_the_download(notebooks: dict[str, dict]) -> None:
    for name, notebook in notebooks.items():
        for cell in notebook["cells"]:
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                assert set(data) <= {"text/plain", "text/html", "image/svg+xml", "text/latex", "application/json",
                                     "image/png"}, (name, sorted(data))
                markup = _Markup()
                for mime in ("text/html", "image/svg+xml"):
                    if mime in data:
                        markup.feed(text(data, mime))
                assert not {"script", "foreignobject", "iframe"} & set(markup.tags), (name, markup.tags)
                for attribute, value in markup.attributes:
                    assert not attribute.startswith("on"), (name, attribute)
                    assert "javascript:" not in value.lower(), (name, attribute, value)


def test_every_download_is_a_valid_notebook(notebooks: dict[str, dict]) -> None:
    import nbformat

    for notebook in notebooks.values():  # streams, values, display() outputs, tags: each one's shape
        nbformat.validate(nbformat.from_dict(notebook))
    tagged = [c for c in notebooks["values"]["cells"] if c["cell_type"] == "code" and c["metadata"]]
    assert [c["metadata"] for c in tagged] == [{"tags": ["hide-input"]}]


def test_every_download_is_the_file_nbformat_writes(downloads: dict[str, bytes]) -> None:
    import nbformat

    for name, raw in downloads.items():  # the same bytes: a notebook saved by Jupyter diffs clean
        assert nbformat.writes(nbformat.reads(raw.decode("utf-8"), as_version=4)) + "\n" == raw.decode("utf-8"), name
    shown = outputs(json.loads(downloads["values"]))["Lines()"]
    assert shown[0]["text"] == ["first line\n", "second line, é\n"]  # line by line, as Jupyter keeps it
    assert shown[1]["data"]["text/html"] == ["<p>one</p>\n", "<p>two — zwei</p>"]
    assert shown[1]["data"]["text/plain"] == ["Lines(\n", "  two — zwei\n", ")"]


def test_every_form_the_page_shows_is_kept_sanitised(notebooks: dict[str, dict]) -> None:
    cells = outputs(notebooks["values"])
    data = cells["Everything()"][0]["data"]
    assert sorted(data) == ["application/json", "image/svg+xml", "text/html", "text/latex", "text/plain"]
    assert text(data, "text/html") == '<p>html-form</p><img src="x">'
    assert text(data, "image/svg+xml").startswith("<svg") and "<circle" in text(data, "image/svg+xml")
    assert text(data, "text/latex") == r"$\frac{a}{b}$" and data["application/json"] == {"json-form": 1}
    # Markdown alone shows as the page shows it: rendered, its raw HTML as text, its javascript: link dead.
    markdown = cells["MarkdownOnly()"][0]["data"]
    assert "text/markdown" not in markdown
    assert text(markdown, "text/html") == ("<p><strong>md-only</strong> &lt;b onmouseover='alert(12)'&gt;raw&lt;/b&gt;"
                                           ' <a rel="noopener noreferrer">js</a></p>')
    # A formula the page cannot render (\href) is left out; its text form stays.
    assert list(cells["HostileLatex()"][0]["data"]) == ["text/plain"]
    svg = text(cells["Svg()"][0]["data"], "image/svg+xml")
    assert svg.startswith("<svg") and "<circle" in svg


def test_display_outputs_are_as_careful(notebooks: dict[str, dict]) -> None:
    if "displays" not in notebooks:
        pytest.skip("display() comes from IPython")
    shown = outputs(notebooks["displays"])['print("after")']
    kinds = [(o["output_type"], sorted(o.get("data", {}))) for o in shown]
    assert kinds == [
        ("display_data", ["text/html", "text/plain"]),
        ("display_data", ["image/svg+xml", "text/plain"]),
        ("display_data", ["text/html", "text/plain"]),
        ("display_data", ["text/plain"]),
        ("display_data", ["text/html", "text/plain"]),
        ("stream", []),
    ], kinds
    assert text(shown[0]["data"], "text/html") == "<i>shown-html</i>"
    assert "<em>shown-md</em>" in text(shown[2]["data"], "text/html")
    assert text(shown[4]["data"], "text/html") == "<b>raw-html</b>"
