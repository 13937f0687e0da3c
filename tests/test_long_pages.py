"""Reading long entry pages (issue 14): long outputs fold, every page lists its blocks.

The fold itself is checked on the dataclasses and on the rendered page; its behaviour in a
browser (the control, the count, unfolding on click) is in test_browser_reading.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from site_builder.ansi import Span
from site_builder.config import load_config
from site_builder.errors import UsageError
from site_builder.run.execute import BlockResult, OutputChunk
from site_builder.site.outputs.outcomes import OutputView, fold_output
from site_builder.site.pages.render import SiteInfo
from tests.conftest import run_cli, write_demo
from tests.test_render import code, make_build, site, text


def lines(n: int, start: int = 1) -> str:
    return "".join(f"line {i}\n" for i in range(start, start + n))


def joined(views: tuple[OutputView, ...]) -> str:
    return "".join(s.text for v in views for s in v.spans)


def test_short_output_is_not_folded() -> None:
    views = (OutputView("stdout", (Span(lines(40)),)),)
    fold = fold_output(views, 40)
    assert not fold.folded and fold.lines == 40 and fold.head == views and fold.hidden_lines == 0


def test_long_output_keeps_three_quarters_of_the_limit_above_and_a_quarter_below() -> None:
    fold = fold_output((OutputView("stdout", (Span(lines(100)),)),), 40)
    assert fold.folded and fold.lines == 100 and fold.hidden_lines == 60
    assert joined(fold.head) == lines(30)
    assert joined(fold.middle) == lines(60, start=31)
    assert joined(fold.tail) == lines(10, start=91)


def test_fold_cuts_inside_spans_and_streams_keeping_their_look() -> None:
    # Colours and streams survive the cut: a span is split at the newline, each part keeps its class.
    views = (
        OutputView("stdout", (Span("a\nb\n"), Span("c\nd\ne\n", "ansi-red"))),
        OutputView("stderr", (Span("f\ng\nh\ni\nj"),)),  # the last line has no newline and still counts
    )
    fold = fold_output(views, 4)
    assert fold.lines == 10
    assert fold.head == (OutputView("stdout", (Span("a\nb\n"), Span("c\n", "ansi-red"))),)
    assert fold.middle == (
        OutputView("stdout", (Span("d\ne\n", "ansi-red"),)),
        OutputView("stderr", (Span("f\ng\nh\ni\n"),)),
    )
    assert fold.tail == (OutputView("stderr", (Span("j"),)),)
    assert joined(fold.head) + joined(fold.middle) + joined(fold.tail) == "a\nb\nc\nd\ne\nf\ng\nh\ni\nj"


def folded_page(tmp_path: Path, n_lines: int, info: SiteInfo | None = None) -> str:
    cells = (code("setup", "import sys\n", 1), code("B-long", "for i in range(n): print(i)", 3, "prints a lot"))
    blocks = (BlockResult("setup", "ok", 0.01),
              BlockResult("B-long", "ok", 0.2, output=(OutputChunk("stdout", lines(n_lines)),)))
    return text(site([make_build(tmp_path, cells=cells, blocks=blocks)], info)["demo/index.html"])


def test_page_shows_head_control_and_tail_with_every_line_in_the_markup(tmp_path: Path) -> None:
    page = folded_page(tmp_path, 120)
    pre = re.search(r'<pre class="output output-fold" data-lines="120">(.*?)</pre>', page, re.S)
    assert pre, "a 120-line output is not folded"
    body = pre.group(1)
    # Every line is in the page: without a script, and on paper, nothing is hidden.
    assert all(f"line {i}\n" in body for i in range(1, 121))
    button = re.search(r'<button type="button" class="fold-toggle"[^>]*aria-controls="([^"]+)"[^>]*>Show all 120 lines</button>', body)
    assert button, body[:500]
    middle = re.search(rf'<span class="fold-middle" id="{button.group(1)}">(.*?)</span>', body, re.S)
    assert middle and middle.group(1) == lines(80, start=31)
    assert body.index("line 30\n") < body.index("<button") < body.index("line 31\n")
    assert body.endswith(lines(10, start=111))


def test_page_with_a_short_output_has_no_fold(tmp_path: Path) -> None:
    page = folded_page(tmp_path, 40)
    assert f'<pre class="output">{lines(40)}</pre>' in page
    assert "fold-toggle" not in page


def test_fold_length_comes_from_the_site_setting(tmp_path: Path) -> None:
    page = folded_page(tmp_path, 12, SiteInfo(output_fold_lines=8))
    assert "Show all 12 lines" in page
    assert re.search(r'<span class="fold-middle" id="[^"]+">line 7\nline 8\nline 9\nline 10\n</span>', page)


def test_output_fold_lines_setting(tmp_path: Path) -> None:
    assert load_config(tmp_path).output_fold_lines == 40
    (tmp_path / "pyproject.toml").write_text("[tool.site_builder]\noutput_fold_lines = 12\n")
    assert load_config(tmp_path).output_fold_lines == 12
    for bad in ("0", "-3", "2.5", '"40"', "true"):
        (tmp_path / "pyproject.toml").write_text(f"[tool.site_builder]\noutput_fold_lines = {bad}\n")
        with pytest.raises(UsageError, match=r"\[tool.site_builder\] output_fold_lines must be"):
            load_config(tmp_path)


def test_changing_the_fold_setting_renders_the_pages_again(project: Path) -> None:
    write_demo(project, "loud", 'for i in range(30):\n    print("row", i)\n')
    assert run_cli("build", cwd=project).returncode == 0
    page = project / "build" / "loud" / "index.html"
    assert "fold-toggle" not in page.read_text(encoding="utf-8")
    (project / "pyproject.toml").write_text("[tool.site_builder]\noutput_fold_lines = 10\n")
    done = run_cli("build", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "site unchanged" not in done.stderr
    assert "Show all 30 lines" in page.read_text(encoding="utf-8")


def test_every_entry_lists_its_blocks_in_a_navigation_landmark(tmp_path: Path) -> None:
    build = make_build(tmp_path, blocks=(BlockResult("setup", "ok", 0.01),
                                         BlockResult("B-one", "error", 0.1)))
    page = text(site([build])["demo/index.html"])
    navs = re.findall(r'<nav class="toc (toc-top|toc-side)" aria-label="On this page"[^>]*>(.*?)</nav>', page, re.S)
    assert [kind for kind, _ in navs] == ["toc-top", "toc-side"]
    top, side = (body for _, body in navs)
    assert "<details>" in top and "<summary>On this page" in top and "(3 blocks)" in top
    for body in (top, side):
        # Plain links to each code block (prose cells are not blocks), in order: no script needed.
        assert re.findall(r'<a href="#([^"]+)">', body) == ["setup", "B-one", "B-two"]
        assert '<span class="toc-description" title="prints a greeting">prints a greeting</span>' in body
        assert "(failed)" in body.split("B-two")[0] and "(failed)" not in body.split("B-two")[1]
    # The search index learns which ids are blocks (site.js links a match in one to it).
    assert 'data-pagefind-meta="blocks:setup B-one B-two"' in page
    # Before the page's text: the top disclosure is the first thing on a phone.
    assert page.index('class="toc toc-top"') < page.index("<h1")
