"""Raw HTML in a notebook's Markdown renders as JupyterLab renders it, sanitised: formatting
kept, scripts, handlers, forms and styles dropped, images by the prose-image rule, ids in the
label namespace, a cell's unbalanced tags kept inside the cell. A script's prose shows raw HTML
as text. One shared build (module scope) of an .ipynb, a MyST .md and a house-style .py."""

from __future__ import annotations

import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

from site_builder.site.prose.html import render
from site_builder.site.prose.markdown.context import PageContext
from site_builder.site.safety.html_tags import VOID
from tests.conftest import MYST_FRONT_MATTER, run_cli, write_demo

PNG = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + b"\0" * 24

# What notebooks write (and JupyterLab renders), one construct a line.
FORMATTING = """<center><font color="red" size="5">Centred red</font></center>

Water is H<sub>2</sub>O, e = mc<sup>2</sup>, press <kbd>Ctrl</kbd>+<kbd>C</kbd>,<br>a new line, <u>under</u>, <s>struck</s>.

<div class="alert alert-block alert-info">

**Note:** Markdown *inside* an alert.

</div>

<details><summary>Click to open</summary>

Folded *text*.

</details>

<table align="left"><tr><th>x</th><th valign="top">y</th></tr><tr><td>1</td><td bgcolor="yellow">2</td></tr></table>

<p align="center">A centred paragraph.</p><hr width="50%">
"""

HOSTILE = """<script>alert('script-ran')</script>
<img src=x onerror="alert('onerror-ran')"> <b onmouseover="alert('hover-ran')">bold</b>
<a href="javascript:alert('js-link')">js</a> <a href="jav&#x61;script:alert(1)">js2</a> <a href="data:text/html,x">data</a>
<iframe src="https://evil.example/frame"></iframe><form action="https://evil.example/post"><input name="q"><button>go</button></form>
<style>body { display: none }</style><span style="position: fixed; inset: 0">styled</span>
<object data="x.swf"></object><embed src="x.swf"><base href="https://evil.example/"><meta http-equiv="refresh" content="0;url=https://evil.example/">
<svg onload="alert('svg-ran')"><circle r="3"/></svg><math><mi xlink:href="javascript:alert(1)">x</mi></math>
<video src="https://evil.example/v.mp4"></video><audio src="a.mp3"></audio><link rel="stylesheet" href="https://evil.example/x.css">
<textarea></textarea><img src="x.png" onerror="alert(1)">"""


def notebook_render(text: str, page: PageContext | None = None) -> str:
    return render(text, "markdown", page=page if page is not None else PageContext(notebook=True))


# ---------------------------------------------------------------- rendering, sanitised


def test_formatting_html_renders_as_in_jupyterlab() -> None:
    html = notebook_render(FORMATTING)
    for kept in ('<center><font color="red" size="5">Centred red</font></center>', "H<sub>2</sub>O",
                 "mc<sup>2</sup>", "<kbd>Ctrl</kbd>", "<br>", "<u>under</u>", "<s>struck</s>",
                 '<div class="alert alert-block alert-info">', "<strong>Note:</strong> Markdown <em>inside</em>",
                 "<details><summary>Click to open</summary>", "Folded <em>text</em>", '<table align="left">',
                 '<th valign="top">y</th>', '<td bgcolor="yellow">2</td>', '<p align="center">', '<hr width="50%">'):
        assert kept in html, kept
    assert "&lt;" not in html and "raw-html" not in html


def test_scripts_handlers_forms_styles_and_loads_are_dropped() -> None:
    html = notebook_render(HOSTILE)
    for gone in ("<script", "alert", "onerror", "onmouseover", "onload", "javascript", "data:text", "<iframe",
                 "<form", "<input", "<button", "<style", "style=", "<object", "<embed", "<base", "<meta",
                 "<video", "<audio", "<link", "<textarea", "evil.example", "display: none", "xlink"):
        assert gone not in html, gone
    assert "<b>bold</b>" in html and "styled" in html
    assert '<a rel="noopener noreferrer">js</a>' in html  # its text stays, its URL does not


