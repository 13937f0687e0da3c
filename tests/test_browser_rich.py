"""Rich values in a real browser: estimator diagrams that fold, a Styler's formatting, a value
whose CSS aims at the page (see browser_support.py for the tools).

One small site, built once: scikit-learn pipelines, a pandas Styler, a hostile value and two
values with the same ids.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser_support import (DESKTOP, PageWatch, describe_violations, read_only_pages, serious_look, serve_site,
                                   watched_context, watched_page)
from tests.conftest import build_site, shared_folder, write_demo
from tests.scheme_looks import SchemeLooks


DIAGRAMS = '''
"""diagrams.py — scikit-learn's estimator diagrams.

Purpose
-------
Two pipelines, shown as scikit-learn draws them.
"""
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

# %% B-simple
make_pipeline(StandardScaler(), LogisticRegression())

# %% B-columns
make_pipeline(ColumnTransformer([("num", StandardScaler(), [0]), ("cat", OneHotEncoder(), [1])]),
              LogisticRegression())
'''

STYLER = '''
"""styler.py — a pandas Styler.

Purpose
-------
The smallest value of each column in bold.
"""
import pandas as pd

# %% B-table
frame = pd.DataFrame({"alpha": [0.3, 0.1, 0.2], "score": [0.91, 0.95, 0.89]})
frame.style.highlight_min(props="font-weight:bold", axis=0)
'''

HOSTILE = '''
"""hostile.py — a value whose CSS aims at the page.

Purpose
-------
Try to restyle and cover the page.
"""


class Hostile:
    def _repr_html_(self):
        return """<style>
@import url("http://evil.example/x.css");
body { background: red !important; font-size: 40px !important; }
html, :root { --fg: red; --bg: red; }
header, .site-header, #search, .site-title { display: none !important; }
.ov { position: fixed; inset: 0; z-index: 2147483647; background: url(javascript:alert(1)) red; }
.far { position: absolute; top: -3000px; left: -3000px; width: 9000px; height: 9000px; background: red; z-index: 9999; }
</style>
<div class="ov" style="position: fixed; background-image: url(http://evil.example/t.png)">overlay</div>
<div class="far">far</div>
<p id="main" style="behavior: url(x.htc); color: expression(alert(1))">hostile-value-text</p>"""


class Folding:
    """Two of these on one page: the same ids in both."""

    def _repr_html_(self):
        return """<style>.box { display: none; } #same:checked ~ .box { display: block; }</style>
<input type="checkbox" id="same"><label for="same">fold me</label><div class="box">folded-content</div>"""


class CommentOpener:
    """CSS whose tokens, joined without a separator, open a comment that a later string closes."""

    def _repr_html_(self):
        return """<style>a //**/* { color: red }
