"""Tests for the render stage: dataclasses built by hand, no parser or executor needed."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from site_builder.source.parsed import Cell, Script
from site_builder.source.entries import Entry
from site_builder.run.execute import (
    BUILDER_DIR,
    Artifact,
    BlockError,
    BlockResult,
    OutputChunk,
    RunResult,
)
from site_builder.site.pages.render import (
    TEMPLATES_DIR,
    EntryBuild,
    SiteFile,
    SiteInfo,
    format_duration,
    format_size,
    join_words,
    render_site,
)

XSS = "<script>alert(1)</script>"
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 32

SOURCE = '''"""demo: a tiny demo.

Purpose
-------
Show *things*.
"""
import numpy as np

np.random.seed(0)
# %% B-one
print("hello")
# %% B-two
x = 1
# %% B-three
y = 2
'''


def code(name: str, text: str, first: int, desc: str = "") -> Cell:
    return Cell("code", name, text, first, None if name == "setup" else first - 1, desc)


def make_build(
    tmp_path: Path,
    name: str = "demo",
    cells: tuple[Cell, ...] | None = None,
    blocks: tuple[BlockResult, ...] | None = None,
    purpose: str = "Show *things*.",
    requirements: tuple[str, ...] = ("NumPy", "Matplotlib"),
    summary: str = "demo: a tiny demo.",
    source: str = SOURCE,
    failure: str | None = None,
) -> EntryBuild:
    files = tmp_path / f"run-{name}"
    (files / BUILDER_DIR).mkdir(parents=True, exist_ok=True)
    (files / f"{name}.png").write_bytes(PNG)
    (files / f"{BUILDER_DIR}/B-one-figure-1.png").write_bytes(PNG)
    (files / f"{name}_loss.csv").write_text("iter,loss\n1,0.5\n")
    if cells is None:
        cells = (
            code("setup", '"""demo."""\nimport numpy as np\n', 1),
            code("B-one", 'print("hello")', 11, "prints a greeting"),
            Cell("markdown", "", "Some **prose** between blocks.", 13, 12),
            code("B-two", "x = 1", 15, "sets x"),
        )
    if blocks is None:
        blocks = (
            BlockResult("setup", "ok", 0.01),
            BlockResult(
                "B-one",
                "ok",
                1.5,
                output=(OutputChunk("stdout", "hello\n"), OutputChunk("stderr", "careful\n")),
                artifacts=(
                    Artifact(f"{BUILDER_DIR}/B-one-figure-1.png", "figure", len(PNG),
                             alt="training loss", width=640, height=480),
                    Artifact(f"{name}.png", "image", len(PNG)),
                    Artifact(f"{name}_loss.csv", "file", 12345),
                ),
            ),
            BlockResult("B-two", "ok", 0.002),
        )
    entry = Entry(name, Path(f"/x/{name}.py"), f"demos/{name}.py", source, source.encode())
    script = Script(summary, purpose, "doc", cells, requirements)
    result = RunResult(name, blocks, failure, 2.0, time.time(), files)
    return EntryBuild(entry, script, result)


# This repository's own wording (pyproject.toml), as the build passes it on.
DICTIONARY = SiteInfo(
    title="Dictionary of Applied Machine Learning",
    entry_heading="{name} — Python demo",
    entry_intro="Numerical companion to the entry {entry}: it recomputes what the entry states "
                "and prints one line per check.",
    search_placeholder="Search the dictionary",
    index_intro="{count} Python demos, one per entry.",
    reproduce_unverified="and uses fixed seeds; that the printed numbers reproduce exactly is not yet verified",
)


def site(builds: list[EntryBuild], info: SiteInfo | None = None) -> dict[str, SiteFile]:
    files = render_site(builds, info or SiteInfo())
    paths = [f.path for f in files]
    assert len(paths) == len(set(paths)), "duplicate site paths"
    return {f.path: f for f in files}


def text(f: SiteFile) -> str:
    assert f.data is not None
    return f.data.decode("utf-8")


def test_site_file_set(tmp_path: Path) -> None:
    files = site([make_build(tmp_path)])
    assert {"index.html", "404.html", ".nojekyll", "static/site.css", "static/site.js",
            "demo/index.html", "demo/demo.py"} <= files.keys()
    assert files[".nojekyll"].data == b""
    # copied, not linked: editing templates/static must not change a published site
    assert files["static/site.js"].data == (TEMPLATES_DIR / "static" / "site.js").read_bytes()
    assert "sitemap.xml" not in files


def test_entry_page_head_and_intro(tmp_path: Path) -> None:
    page = text(site([make_build(tmp_path)], DICTIONARY)["demo/index.html"])
    assert "<title>Dictionary of Applied Machine Learning · demo</title>" in page
    assert "demo — Python demo" in page
    assert ("Numerical companion to the entry demo: it recomputes what the entry states "
            "and prints one line per check") in page
    assert "demo: a tiny demo." in page
    assert "<em>things</em>" in page  # Purpose rendered as Markdown
    assert "Run it with <code>python3 demo.py</code>, from any directory" in page
    assert "it writes its output files into the current directory" in page
    assert "Requires NumPy and Matplotlib only, and uses fixed seeds; that the printed numbers" in page
    assert 'href="demo.py"' in page and "Download demo.py" in page
    assert "The script, block by block" in page
    assert "One cell per block of the script: the code, and what that code printed" in page
    assert '<meta name="viewport"' in page
    assert ("default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'"
            in page)


def test_requirements_wording(tmp_path: Path) -> None:
    none = text(site([make_build(tmp_path, requirements=(), source="print(1)\n")])["demo/index.html"])
    assert "Requires only the Python standard library" in none
    assert "fixed seeds" not in none  # no seeding visible in the source: no claim
    assert join_words(["A", "B", "C"]) == "A, B and C"
    assert join_words(["NumPy"]) == "NumPy"


def test_cells_in_order_with_markup(tmp_path: Path) -> None:
    page = text(site([make_build(tmp_path)])["demo/index.html"])
    ids = re.findall(r'<section id="([^"]+)" class="cell"', page)
    assert ids == ["setup", "B-one", "B-two"]
    one = page[page.index('<section id="B-one"'):page.index('<section id="B-two"')]
    assert re.search(r"<h3>.*<a [^>]*href=\"#B-one\"", one)
    assert '<p class="description">prints a greeting</p>' in one
    assert 'class="highlight"' in one
    assert '<pre class="output">hello\n<span class="stderr">careful\n</span></pre>' in one
    assert "1.5 s" in one
    # Markdown cell: prose between B-one and B-two
    assert '<div class="prose">' in one and "<strong>prose</strong>" in one
    # Nothing printed: no output pre
    two = page[page.index('<section id="B-two"'):]
    assert '<pre class="output">' not in two.split("</section>")[0]


def test_line_numbers_are_script_lines_and_not_copyable(tmp_path: Path) -> None:
    files = site([make_build(tmp_path)])
    page = text(files["demo/index.html"])
    one = page[page.index('<section id="B-one"'):page.index('<section id="B-two"')]
    assert re.search(r'<span class="linenos">\s*11</span>', one)
    css = text(files["static/site.css"])
    assert re.search(r"\.linenos\s*\{[^}]*user-select:\s*none", css)


def test_everything_user_controlled_is_escaped(tmp_path: Path) -> None:
    cells = (
        code("setup", f"s = '{XSS}'", 1, XSS),
        Cell("markdown", "", f"prose {XSS} and <b>bold</b>", 2, 2),
        code("B-x", "print(s)", 3, XSS),
    )
    blocks = (
        BlockResult("setup", "ok", 0.1),
        BlockResult("B-x", "ok", 0.1, output=(OutputChunk("stdout", XSS),
                                                 OutputChunk("stderr", XSS))),
    )
    build = make_build(tmp_path, cells=cells, blocks=blocks, purpose=f"Purpose {XSS}",
                       summary=f"sum {XSS}")
    files = site([build])
    for path in ("demo/index.html", "index.html"):
        page = text(files[path])
        assert "<script>alert" not in page
        assert "<b>bold</b>" not in page
    page = text(files["demo/index.html"])
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert page.count("<script") == 3  # the page's own theme.js, site.js and previews.js only


def test_markdown_links_cannot_run_script_or_load_remote_images(tmp_path: Path) -> None:
    purpose = "[a](javascript:alert(1)) ![x](https://evil.example/x.png) [ok](https://ok.example/)"
    page = text(site([make_build(tmp_path, purpose=purpose)])["demo/index.html"])
    assert "javascript:" not in page
    assert "<img src=\"https" not in page and "evil.example/x.png\"" in page  # now a link
    assert 'href="https://ok.example/"' in page


def test_error_and_not_run_cells(tmp_path: Path) -> None:
    cells = (code("setup", "a = 1", 1), code("B-bad", "1/0", 2), code("B-later", "b = 2", 3),
             code("B-slow", "while True: pass", 4), code("B-missing", "c = 3", 5))
    tb = 'Traceback (most recent call last):\n  File "demo.py", line 2\nZeroDivisionError: <division>'
    blocks = (
        BlockResult("setup", "ok", 0.0),
        BlockResult("B-bad", "error", 0.2, output=(OutputChunk("stdout", "before\n"),),
                    error=BlockError("ZeroDivisionError", "division by zero", 2, tb)),
        BlockResult("B-later", "not-run", 0.0),
        BlockResult("B-slow", "timeout", 600.0,
                    error=BlockError("Timeout", "the demo ran longer than 600 s", 4, "")),
    )
    page = text(site([make_build(tmp_path, cells=cells, blocks=blocks,
                                 failure="demo: B-bad line 2: ZeroDivisionError")])["demo/index.html"])
    bad = page[page.index('<section id="B-bad"'):page.index('<section id="B-later"')]
    assert 'data-status="error"' in bad
    assert "ZeroDivisionError: division by zero" in bad
    assert '<pre class="traceback">' in bad and "&lt;division&gt;" in bad
    assert bad.index('<pre class="output">before') < bad.index('<pre class="traceback">')
    later = page[page.index('<section id="B-later"'):page.index('<section id="B-slow"')]
    assert "Not run: the script stopped at block B-bad." in later
    slow = page[page.index('<section id="B-slow"'):page.index('<section id="B-missing"')]
    assert "the demo ran longer than 600 s" in slow and 'data-status="timeout"' in slow
    missing = page[page.index('<section id="B-missing"'):]
    assert "Not run: the script stopped at block B-bad." in missing  # no result at all: not run
    assert "did not run to the end" in page and "B-bad line 2" in page


def test_truncated_output(tmp_path: Path) -> None:
    cells = (code("setup", "for i in range(10**6): print(i)", 1),)
    blocks = (BlockResult("setup", "ok", 3.0,
                          output=(OutputChunk("stdout", "0\n1\n"), OutputChunk("stdout", "999999\n")),
                          omitted_lines=999_997, omitted_bytes=6_888_890,
                          full_output=f"{BUILDER_DIR}/setup-output.txt", omitted_at=1),)
    full = tmp_path / "run-demo" / BUILDER_DIR / "setup-output.txt"
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_text("0\n1\n...\n999999\n")
    files = site([make_build(tmp_path, cells=cells, blocks=blocks)])
    page = text(files["demo/index.html"])
    assert "… 999997 lines (6.9 MB) left out …" in page
    # head, then the line saying what was left out, then the tail
    assert page.index("1\n</pre>") < page.index("left out") < page.index("999999\n</pre>")
    assert f'href="{BUILDER_DIR}/setup-output.txt"' in page
    assert files[f"demo/{BUILDER_DIR}/setup-output.txt"].source == (
        tmp_path / "run-demo" / BUILDER_DIR / "setup-output.txt")


def test_artifacts_shown_and_published(tmp_path: Path) -> None:
    build = make_build(tmp_path)
    files = site([build])
    page = text(files["demo/index.html"])
    fig = f"{BUILDER_DIR}/B-one-figure-1.png"
    assert re.search(rf'<img src="{fig}" alt="training loss" width="640" height="480"', page)
    assert re.search(r'<img src="demo.png" alt="demo.png"', page)
    assert 'href="demo_loss.csv"' in page and "demo_loss.csv</a> (12.3 kB)" in page
    for rel in (fig, "demo.png", "demo_loss.csv"):
        f = files[f"demo/{rel}"]
        assert f.source == build.result.files_dir / rel and f.source.is_file()


def test_artifact_that_would_overwrite_the_page_is_not_published(tmp_path: Path) -> None:
    blocks = (BlockResult("setup", "ok", 0.1, artifacts=(
        Artifact("index.html", "file", 10), Artifact("../escape.txt", "file", 1))),)
    files = site([make_build(tmp_path, cells=(code("setup", "pass", 1),), blocks=blocks)])
    assert files["demo/index.html"].data is not None
    assert "escape.txt" not in "".join(files)
    assert "not published" in text(files["demo/index.html"])


def test_download_is_exact_bytes(tmp_path: Path) -> None:
    source = "# -*- coding: utf-8 -*-\r\nprint('héllo')\r\n"
    build = make_build(tmp_path, source=source)
    assert site([build])["demo/demo.py"].data == source.encode()


def test_index_lists_entries_sorted_with_summaries(tmp_path: Path) -> None:
    builds = [make_build(tmp_path, name="zeta", summary="last one"),
              make_build(tmp_path, name="alpha", summary="first one", failure="alpha: boom")]
    index = text(site(builds, DICTIONARY)["index.html"])
    assert "<title>Dictionary of Applied Machine Learning</title>" in index
    assert "2 Python demos, one per entry." in index
    assert index.index('href="alpha/index.html"') < index.index('href="zeta/index.html"')
    assert "first one" in index and "last one" in index
    assert "failed" in index


def test_all_links_relative(tmp_path: Path) -> None:
    files = site([make_build(tmp_path)])
    for path in ("index.html", "404.html", "demo/index.html"):
        page = text(files[path])
        assert "http" not in page.replace("http-equiv", ""), path
        urls = re.findall(r'(?:href|src)="([^"]*)"', page)
        assert urls and not [u for u in urls if u.startswith("/") or "://" in u], path
    page = text(files["demo/index.html"])
    assert 'href="../static/site.css"' in page and 'src="../static/site.js"' in page
    assert 'href="../index.html"' in page
    assert 'href="static/site.css"' in text(files["index.html"])
    assert 'href="index.html"' in text(files["404.html"])
    assert ' style="' not in page and "onclick" not in page


def test_site_url_adds_sitemap_and_canonical(tmp_path: Path) -> None:
    files = site([make_build(tmp_path)], SiteInfo(site_url="https://example.org/dict/"))
    sitemap = text(files["sitemap.xml"])
    assert "<loc>https://example.org/dict/demo/index.html</loc>" in sitemap
    assert 'rel="canonical" href="https://example.org/dict/demo/index.html"' in text(
        files["demo/index.html"])


def test_css_has_light_and_dark_pygments(tmp_path: Path) -> None:
    css = text(site([make_build(tmp_path)])["static/site.css"])
    assert "@media screen and (prefers-color-scheme: dark)" in css
    assert css.count(".highlight .k ") >= 2  # keyword colour for both schemes
    assert "max-width" in css


def test_formatters() -> None:
    assert format_size(512) == "512 bytes"
    assert format_size(12_345) == "12.3 kB"
    assert format_size(999_999) == "1.0 MB"
    assert format_duration(0.0123) == "12 ms"
    assert format_duration(3.42) == "3.4 s"
    assert format_duration(125) == "2 min 05 s"


def test_hundred_pages_render_the_same_twice(tmp_path: Path) -> None:
    # The speed of this is measured by benchmarks/run.py (e); here: the in-process cache of
    # highlighted cells (watch mode) gives the same pages as a cold render.
    builds = []
    for e in range(100):
        cells = tuple(code("setup" if i == 0 else f"B-{i}", f"x{e} = [{i} * k for k in range(3)]\n" * 3,
                           1 + 4 * i, "does things") for i in range(8))
        blocks = tuple(BlockResult(c.name, "ok", 0.1, output=(OutputChunk("stdout", "line\n" * 20),))
                       for c in cells)
        builds.append(make_build(tmp_path, name=f"e{e:03d}", cells=cells, blocks=blocks))
    cold = render_site(builds, SiteInfo())
    warm = render_site(builds, SiteInfo())
    assert len([f for f in warm if re.fullmatch(r"e\d{3}/index\.html", f.path)]) == 100
    assert warm == cold


@pytest.mark.parametrize("bad", ["", "/abs.txt", "a/../../b"])
def test_unsafe_artifact_paths_are_not_published(tmp_path: Path, bad: str) -> None:
    blocks = (BlockResult("setup", "ok", 0.1, artifacts=(Artifact(bad, "file", 1),)),)
    files = site([make_build(tmp_path, cells=(code("setup", "pass", 1),), blocks=blocks)])
    assert not [p for p in files if p.startswith("demo/") and p not in
                ("demo/index.html", "demo/demo.py", "demo/demo.ipynb")]


# ---------------------------------------------------------------- reader features (issue 5)


def test_notebook_download_is_valid_and_runs_top_to_bottom(tmp_path: Path) -> None:
    import json

    import nbformat

    build = make_build(tmp_path, cells=(
        code("setup", '"""demo: a tiny demo."""\nimport math\n', 1),
        code("B-one", "x = math.sqrt(16)\nprint(x)", 4, "takes a square root"),
        Cell("markdown", "", "Some **prose**.", 6, 5),
        code("B-two", "assert x == 4.0", 8),
    ), blocks=(BlockResult("setup", "ok", 0.0),
               BlockResult("B-one", "ok", 0.0, output=(OutputChunk("stdout", "4.0\n"),)),
               BlockResult("B-two", "ok", 0.0)))
    files = site([build])
    page = text(files["demo/index.html"])
    assert 'href="demo.ipynb"' in page and "Download demo.ipynb" in page
    data = files["demo/demo.ipynb"].data
    assert data is not None and data == site([build])["demo/demo.ipynb"].data  # deterministic
    nb = nbformat.reads(data.decode(), as_version=4)
    nbformat.validate(nb)
    kinds = [(c.cell_type, c.source) for c in nb.cells]
    assert kinds[0][0] == "markdown" and kinds[0][1].startswith("# demo")
    assert kinds[1:] == [
        ("code", "import math"),  # the docstring went into the first Markdown cell
        ("markdown", "### `B-one`\n\ntakes a square root"),
        ("code", "x = math.sqrt(16)\nprint(x)"),
        ("markdown", "Some **prose**."),
        ("markdown", "### `B-two`"),
        ("code", "assert x == 4.0"),
    ]
    assert nb.cells[3].outputs == [{"output_type": "stream", "name": "stdout", "text": "4.0\n"}]
    namespace: dict[str, object] = {}
    for cell in nb.cells:
        if cell.cell_type == "code":
            exec(compile(cell.source, cell.id, "exec"), namespace)  # what Jupyter's kernel does
    assert json.loads(data)["metadata"]["kernelspec"]["name"] == "python3"


def test_csv_preview_table_is_bounded_and_escaped(tmp_path: Path) -> None:
    build = make_build(tmp_path)
    rows = ["step,<b>loss</b>"] + [f"{i},{1 / (i + 1):.4f}" for i in range(200_000)]
    (build.result.files_dir / "demo_loss.csv").write_text("\n".join(rows) + "\n")
    page = text(site([build])["demo/index.html"])
    table = page[page.index('<div class="csv-preview">'):page.index("</table>")]
    assert '<th scope="col">step</th><th scope="col">&lt;b&gt;loss&lt;/b&gt;</th>' in table
    assert table.count("<tr>") == 1 + 5 and "<td>4</td><td>0.2000</td>" in table
    assert "first 5 rows" in table


def test_csv_preview_without_header_and_for_short_files(tmp_path: Path) -> None:
    from site_builder.site.pages.render import csv_preview

    (tmp_path / "a.csv").write_text("1,2\n3,4\n")
    preview = csv_preview(tmp_path / "a.csv")
    assert preview is not None and preview.header == () and preview.rows == (("1", "2"), ("3", "4"))
    assert not preview.more_rows
    (tmp_path / "empty.csv").write_text("")
    assert csv_preview(tmp_path / "empty.csv") is None
    assert csv_preview(tmp_path / "missing.csv") is None


def test_previous_next_links_in_dictionary_order(tmp_path: Path) -> None:
    files = site([make_build(tmp_path, name=n) for n in ("zeta", "alpha", "mu")])
    def nav(name: str) -> str:
        page = text(files[f"{name}/index.html"])
        return page[page.index('<nav class="entry-nav"'):page.index("</nav>", page.index('<nav class="entry-nav"'))]
    assert 'rel="prev"' not in nav("alpha") and 'rel="next" href="../mu/index.html"' in nav("alpha")
    assert 'rel="prev" href="../alpha/index.html"' in nav("mu") and 'rel="next" href="../zeta/index.html"' in nav("mu")
    assert 'rel="prev" href="../mu/index.html"' in nav("zeta") and 'rel="next"' not in nav("zeta")
    assert all('href="../index.html"' in nav(n) for n in ("alpha", "mu", "zeta"))


def test_index_groups_entries_by_letter_with_a_filter(tmp_path: Path) -> None:
    builds = [make_build(tmp_path, name=n, summary=f"about {n}") for n in ("bayes", "attention", "adam", "2d-conv")]
    index = text(site(builds)["index.html"])
    assert '<input id="filter" class="filter" type="search" aria-label="Filter entries"' in index
    assert '<p id="filter-status" class="filter-status" aria-live="polite">' in index
    order = [index.index(f'id="letter-{x}"') for x in ("other", "a", "b")]
    assert order == sorted(order)
    a_group = index[index.index('id="letter-a"'):index.index('id="letter-b"')]
    assert a_group.index('data-name="adam"') < a_group.index('data-name="attention"')
    # every entry made a figure: each shows its thumbnail, then its link
    assert re.search(r'<li class="entry-item with-thumbnail" data-name="adam"><img class="thumbnail" src="[^"]+" '
                     r'width="\d+" height="\d+" loading="lazy" alt=""><span class="entry-text">'
                     r'<a href="adam/index.html">adam</a>', a_group)
    assert "about adam" in a_group


def test_every_page_has_search_theme_toggle_and_landmarks(tmp_path: Path) -> None:
    files = site([make_build(tmp_path)], DICTIONARY)
    for path in ("index.html", "demo/index.html", "404.html"):
        page = text(files[path])
        assert '<form role="search" id="search"' in page
        assert '<input id="search-input" type="search"' in page and 'aria-label="Search the dictionary"' in page
        assert '<ol id="search-results"' in page and '<p id="search-status"' in page
        assert '<button id="theme-toggle"' in page and "aria-label=" in page
        assert '<a class="skip-link" href="#main">' in page and '<main id="main"' in page
        assert "<header" in page and "<footer" in page
        assert "'wasm-unsafe-eval'" in page and "connect-src 'self'" in page and "default-src 'self'" in page
        # theme.js runs before the stylesheet is applied: no flash of the wrong theme
        assert page.index("static/theme.js") < page.index("static/site.css")
    entry = text(files["demo/index.html"])
    assert '<article class="entry" data-pagefind-body>' in entry
    assert 'data-pagefind-meta="title:demo"' in entry
    assert entry.count('data-pagefind-ignore="all"') >= 3  # header, nav, footer
    assert files["static/theme.js"].data == (TEMPLATES_DIR / "static" / "theme.js").read_bytes()


def test_404_links_to_the_site_root(tmp_path: Path) -> None:
    plain = text(site([make_build(tmp_path)])["404.html"])
    assert 'href="index.html"' in plain
    hosted = text(site([make_build(tmp_path)], SiteInfo(site_url="https://example.org/dict/"))["404.html"])
    assert 'href="https://example.org/dict/index.html"' in hosted


def test_code_colours_follow_the_toggle_and_pass_contrast(tmp_path: Path) -> None:
    from pygments.styles import get_style_by_name

    from site_builder.site.pages.theme import DARK_STYLE, LIGHT_STYLE, MIN_CONTRAST, contrast

    css = text(site([make_build(tmp_path)])["static/site.css"])
    # page colours: light-dark() pairs, the toggle sets color-scheme; code: per-theme rules
    assert ':root[data-theme="dark"] { color-scheme: dark; }' in css and "--fg: light-dark(" in css
    for style, selector in ((LIGHT_STYLE, '[data-theme="light"] .highlight'),
                            (DARK_STYLE, '[data-theme="dark"] .highlight')):
        background = get_style_by_name(style).background_color
        rules = [line for line in css.splitlines() if line.strip().startswith(f":root{selector} .")]
        colours = re.findall(r"(?<![\w-])color: (#[0-9a-fA-F]{3,6})", "\n".join(rules))
        assert len(colours) > 10, style
        assert min(contrast(c, background) for c in colours) >= MIN_CONTRAST, style


def test_search_index_is_written_or_its_absence_explained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from site_builder.site.publish import search

    site_dir = tmp_path / "site"
    site_dir.mkdir()
    (site_dir / "index.html").write_text(
        '<!DOCTYPE html><html lang="en"><body><article data-pagefind-body>'
        "<h1>demo</h1><p>softmax</p></article></body></html>")
    assert search.index_site(site_dir) is None
    assert (site_dir / "pagefind" / "pagefind.js").is_file()
    monkeypatch.setattr(search, "pagefind_binary", lambda: None)
    warning = search.index_site(tmp_path)
    assert warning is not None and "Pagefind" in warning and str(tmp_path) not in warning