def test_only_an_image_loads_from_a_url_and_only_by_the_image_rule() -> None:
    from site_builder.site.prose.markdown.raw_html import raw_html

    written = raw_html('<video src="clip.mp4" poster="p.png" controls></video><picture><source srcset="a.png">'
                       '</picture><table background="bg.png"><tr><td>x</td></tr></table>', PageContext(notebook=True), {})
    for gone in ("src", "poster", "background", "clip.mp4", "p.png", "bg.png"):
        assert gone not in written, gone  # before the sanitiser, whatever it will keep
    assert "<video" not in written and "<td>x</td>" in written  # a player of raw HTML: gone, its content kept


def test_comments_vanish_and_a_script_page_shows_html_as_text() -> None:
    text = "Before <!-- hidden comment --> after.\n\n<!--\nblock comment\n-->\n\n<b>bold</b> <a id=\"x\">"
    assert "comment" not in notebook_render(text)
    as_text = render(text, "markdown", page=PageContext())  # a script's prose (house style)
    assert "comment" not in as_text and "<b>" not in as_text and "&lt;b&gt;bold&lt;/b&gt;" in as_text
    assert "<a id" not in as_text and "&lt;a id=" in as_text


# ---------------------------------------------------------------- images


def test_images_follow_the_prose_image_rule() -> None:
    asked: list[str] = []

    def publish(src: str) -> str | None:
        asked.append(src)
        return f"_images/{src}" if src.startswith("figures/") else None

    page = PageContext(notebook=True, publish_image=publish)
    html = notebook_render(
        '<img src="figures/x.png" width=400 alt="local" style="padding: 3px" onclick="x()">\n'
        '<img src=".secret.png" alt="hidden one"> <img src="notes.txt" alt="not an image">\n'
        '<img src="https://example.org/remote.png" alt="remote one">\n'
        '<a href="https://colab.example/nb"><img src="https://colab.example/badge.svg" alt="Open In Colab"></a>\n'
        '<img src="data:image/png;base64,iVBORw0KGgo=" alt="inline data">', page)
    assert '<img src="_images/figures/x.png" width="400" alt="local">' in html
    assert asked == ["figures/x.png", ".secret.png", "notes.txt", "data:image/png;base64,iVBORw0KGgo="]  # never remote
    assert '<span class="missing-image">hidden one</span>' in html
    assert '<span class="missing-image">not an image</span>' in html
    assert '<a href="https://example.org/remote.png" rel="noopener noreferrer">remote one</a>' in html
    # inside a link, a remote image is its text: the link stays the one its author wrote
    assert '<a href="https://colab.example/nb" rel="noopener noreferrer">Open In Colab</a>' in html
    assert '<span class="missing-image">inline data</span>' in html
    assert html.count("<img") == 1  # the published one alone: nothing loads from elsewhere


# ---------------------------------------------------------------- ids


def test_ids_take_the_label_namespace_and_links_follow() -> None:
    text = ('[to top](#top), [to main](#main), [to named](#old-style), <a href="#top">raw to top</a>, '
            '[elsewhere](#nowhere)\n\n'
            '<a id="top"></a>\n<div id="main">a div named main</div>\n<a name="old-style"></a>\n'
            '<h2 id="search-input">A raw heading</h2>\n<span id="top">second top</span>\n<p id="has space">x</p>')
    html = notebook_render(text)
    ids = re.findall(r'\sid="([^"]*)"', html)
    assert ids == ["label-top", "label-main", "label-old-style", "label-search-input"]
    for target in ("label-top", "label-main", "label-old-style"):
        assert f'href="#{target}"' in html, target
    assert html.count('href="#label-top"') == 2 and 'href="#nowhere"' in html
    assert "name=" not in html and "second top" in html