.x { content: "*/ {} body::after { position: fixed; inset: 0; z-index: 2147483647; background: red; content: 'session expired' } .site-header, main { display: none }" }
</style>
<p style="anchor-name: --a //**/*; content: '*/ } main { display: none } body::before { position: fixed; inset: 0; content: 1 }'">comment-opener-text</p>"""


# %% B-hostile
Hostile()

# %% B-fold-one
Folding()

# %% B-fold-two
Folding()

# %% B-comment
CommentOpener()
'''

PAGE_STYLE_JS = """() => {
  const header = document.querySelector('header.site-header');
  const box = header.getBoundingClientRect();
  const atHeader = document.elementFromPoint(box.left + 10, box.top + box.height / 2);
  return {
    body: getComputedStyle(document.body).backgroundColor,
    font: getComputedStyle(document.body).fontSize,
    fg: getComputedStyle(document.documentElement).getPropertyValue('--fg'),
    header: getComputedStyle(header).display,
    title: getComputedStyle(document.querySelector('.site-title')).display,
    headerOnTop: header.contains(atHeader),
  };
}"""


# What covers or hides the page: elements and ::before/::after boxes with fixed positions, and
# whether the header and main show.
PAGE_COVER_JS = """() => {
  const fixed = [];
  for (const el of [document.documentElement, ...document.querySelectorAll('*')]) {
    for (const pseudo of [null, '::before', '::after']) {
      const style = getComputedStyle(el, pseudo);
      if (style.position === 'fixed' && (pseudo === null || style.content !== 'none'))
        fixed.push(el.tagName + (el.id ? '#' + el.id : '') + (pseudo || ''));
    }
  }
  const shown = el => getComputedStyle(el).display !== 'none' && el.getBoundingClientRect().height > 0;
  return {fixed, header: shown(document.querySelector('header.site-header')), main: shown(document.querySelector('main'))};
}"""


@pytest.fixture(scope="module")
def rich_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("sklearn", reason="scikit-learn (test extra) draws the estimator diagrams")
    pytest.importorskip("pandas", reason="pandas (test extra) makes the Styler")

    def make(project: Path) -> None:
        write_demo(project, "diagrams", DIAGRAMS)
        write_demo(project, "styler", STYLER)
        write_demo(project, "hostile", HOSTILE)
        build_site(project)

    return shared_folder(tmp_path_factory, "rich-values", make) / "build"


@pytest.fixture(scope="module")
def rich_url(browser: Any, rich_site: Path) -> Iterator[str]:
    with serve_site(rich_site) as url:
        yield url


def test_estimator_diagram_renders_folds_and_hides_its_text_fallback(open_watched_page: Any, rich_url: str) -> None:
    page, watch = open_watched_page(rich_url, viewport=DESKTOP)
    page.goto(rich_url + "diagrams/index.html")
    for block in ("B-simple", "B-columns"):
        value = page.locator(f"section#{block} .value-html")
        assert value.locator(".sk-container").is_visible(), f"{block}: the diagram is hidden"
        assert not value.locator(".sk-text-repr-fallback").is_visible(), f"{block}: the text fallback shows"
    diagram = page.locator("section#B-simple .value-html")
    content = diagram.locator(".sk-toggleable__content").first
    assert not content.is_visible()
    diagram.locator("label.sk-toggleable__label").first.click()
    assert content.is_visible(), "clicking the Pipeline's label does not unfold its parameters"
    assert "Parameters" in content.inner_text()
    # The other diagram did not unfold with it (its ids are its own).
    assert not page.locator("section#B-columns .sk-toggleable__content").first.is_visible()
    watch.assert_clean()


@pytest.fixture(scope="module")
def rich_read_only(browser: Any, rich_url: str) -> Iterator[Callable[[str], tuple[Any, PageWatch]]]:
    """``rich_read_only(path)``: a page of the rich site loaded once for the tests that only read it."""
    with read_only_pages(browser, rich_url, viewport=DESKTOP) as load:
        yield load


def test_styler_formatting_shows(rich_read_only: Callable[[str], tuple[Any, PageWatch]]) -> None:
    page, watch = rich_read_only("styler/index.html")
    cells = page.locator("section#B-table .value-html td")
    weights = {cells.nth(i).inner_text(): cells.nth(i).evaluate("c => getComputedStyle(c).fontWeight")
               for i in range(cells.count())}
    assert int(weights["0.100000"]) >= 700 and int(weights["0.890000"]) >= 700, weights
    assert int(weights["0.300000"]) < 700, weights
    watch.assert_clean()


def test_hostile_css_leaves_the_page_alone(rich_read_only: Callable[[str], tuple[Any, PageWatch]]) -> None:
    styler, styler_watch = rich_read_only("styler/index.html")
    plain = styler.evaluate(PAGE_STYLE_JS)
    page, watch = rich_read_only("hostile/index.html")
    assert page.evaluate(PAGE_STYLE_JS) == plain
    assert plain["headerOnTop"] and plain["header"] != "none"
    value = page.locator("section#B-hostile .value-html")
    box = value.bounding_box()
    overlay = page.locator(".value-html .ov").bounding_box()
    assert overlay["y"] >= box["y"] - 1 and overlay["height"] <= box["height"] + 1, "the overlay left its box"
    assert "hostile-value-text" in value.inner_text()
    styler_watch.assert_clean()
    watch.assert_clean()  # no request to evil.example (nor anywhere else outside the site)


def test_css_that_opens_a_comment_stays_in_its_box(rich_read_only: Callable[[str], tuple[Any, PageWatch]]) -> None:
    plain = rich_read_only("styler/index.html")[0].evaluate(PAGE_COVER_JS)
    page, watch = rich_read_only("hostile/index.html")
    assert page.evaluate(PAGE_COVER_JS) == plain == {"fixed": plain["fixed"], "header": True, "main": True}
    assert page.locator("header.site-header").is_visible() and page.locator("main").is_visible()
    assert page.locator("section#B-comment .value-html").get_by_text("comment-opener-text").is_visible()
    rich_read_only("styler/index.html")[1].assert_clean()
    watch.assert_clean()


def test_values_with_the_same_ids_fold_on_their_own(open_watched_page: Any, rich_url: str) -> None:
    page, watch = open_watched_page(rich_url, viewport=DESKTOP)
    page.goto(rich_url + "hostile/index.html")
    one, two = page.locator("section#B-fold-one .value-html"), page.locator("section#B-fold-two .value-html")
    assert not one.get_by_text("folded-content").is_visible()
    two.get_by_text("fold me").click()
    assert two.get_by_text("folded-content").is_visible()
    assert not one.get_by_text("folded-content").is_visible()
    watch.assert_clean()


def test_diagrams_work_from_disk(open_watched_page: Any, rich_site: Path) -> None:
    base = rich_site.as_uri() + "/"
    page, watch = open_watched_page(base, viewport=DESKTOP)
    page.goto(base + "diagrams/index.html")
    assert page.locator("section#B-simple .sk-container").is_visible()
    assert not page.locator("section#B-simple .sk-text-repr-fallback").is_visible()
    watch.assert_clean()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("entry", ["diagrams", "styler"])
def test_rich_values_are_accessible(scheme_looks: SchemeLooks, rich_url: str, scheme: str, entry: str) -> None:
    def unfold_a_diagram(page: Any) -> None:
        if entry == "diagrams":
            page.locator("section#B-simple label.sk-toggleable__label").first.click()

    serious, watch = scheme_looks.seen(rich_url, rich_url + f"{entry}/index.html", scheme, serious_look,
                                       prepare=unfold_a_diagram, viewport=DESKTOP)
    assert not serious, f"axe-core on {entry} ({scheme})\n" + describe_violations(serious)
    watch.assert_clean()


# ---------------------------------------------------------------- interactive Plotly figures

# plotly.min.js is 4.8 MB of script to parse: on a loaded machine a page takes a while to load.
PLOTLY_LOAD_MS = 60_000

PLOTS = '''
"""plots.py — Plotly figures, as a value and through fig.show().

