"""A Quarto document's page in a real browser: tabsets are tabs (roles, arrow keys, Home/End, a
group's tabsets in step) and, without script, every panel under its heading; a collapsed callout is
folded and opens from the keyboard; axe clean in both themes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser_support import DESKTOP, describe_violations, serious_look, serve_site
from tests.conftest import build_site, shared_folder
from tests.scheme_looks import SchemeLooks

DOCUMENT = '''---
title: Tabs and callouts
---

::: {.panel-tabset group="language"}
## Python

Python first.

## Julia

Julia first.

## R

R first.
:::

Between the tabsets.

::: {.panel-tabset group="language"}
## Python

Python second.

## Julia

Julia second.
:::

::: {.callout-tip collapse="true"}
## Folded tip

The folded text.
:::

::: {.callout-warning}
An open warning.
:::
'''


@pytest.fixture(scope="module")
def site_url(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:

    def make(project: Path) -> None:
        (project / "demos").mkdir()
        (project / "demos" / "tabs.qmd").write_text(DOCUMENT, encoding="utf-8")
        build_site(project)

    with serve_site(shared_folder(tmp_path_factory, "quarto-browser", make) / "build") as url:
        yield url


def test_tabsets_are_tabs_from_the_keyboard_in_step_by_group(open_watched_page: Any, site_url: str) -> None:
    page, watch = open_watched_page(site_url, viewport=DESKTOP)
    page.goto(site_url + "tabs/index.html")
    first, second = page.locator(".tabset").nth(0), page.locator(".tabset").nth(1)
    tabs = first.get_by_role("tab")
    assert tabs.all_inner_texts() == ["Python", "Julia", "R"]
    assert first.get_by_role("tabpanel").inner_text().strip().endswith("Python first.")
    assert page.get_by_text("Julia first.").is_hidden()
    tabs.nth(0).focus()
    page.keyboard.press("ArrowRight")
    assert tabs.nth(1).get_attribute("aria-selected") == "true"
    assert page.evaluate("document.activeElement.textContent") == "Julia"
    assert page.get_by_text("Julia first.").is_visible() and page.get_by_text("Python first.").is_hidden()
    # the other tabset of the group follows
    assert page.get_by_text("Julia second.").is_visible() and page.get_by_text("Python second.").is_hidden()
    page.keyboard.press("End")
    assert tabs.nth(2).get_attribute("aria-selected") == "true" and page.get_by_text("R first.").is_visible()
    assert page.get_by_text("Julia second.").is_visible()  # no R tab there: it stays
    page.keyboard.press("ArrowRight")  # wraps around
    assert tabs.nth(0).get_attribute("aria-selected") == "true"
    page.keyboard.press("Tab")  # one tab in the Tab order: then its panel
    assert page.evaluate("document.activeElement.getAttribute('role')") == "tabpanel"
    assert second.get_by_role("tab").nth(0).get_attribute("aria-selected") == "true"
    watch.assert_clean()


def test_without_script_every_panel_is_read_under_its_heading(open_watched_page: Any, site_url: str) -> None:
    page, watch = open_watched_page(site_url, viewport=DESKTOP, java_script_enabled=False)
    page.goto(site_url + "tabs/index.html")
    for text in ("Python first.", "Julia first.", "R first.", "Python second.", "Julia second."):
        assert page.get_by_text(text).is_visible(), text
    assert page.locator(".tabset h2.tab-title").all_inner_texts() == ["Python", "Julia", "R", "Python", "Julia"]
    assert page.get_by_role("tab").count() == 0


def test_printed_pages_hold_every_panel_and_the_folded_callout(open_watched_page: Any, site_url: str) -> None:
    page, watch = open_watched_page(site_url, viewport=DESKTOP)
    page.goto(site_url + "tabs/index.html")
    page.emulate_media(media="print")
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    for text in ("Python first.", "Julia first.", "R first.", "The folded text."):
        assert page.get_by_text(text).is_visible(), text
    watch.assert_clean()


def test_a_collapsed_callout_is_folded_and_opens_from_the_keyboard(open_watched_page: Any, site_url: str) -> None:
    page, watch = open_watched_page(site_url, viewport=DESKTOP)
    page.goto(site_url + "tabs/index.html")
    assert page.get_by_text("The folded text.").is_hidden()
    page.locator("details.callout-fold > summary").focus()
    page.keyboard.press("Enter")
    assert page.get_by_text("The folded text.").is_visible()
    assert page.get_by_text("An open warning.").is_visible()
    watch.assert_clean()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_clean_in_both_themes(scheme_looks: SchemeLooks, site_url: str, scheme: str) -> None:
    serious, watch = scheme_looks.seen(site_url, site_url + "tabs/index.html", scheme, serious_look, prepare=_open_the_callout,
                                       viewport=DESKTOP)
    assert not serious, describe_violations(serious)
    watch.assert_clean()


def _open_the_callout(page: Any) -> None:
    page.locator("details.callout-fold > summary").click()