def test_jupyterlab_heading_links_reach_their_heading_before_or_after_it() -> None:
    page = PageContext(notebook=True, typography=True)
    toc = notebook_render('<div class="toc"><a href="#Later-Section">later</a> <a href="#What\'s-next?">next</a></div>'
                          "\n\n[Résumé](#Résumé) [earlier](#Earlier-one) [unknown](#Nowhere)", page)
    body = notebook_render("## Later Section\n\n## What's next?\n\n### Résumé", page)
    back = notebook_render("## Earlier one\n\n[back up](#Later-Section)", page)
    late = page.late_fragments()
    assert late == {"Later-Section": "later-section", "What's-next?": "what-s-next", "R%C3%A9sum%C3%A9": "résumé",
                    "Earlier-one": "earlier-one"}
    assert '<a href="#later-section" rel="noopener noreferrer">back up</a>' in back  # known already
    from site_builder.site.safety.html import clean_html

    fixed = clean_html(toc, fragments=late)  # the page's late pass (views.with_late_links)
    for target in ("later-section", "what-s-next", "résumé", "earlier-one"):
        assert f'href="#{target}"' in fixed, target
    assert 'href="#Nowhere"' in fixed  # no heading of that text: as written
    assert 'id="later-section"' in body and "What’s next?" in body  # typeset on the page, linked as typed


def test_a_label_and_an_html_anchor_of_one_page_never_share_an_id() -> None:
    html = notebook_render("(intro)=\n## Intro\n\n<a id=\"intro\"></a> [link](#intro)")
    ids = re.findall(r'\sid="([^"]*)"', html)
    assert len(ids) == len(set(ids)) and "label-intro" in ids


# ---------------------------------------------------------------- bounded work

HOSTILE_SIZES = {  # each quadratic or worse before (the standard library's parser, nh3 on deep nesting)
    "unfinished tags": "<div>\n" + "<a " * 30000,
    "unfinished quoted values": "<div>\n" + '<a x="' * 30000,
    "unfinished comments": "<div>\n" + "<!--" * 30000,
    "nested blocks": "<div>" * 40000,
    "nested across tokens": "text " + "<div>" * 40000,
    "many anchors": "<div>\n" + "".join(f'<a id="i{i}"></a>' for i in range(20000)),
}


@pytest.mark.parametrize("name", list(HOSTILE_SIZES))
def test_hostile_raw_html_renders_in_linear_time(name: str) -> None:
    from site_builder.site.outputs.value_html import clean_value_html
    from tests.test_bounded_work import bounded

    with bounded(10.0):
        html = notebook_render(HOSTILE_SIZES[name])
        clean_value_html(HOSTILE_SIZES[name], "value-1")  # a value's HTML goes through the same reader
    assert html.count("<div") <= 256 + 1  # nesting kept to safety.html_tags.MAX_DEPTH


# ---------------------------------------------------------------- a built site


def _markdown_cells() -> list[str]:
    return [
        "# Raw HTML notebook\n\nIts summary. [Jump to the end](#the-end). [Jump to the section](#A-later-section)."
        ' <a href="#Raw-HTML-notebook">Top</a>',
        FORMATTING,
        '<img src="figures/x.png" width="300" alt="the local figure"> <img src=".secret.png" alt="the hidden file">'
        ' <img src="notes.txt" alt="the text file"> <img src="https://example.org/r.png" alt="the remote image">'
        f' <img src="data:image/png;base64,{"A" * 4000}" alt="the inline image">',
        '<div class="opened-here">\n\nOpened in this cell, never closed here. </main></section></article>',
        'Closed in the next cell:</div></div> and still in its own cell. <span id="twice">first twice</span>',
        HOSTILE,
        '<a id="main"></a><a id="search"></a><a name="the-end"></a>\n\nThe end. <span id="twice">second twice</span>'
        "\n\n## A later section",
    ]


def raw_html_notebook() -> nbformat.NotebookNode:
    """A notebook whose Markdown cells carry raw HTML around one code cell (test_browser_raw_html
    opens it too)."""
    cells = [nbformat.v4.new_markdown_cell(text) for text in _markdown_cells()]
    cells.insert(2, nbformat.v4.new_code_cell("print('notebook ran')"))
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    return notebook