Purpose
-------
Interactive figures, offline.
"""
import plotly.express as px
import plotly.graph_objects as go

# %% B-value
fig = go.Figure(go.Scatter(x=[1, 2, 3], y=[4, 1, 3], mode="lines+markers"))
fig.update_layout(title="value figure")
fig

# %% B-show
print("before show")
px.bar(x=["a", "b", "c"], y=[3, 1, 2], title="shown figure").show()
print("after show")

# %% B-heatmap
go.Figure(go.Heatmap(z=[[1, 2, 3], [3, 1, 2]]), layout={"title": "<span style='color:green'>heat</span>"})
'''


@pytest.fixture(scope="module")
def plotly_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("plotly", reason="plotly (test extra) makes the interactive figures")

    def make(project: Path) -> None:
        write_demo(project, "plots", PLOTS)
        write_demo(project, "plain", '"""plain.py — no figure.\n\nPurpose\n-------\nNone.\n"""\n\n# %% B-one\nprint(1)\n')
        # fig.show() must not open a browser: a BROWSER that fails loudly would say so
        build_site(project, env={"BROWSER": "false"})

    return shared_folder(tmp_path_factory, "plotly", make) / "build"


@pytest.fixture(scope="module")
def plotly_url(browser: Any, plotly_site: Path) -> Iterator[str]:
    with serve_site(plotly_site) as url:
        yield url


@pytest.fixture(scope="module")
def plotly_loaded(browser: Any, plotly_url: str) -> Iterator[tuple[Any, PageWatch]]:
    """The Plotly page loaded once (4.8 MB of script) for the module's tests that hover its figures."""
    context = watched_context(browser, plotly_url, viewport=DESKTOP)
    try:
        page, watch = watched_page(context, plotly_url)
        page.goto(plotly_url + "plots/index.html", timeout=PLOTLY_LOAD_MS)
        yield page, watch
    finally:
        context.close()


@pytest.fixture
def plotly_page(plotly_loaded: tuple[Any, PageWatch]) -> Iterator[tuple[Any, PageWatch]]:
    """The loaded Plotly page and its watch (the trouble of its load and of every test on it), at the top,
    the mouse in its corner: each test hovers a figure of its own and leaves the page as it found it."""
    page, watch = plotly_loaded
    yield page, watch
    page.mouse.move(0, 0)
    page.evaluate("() => window.scrollTo(0, 0)")


