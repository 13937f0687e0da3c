"""A value's HTML keeps its looks, never the page's: the CSS sanitiser and the value's scoped ids.

Fast checks of value_html.py / css.py on hostile and real-looking input (no build); the
built pages and the browser are in test_browser_rich.py.
"""

from __future__ import annotations

import re

import pytest

from site_builder.site.safety.css import clean_declarations, scope_stylesheet
from site_builder.site.outputs.value_html import clean_value_html

HOSTILE_CSS = """
@import url("http://evil.example/x.css");
@import "evil.css";
@charset "utf-8";
@namespace svg url(http://www.w3.org/2000/svg);
@font-face { font-family: x; src: url(http://evil.example/f.woff); }
@keyframes spin { from { color: red } to { color: blue } }
@property --fg { syntax: "<color>"; inherits: false; initial-value: red; }
body { background: red !important; }
html { font-size: 40px; }
:root { --fg: red; }
header, .site-header { display: none !important; }
#main { display: none; }
* { color: red; }
+ p { color: red; }
~ p { color: red; }
& p { color: red; }
.bad-url { background: url(javascript:alert(1)); color: red; }
.bad-url2 { background-image: url("http://evil.example/t.png"); }
.bad-set { background-image: image-set("http://evil.example/t.png" 1x); }
.expr { width: expression(alert(1)); color: blue; }
.fixed { position: fixed; top: 0; left: 0; }
.sticky { position: sticky; top: 0; }
.smuggled { --p: fixed; position: var(--p); }
.on-top { z-index: 2147483647; }
.binding { -moz-binding: url(x.xml#y); behavior: url(x.htc); }
@media (min-width: 10px) { body { display: none; } .inner { color: green; } }
@supports (display: grid) { .grid { display: grid; } }
"""


def rules(css: str) -> list[str]:
    return [line.strip() for line in css.splitlines() if line.strip()]


def test_every_rule_is_scoped_to_the_values_box() -> None:
    css = scope_stylesheet(HOSTILE_CSS, "value-3", "value-3")
    for line in rules(css):
        if line.startswith(("@media", "@supports", "}")):
            continue
        selectors = line.split("{")[0]
        for selector in selectors.split(","):
            assert selector.strip().startswith("#value-3"), line
    # The page's elements mean the value's own box; its ids are the value's renamed ids.
    assert "#value-3 { background: red !important }" in css
    assert "#value-3 { --fg: red }" in css
    assert "#value-3 header, #value-3 .site-header { display: none !important }" in css
    assert "#value-3 #value-3-main { display: none }" in css
    assert "#value-3 * { color: red }" in css
    assert "@media (min-width: 10px) {\n#value-3 { display: none }\n#value-3 .inner { color: green }\n}" in css
    assert "@supports (display: grid) {\n#value-3 .grid { display: grid }\n}" in css


def test_nothing_leaves_the_value_or_runs() -> None:
    css = scope_stylesheet(HOSTILE_CSS, "value-3", "value-3")
    lowered = css.lower()
    for banned in ("@import", "evil", "javascript", "expression", "image-set", "@font-face",
                   "@keyframes", "@property", "@namespace", "position: fixed", "position: sticky",
                   "position: var", "2147483647",
                   "binding", "behavior", "url(", "+ p", "~ p", "&"):
        assert banned not in lowered, banned
    # A rule loses its bad declarations only: the others stay.
    assert "#value-3 .bad-url { color: red }" in css
    assert "#value-3 .expr { color: blue }" in css


@pytest.mark.parametrize("style", [
    "background: url(javascript:alert(1))",
    "background-image: url('http://evil.example/t.png')",
    "width: expression(alert(1))",
    "position: fixed",
    "position: sticky",
    "position: var(--p)",
    "z-index: 100000",
    "-moz-binding: url(x.xml#y)",
    "behavior: url(x.htc)",
    "background: image-set('x.png' 1x)",
    "list-style: url(http://evil.example/x.png)",
])
def test_a_hostile_style_attribute_is_dropped(style: str) -> None:
    assert clean_declarations(style, "v") == []