def _myst() -> str:
    parts = _markdown_cells()
    return MYST_FRONT_MATTER + "\n" + "\n\n+++\n\n".join(parts[:2]) + "\n\n```{code-cell} ipython3\nprint('myst ran')\n```\n\n" + \
        "\n\n+++\n\n".join(parts[2:]) + "\n\n```{raw} html\n<p id=\"raw-block\">From a raw block</p>\n```\n"


HOUSE = '''"""
house.py — a house-style demo whose prose holds raw HTML.

Purpose
-------
Shows <b>bold</b> and <img src="figures/x.png"> as text.

Blocks
------
[B-one]   prints one
"""

# %% B-one
print(1)

# %% [markdown]
# <div class="alert">a div</div> and <a id="main">an anchor</a>
'''


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    project = tmp_path_factory.mktemp("raw-html")
    demos = project / "demos"
    (demos / "figures").mkdir(parents=True)
    (demos / "figures" / "x.png").write_bytes(PNG)
    (demos / ".secret.png").write_bytes(PNG)
    (demos / "notes.txt").write_text("NOTES-TEXT-CONTENT\n")
    nbformat.write(raw_html_notebook(), demos / "nb.ipynb")
    (demos / "lecture.md").write_text(_myst(), encoding="utf-8")
    write_demo(project, "house", HOUSE)
    result = run_cli("build", cwd=project, timeout=170)
    assert result.returncode == 0, result.stderr
    return project / "build", result.stderr


def page(site: Path, name: str) -> str:
    return (site / name / "index.html").read_text(encoding="utf-8")