def test_plotly_figures_are_interactive_in_order_with_the_output(plotly_page: tuple[Any, PageWatch]) -> None:
    page, watch = plotly_page
    for block in ("B-value", "B-show"):
        figure = page.locator(f"section#{block} .value-plotly")
        figure.locator(".main-svg").first.wait_for(timeout=PLOTLY_LOAD_MS)
        assert figure.locator(".plotly-fallback").is_hidden()
    texts = page.locator("section#B-show").evaluate(
        "s => Array.from(s.querySelectorAll('pre.output:not(.plotly-fallback), .value-plotly')).map(e => e.matches('.value-plotly') ? 'FIGURE' : e.textContent.trim())")
    assert texts == ["before show", "FIGURE", "after show"]
    assert "shown figure" in page.locator("section#B-show .value-plotly").inner_text()
    # Interactive: hovering a bar shows its hover label.
    bar = page.locator("section#B-show .value-plotly .point").first
    bar.scroll_into_view_if_needed()
    box = bar.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2, steps=5)  # over plotly's drag layer
    page.locator("section#B-show .hoverlayer .hovertext").first.wait_for(timeout=PLOTLY_LOAD_MS)
    watch.assert_clean()  # no CSP violation, no request leaving the site


def test_plotly_styles_apply_under_the_strict_csp(plotly_page: tuple[Any, PageWatch]) -> None:
    # plotly.js sets a heatmap's image-rendering and its colour bar's fills as style attributes,
    # which the CSP refuses; figures.js sets them through the CSSOM, which it allows.
    page, watch = plotly_page
    csp = page.locator('meta[http-equiv="Content-Security-Policy"]').get_attribute("content")
    assert "style-src 'self';" in csp and "unsafe-inline" not in csp
    heatmap = page.locator("section#B-heatmap .value-plotly")
    heatmap.locator(".main-svg").first.wait_for(timeout=PLOTLY_LOAD_MS)
    image = heatmap.locator("image").first
    assert image.evaluate("i => getComputedStyle(i).imageRendering") == "pixelated"  # crisp cells, not blurred
    assert heatmap.locator(".colorbar").count() == 1
    heatmap.scroll_into_view_if_needed()
    box = heatmap.locator(".nsewdrag").first.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 4, box["y"] + box["height"] / 4, steps=5)
    label = heatmap.locator(".hoverlayer .hovertext").first
    label.wait_for(timeout=PLOTLY_LOAD_MS)
    assert label.locator("path").evaluate("p => getComputedStyle(p).fill") != "rgb(0, 0, 0)"  # a styled hover box
    watch.assert_clean()  # no "Applying inline style violates ... style-src" in the console


def test_plotly_works_from_disk(open_watched_page: Any, plotly_site: Path) -> None:
    base = plotly_site.as_uri() + "/"
    page, watch = open_watched_page(base, viewport=DESKTOP)
    page.goto(base + "plots/index.html", timeout=PLOTLY_LOAD_MS)
    page.locator("section#B-value .main-svg").first.wait_for(timeout=PLOTLY_LOAD_MS)
    watch.assert_clean()


def test_plotly_js_is_the_sites_own_and_only_where_needed(plotly_site: Path) -> None:
    import plotly

    shipped = plotly_site / "static" / "plotly.min.js"
    assert shipped.read_bytes() == (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_bytes()
    page = (plotly_site / "plots" / "index.html").read_text()
    assert '<script src="../static/plotly.min.js" defer></script>' in page
    assert "cdn" not in page.lower() and "<script>" not in page
    assert (plotly_site / "plots" / "_site_builder" / "plotly-1.js").is_file()
    assert "plotly.min.js" not in (plotly_site / "plain" / "index.html").read_text()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_plotly_page_is_accessible(scheme_looks: SchemeLooks, plotly_url: str, scheme: str) -> None:
    serious, watch = scheme_looks.seen(plotly_url, plotly_url + "plots/index.html", scheme, serious_look,
                                       prepare=_wait_for_the_shown_figure, viewport=DESKTOP, timeout_ms=PLOTLY_LOAD_MS)
    assert not serious, f"axe-core on the Plotly page ({scheme})\n" + describe_violations(serious)
    watch.assert_clean()


def _wait_for_the_shown_figure(page: Any) -> None:
    page.locator("section#B-show .main-svg").first.wait_for(timeout=PLOTLY_LOAD_MS)