def test_data_images_and_known_functions_pass() -> None:
    kept = "; ".join(clean_declarations(
        "background-image: url(data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=); color: rgb(1 2 3);"
        " width: calc(100% - 2em); position: absolute; z-index: 9999; anchor-name: --doc", "v"))
    assert "url(data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=)" in kept
    assert "color: rgb(1 2 3)" in kept and "width: calc(100% - 2em)" in kept
    assert "position: absolute" in kept and "z-index: 9999" in kept
    assert "anchor-name: --v-doc" in kept  # anchors are renamed per value, as ids are
    assert clean_declarations("background: url(data:text/html,<script>alert(1)</script>)", "v") == []


def test_style_attributes_become_scoped_rules_and_ids_are_renamed() -> None:
    html = ('<style>#T_1_row0_col0 { font-weight: bold; }</style>'
            '<table id="T_1"><tr><td id="T_1_row0_col0" style="color: green; position: fixed">1</td></tr></table>'
            '<a href="#T_1">up</a><input type="checkbox" id="c"><label for="c">fold</label>'
            '<input type="text" value="dead"><button onclick="alert(1)">b</button><script>alert(2)</script>')
    styled = clean_value_html(html, "value-2")
    assert 'id="value-2-T_1"' in styled.html and 'id="value-2-T_1_row0_col0"' in styled.html
    assert 'href="#value-2-T_1"' in styled.html
    assert '<input type="checkbox" id="value-2-c"><label for="value-2-c">fold</label>' in styled.html
    assert 'type="text"' not in styled.html and "dead" not in styled.html
    assert "script" not in styled.html and "onclick" not in styled.html and "alert" not in styled.html
    assert "style=" not in styled.html  # the page's CSP runs no inline style: they are rules now
    assert "#value-2 #value-2-T_1_row0_col0 { font-weight: bold }" in styled.css
    cls = re.search(r'class="(value-2-style-\d+)"', styled.html).group(1)
    assert f"#value-2 .{cls} {{ color: green !important }}" in styled.css


def test_two_values_with_the_same_ids_do_not_collide() -> None:
    html = '<input type="checkbox" id="fold"><label for="fold">x</label>'
    first, second = clean_value_html(html, "value-1"), clean_value_html(html, "value-2")
    ids = re.findall(r'id="([^"]+)"', first.html + second.html)
    assert len(ids) == len(set(ids)) == 2


def test_a_scikit_learn_diagram_keeps_its_folding_and_hides_its_fallback() -> None:
    sklearn = pytest.importorskip("sklearn", reason="scikit-learn (test extra) draws the real estimator diagram")
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    with sklearn.config_context(display="diagram"):
        html = make_pipeline(StandardScaler(), LogisticRegression())._repr_html_()
    styled = clean_value_html(html, "value-1")
    assert re.search(r'<input [^>]*id="value-1-sk-estimator-id-\d+" type="checkbox"', styled.html)
    assert re.search(r'<label for="value-1-sk-estimator-id-\d+"', styled.html)
    assert "<script" not in styled.html and "onclick" not in styled.html
    assert "#value-1 .sk-global div.sk-text-repr-fallback { display: none }" in styled.css
    assert "input.sk-toggleable__control:checked~div.sk-toggleable__content { display: block" in styled.css
    assert "position: fixed" not in styled.css


def test_a_pandas_styler_keeps_its_formatting() -> None:
    pd = pytest.importorskip("pandas", reason="pandas (test extra) makes the real Styler HTML")
    pytest.importorskip("jinja2", reason="pandas' Styler needs Jinja2")
    frame = pd.DataFrame({"a": [3.0, 1.0, 2.0], "b": [0.5, 0.25, 0.75]})
    html = frame.style.highlight_min(props="font-weight:bold", axis=0)._repr_html_()
    styled = clean_value_html(html, "value-4")
    bold = re.search(r"(#value-4 #value-4-T_\w+_row1_col0[^{]*)\{ font-weight: bold }", styled.css)
    assert bold, styled.css


def test_a_plotly_data_file_holds_json_and_nothing_else() -> None:
    from site_builder.site.outputs.interactive import plotly_figure

    hostile = '{"data": [{"name": "</script><script>alert(1)</script>\\u2028"}], "layout": {}}'
    script = plotly_figure("plotly-1", hostile).decode("ascii")
    assert script.startswith("(window.siteFigures = window.siteFigures || []).push({")
    assert "\u2028" not in script and "\\u2028" in script  # ASCII only: no line-separator tricks
    assert plotly_figure("plotly-1", "alert(1)") is None
    assert plotly_figure("plotly-1", '["not", "a figure"]') is None