class _Structure(HTMLParser):
    """Every element of a page with its id and the chain of elements it is in; end tags checked."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.ids: list[str] = []
        self.unmatched: list[str] = []
        self.prose_classes: list[str] = []  # the classes of divs opened inside a cell's prose

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.append(found["id"] or "")
        if tag == "div" and "prose" in self.stack_classes():
            self.prose_classes.append(found.get("class") or "")
        if tag not in VOID:
            self.stack.append(f"{tag}.{found.get('class') or ''}")

    def stack_classes(self) -> str:
        return " ".join(self.stack)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if not self.stack or not self.stack[-1].startswith(f"{tag}."):
            self.unmatched.append(f"</{tag}> in {self.stack[-3:]}")
            return
        self.stack.pop()


def structure(html: str) -> _Structure:
    parsed = _Structure()
    parsed.feed(html)
    return parsed


@pytest.mark.parametrize("name", ["nb", "lecture"])
def test_notebook_pages_render_raw_html(built: tuple[Path, str], name: str) -> None:
    site, _ = built
    html = page(site, name)
    for kept in ('<center><font color="red" size="5">Centred red</font></center>', "H<sub>2</sub>O",
                 '<div class="alert alert-block alert-info">', "<details><summary>Click to open</summary>",
                 '<img src="_images/figures/x.png" width="300" alt="the local figure">',
                 '<a href="https://example.org/r.png" rel="noopener noreferrer">the remote image</a>',
                 '<span class="missing-image">the hidden file</span>', '<span class="missing-image">the text file</span>'):
        assert kept in html, (name, kept)
    assert (site / name / "_images" / "figures" / "x.png").read_bytes() == PNG
    assert sorted(p.name for p in (site / name / "_images").rglob("*") if p.is_file()) == ["x.png"]
    for gone in ("alert(", "javascript:", "evil.example", "onerror", "<iframe", "style="):
        assert gone not in html, (name, gone)
    assert html.count("<script") == 3 and html.count("<form") == 1  # the page's own scripts (theme, site, previews), its search


def test_refused_images_are_warnings_naming_entry_and_path(built: tuple[Path, str]) -> None:
    _, stderr = built
    for name in ("nb", "lecture"):
        assert re.search(rf"^{name}: the image \.secret\.png .*hidden", stderr, re.M), stderr
        assert re.search(rf"^{name}: the image notes\.txt .*not an image", stderr, re.M), stderr
        inline = re.search(rf"^{name}: the image data:image/png;base64,A+… .*a data: URL", stderr, re.M)
        assert inline and len(inline.group()) < 250, stderr  # a long data: URL is cut in the warning
    site = built[0]
    everything = b"".join(p.read_bytes() for p in site.rglob("*") if p.is_file())
    assert b"NOTES-TEXT-CONTENT" not in everything


@pytest.mark.parametrize("name", ["nb", "lecture", "house"])
def test_every_id_is_unique_and_a_cell_keeps_its_tags_inside(built: tuple[Path, str], name: str) -> None:
    site, _ = built
    parsed = structure(page(site, name))
    assert parsed.unmatched == [] and parsed.stack == [], (parsed.unmatched, parsed.stack)
    duplicates = [i for i, n in Counter(parsed.ids).items() if n > 1]
    assert duplicates == [], duplicates
    for own in ("main", "search", "search-input", "theme-toggle"):
        assert parsed.ids.count(own) == 1, own


@pytest.mark.parametrize("name", ["nb", "lecture"])
def test_a_div_left_open_ends_with_its_cell(built: tuple[Path, str], name: str) -> None:
    html = page(built[0], name)
    # the div ends with the cell that opened it, before the cell's own box; the stray end tags
    # closed nothing of the page, and the next cell's "</div></div>" closes nothing either
    assert 'never closed here. </p></div>\n</div>\n<div class="prose">\n<p>Closed in the next cell: and still' in html
    closes = html.index("Closed in the next cell:")
    assert html.index('<main id="main"') < closes < html.index("</main>")
    assert html.count("</main>") == 1 and html.count("<main") == 1


@pytest.mark.parametrize("name", ["nb", "lecture"])
def test_raw_anchors_take_label_ids_and_links_reach_them(built: tuple[Path, str], name: str) -> None:
    html = page(built[0], name)
    assert 'id="label-main"' in html and 'id="label-search"' in html and 'id="label-the-end"' in html
    assert '<a href="#label-the-end" rel="noopener noreferrer">Jump to the end</a>' in html
    heading = re.search(r'<h2 id="([^"]+)">A later section</h2>', html).group(1)
    assert f'<a href="#{heading}" rel="noopener noreferrer">Jump to the section</a>' in html  # a later cell's
    assert '<a href="#main" rel="noopener noreferrer">Top</a>' in html  # the title is the page's <h1>
    ids = set(re.findall(r'\sid="([^"]*)"', html))
    assert all(href in ids for href in re.findall(r'href="#([^"]*)"', html))  # no link leads nowhere


def test_an_html_id_given_twice_is_a_warning_and_the_first_keeps_it(built: tuple[Path, str]) -> None:
    site, stderr = built
    for name in ("nb", "lecture"):
        lines = [line for line in stderr.splitlines() if line.startswith(f"{name}: the HTML id twice ")]
        assert len(lines) == 1 and "defined twice on the page" in lines[0], stderr
        html = page(site, name)
        assert '<span id="label-twice">first twice</span>' in html and "<span>second twice</span>" in html
    assert "nb.ipynb, cell 6, line 1 and at demos/nb.ipynb, cell 8, line 3" in next(line for line in stderr.splitlines() if line.startswith("nb: the HTML id"))


def test_a_raw_html_block_renders_on_a_myst_page(built: tuple[Path, str]) -> None:
    assert '<p id="label-raw-block">From a raw block</p>' in page(built[0], "lecture")


def test_a_house_style_page_keeps_raw_html_as_text(built: tuple[Path, str]) -> None:
    site, _ = built
    html = page(site, "house")
    assert "&lt;b&gt;bold&lt;/b&gt;" in html and "<b>bold</b>" not in html
    assert '<p class="raw-html">&lt;div class="alert"&gt;a div&lt;/div&gt;' in html
    assert 'id="label-main"' not in html and not (site / "house" / "_images").exists()
