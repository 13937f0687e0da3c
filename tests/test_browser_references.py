"""Previews of citations and cross-references in a real browser: open on hover and on keyboard
focus, close with Escape, axe clean in both themes, and without script the links still lead there."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser_support import (DESKTOP, axe_violations, describe_violations, serious_violations, serve_site,
                                   tab_to)
from tests.conftest import build_site, shared_folder, write_demo
from tests.scheme_looks import SchemeLooks

BIB = "@book{Friedman1956, author={Friedman, Milton}, title={A Theory of the Consumption Function}, year=1956}\n"
CITING = '''\
"""citing.py — cites and refers.

Purpose
-------
As {cite:t}`Friedman1956` argued, see {ref}`the section <sec-target>` of the other entry.
"""

# %% B-a
print("[B-a] ok")
'''
TARGET = '''\
"""target.py — holds a section.

Purpose
-------
Its purpose.
"""

# %% B-a
print("[B-a] ok")

# %% [markdown]
# (sec-target)=
# ## The target section
#
# The first paragraph of the target section, citing [@Friedman1956].
#
# ```{exercise}
# :label: ex-one
# An exercise.
# ```
#
# ```{solution} ex-one
# Its solution, titled by a link to the exercise.
# ```
'''


@pytest.fixture(scope="module")
def site_url(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:

    def make(project: Path) -> None:
        (project / "pyproject.toml").write_text('[tool.site_builder]\nbibliography = ["refs.bib"]\n')
        (project / "refs.bib").write_text(BIB)
        write_demo(project, "citing", CITING)
        write_demo(project, "target", TARGET)
        build_site(project)

    with serve_site(shared_folder(tmp_path_factory, "references-browser", make) / "build") as url:
        yield url


def _preview_look(page: Any, scheme: str) -> tuple[bool, list[dict[str, Any]]]:
    """Whether the preview is open, and the page's serious axe violations as it is."""
    return page.locator("#link-preview").is_visible(), serious_violations(axe_violations(page))


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_previews_open_on_hover_and_focus_and_close_with_escape(scheme_looks: SchemeLooks, site_url: str,
                                                                scheme: str) -> None:
    def walk(page: Any, look: Any) -> None:
        page.goto(site_url + "citing/index.html")
        preview = page.locator("#link-preview")
        citation = page.locator("a.citation-link").first
        citation.hover()
        preview.wait_for(state="visible")
        assert "A Theory of the Consumption Function" in preview.inner_text()
        assert citation.get_attribute("aria-describedby") == "link-preview"
        page.keyboard.press("Escape")
        preview.wait_for(state="hidden")
        # keyboard: Tab to the cross-reference, its preview opens from the other page (fetched)
        tab_to(page, "xref", "the cross-reference")
        preview.wait_for(state="visible")
        text = preview.inner_text()
        assert "The target section" in text and "The first paragraph of the target section, citing (Friedman, 1956)." in text
        look(_preview_look)
        page.keyboard.press("Escape")
        preview.wait_for(state="hidden")
        # a solution links to the exercise it solves (below its title: no control in a control)
        page.goto(site_url + "target/index.html")
        page.locator("details.solution summary").click()
        page.locator(".solution-of a.xref").hover()
        preview.wait_for(state="visible")
        assert "An exercise." in preview.inner_text()
        look(_preview_look)

    # the previews' looks in both schemes, from one walk (hovering and typing checked once)
    looks, watch = scheme_looks.walked(site_url, scheme, walk, viewport=DESKTOP)
    assert len(looks) == 2
    for (shown, serious), where in zip(looks, ("preview open", "a solution's title")):
        assert shown, f"the preview closed when the page turned {scheme} ({where})"
        assert not serious, f"axe-core ({scheme}, {where}):\n" + describe_violations(serious)
    watch.assert_clean()


def test_links_work_without_script(open_watched_page: Any, site_url: str) -> None:
    page, watch = open_watched_page(site_url, viewport=DESKTOP, java_script_enabled=False)
    page.goto(site_url + "citing/index.html")
    page.locator("a.xref").click()
    page.wait_for_url("**/target/index.html#sec-target")
    page.goto(site_url + "citing/index.html")
    page.locator("a.citation-link").click()
    page.wait_for_url("**/citing/index.html#bib-Friedman1956")
    assert page.locator("#bib-Friedman1956").is_visible()
