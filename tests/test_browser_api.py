"""Code links and the API index in a real browser: keyboard, tooltip, Copy, axe in both themes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser_support import DESKTOP, block_source, describe_violations, serious_look_with_images, serve_site
from tests.conftest import build_site, shared_folder, write_demo
from tests.inventory_support import write_inventory
from tests.scheme_looks import SchemeLooks

DEMO = '''
"""waves.py — a sine wave.

Purpose
-------
Plot a sine wave.
"""
import numpy as np
import matplotlib.pyplot as plt

# %% B-plot
x = np.linspace(0, 2 * np.pi, 40)
fig, ax = plt.subplots()
ax.plot(x, np.sin(x))
ax.set_title("A sine wave")
'''


@pytest.fixture(scope="module")
def api_site(tmp_path_factory: pytest.TempPathFactory) -> Path:

    def make(project: Path) -> None:
        write_demo(project, "waves", DEMO)
        write_inventory(project / "inv" / "numpy.inv", [("numpy.linspace", "py:function", "gen/$"),
                                                         ("numpy.ndarray", "py:class", "gen/$")])
        write_inventory(project / "inv" / "mpl.inv", [("matplotlib.pyplot.subplots", "py:function", "gen/$"),
                                                       ("matplotlib.axes.Axes.plot", "py:method", "gen/$")])
        (project / "pyproject.toml").write_text(
            "[tool.site_builder.api_docs]\n"
            'numpy = { url = "https://numpy.test/doc/", inventory = "inv/numpy.inv" }\n'
            'matplotlib = { url = "https://mpl.test/", inventory = "inv/mpl.inv" }\n')
        build_site(project)

    return shared_folder(tmp_path_factory, "api-browser", make)


@pytest.fixture(scope="module")
def api_url(browser: Any, api_site: Path) -> Iterator[str]:
    with serve_site(api_site / "build") as url:
        yield url


FOCUSED_JS = """() => {
  const a = document.activeElement;
  if (!a || !a.classList.contains('api-link')) return null;
  const token = a.firstElementChild;
  const plain = [...document.querySelectorAll('.highlight span.' + token.className)].find(s => !s.closest('a'));
  return {title: a.title, text: a.textContent, underline: getComputedStyle(a).textDecorationLine,
          colour: getComputedStyle(token).color, plainColour: plain ? getComputedStyle(plain).color : null};
}"""


def test_a_code_link_is_reached_with_tab_and_reads_as_code(open_watched_page: Any, api_url: str) -> None:
    page, watch = open_watched_page(api_url, clipboard=True, viewport=DESKTOP)
    page.goto(api_url + "waves/index.html")
    first = page.locator("a.api-link").first
    assert first.evaluate("a => getComputedStyle(a).textDecorationLine") == "none"  # plain until focused
    focused = None
    for _ in range(80):
        page.keyboard.press("Tab")
        focused = page.evaluate(FOCUSED_JS)
        if focused:
            break
    assert focused, "Tab never reached a code link"
    assert focused["title"] == "numpy.ndarray" and focused["text"] == "x"  # the first linked name
    assert focused["underline"] == "underline"
    assert focused["plainColour"] is None or focused["colour"] == focused["plainColour"]  # the token's colour
    page.keyboard.press("Tab")
    assert page.evaluate(FOCUSED_JS)["title"] == "numpy.linspace"
    link = page.locator('a.api-link[title="matplotlib.axes.Axes.plot"]')
    assert link.get_attribute("href") == "https://mpl.test/gen/matplotlib.axes.Axes.plot"
    assert link.inner_text() == "ax.plot"
    link.hover()
    assert link.evaluate("a => getComputedStyle(a).textDecorationLine") == "underline"
    watch.assert_clean()


def test_copy_gives_the_plain_code(open_watched_page: Any, api_url: str, api_site: Path) -> None:
    page, watch = open_watched_page(api_url, clipboard=True, viewport=DESKTOP)
    page.goto(api_url + "waves/index.html")
    page.locator("section#B-plot button.copy").click()
    copied = page.evaluate("() => navigator.clipboard.readText()")
    assert copied.rstrip("\n") == block_source(api_site / "demos" / "waves.py", "B-plot")
    watch.assert_clean()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("path", ["waves/index.html", "api/index.html"])
def test_no_serious_accessibility_violation(scheme_looks: SchemeLooks, api_url: str, path: str, scheme: str) -> None:
    serious, watch = scheme_looks.seen(api_url, api_url + path, scheme, serious_look_with_images, clipboard=True, viewport=DESKTOP)
    assert not serious, f"axe-core on {path} ({scheme}): {len(serious)} serious or critical violations\n" + describe_violations(serious)
    watch.assert_clean()
