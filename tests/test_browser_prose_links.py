"""Prose links to API documentation and between entries in a real browser: reachable with
Tab, the full name as tooltip, reading as inline code, axe clean in both themes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser_support import DESKTOP, describe_violations, serious_look, serve_site, tab_to
from tests.conftest import build_site, shared_folder, write_demo
from tests.inventory_support import write_inventory
from tests.scheme_looks import SchemeLooks

PY = "https://docs.python.org/3/"
LINKED = '''"""
Joined paths
============

Joins with :func:`os.path.join` and :func:`~os.path.basename`; the next example is
:ref:`sphx_glr_auto_examples_plot_second.py`.
"""
import os

# %%
# :class:`collections.OrderedDict` keeps the order, :func:`not.documented` stays code.
print(os.path.join("a", "b"))
'''
SECOND = '''"""
Second
======

Back to :doc:`plot_joined`.
"""
print(2)
'''


@pytest.fixture(scope="module")
def site_url(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:

    def make(project: Path) -> None:
        write_demo(project, "plot_joined", LINKED)
        write_demo(project, "plot_second", SECOND)
        write_inventory(project / "docs" / "python.inv", [
            ("os.path.join", "py:function", "library/os.path.html#$"),
            ("os.path.basename", "py:function", "library/os.path.html#$"),
            ("collections.OrderedDict", "py:class", "library/collections.html#$"),
        ])
        (project / "pyproject.toml").write_text(
            f'[tool.site_builder.api_docs]\npython = {{ url = "{PY}", inventory = "docs/python.inv" }}\n', encoding="utf-8")
        build_site(project)

    with serve_site(shared_folder(tmp_path_factory, "prose-links", make) / "build") as url:
        yield url


def _api_links_look(page: Any, scheme: str) -> tuple[list[list[str]], str]:
    """The API links' tooltips, targets, texts and fonts, and the font of the page's inline code."""
    links = page.locator("a.api-link").evaluate_all(
        "els => els.map(a => [a.title, a.href, a.textContent, getComputedStyle(a.firstElementChild).fontFamily])")
    return links, page.locator("main .literal").last.evaluate("el => getComputedStyle(el).fontFamily")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_prose_api_links_are_focusable_code_with_their_full_name(scheme_looks: SchemeLooks, site_url: str, scheme: str) -> None:
    def walk(page: Any, look: Any) -> None:
        page.goto(site_url + "plot_joined/index.html")
        look(_api_links_look)
        # Tab reaches the first API link
        tab_to(page, "api-link", "an API link")
        assert page.evaluate("() => document.activeElement.title") == "os.path.join"
        # the entry reference leads to the other entry's page, read by its title
        page.locator("main .docstring, main .prose, main .purpose").get_by_role("link", name="Second", exact=True).first.click()
        page.wait_for_url("**/plot_second/index.html")
        look(serious_look)
        page.goto(site_url + "plot_joined/index.html")
        look(serious_look)

    # the looks in both schemes from one walk (typing and clicking checked once)
    ((links, code_font), serious_second, serious_joined), watch = scheme_looks.walked(site_url, scheme, walk, viewport=DESKTOP)
    assert [link[:3] for link in links] == [
        ["os.path.join", f"{PY}library/os.path.html#os.path.join", "os.path.join()"],
        ["os.path.basename", f"{PY}library/os.path.html#os.path.basename", "basename()"],
        ["collections.OrderedDict", f"{PY}library/collections.html#collections.OrderedDict",
         "collections.OrderedDict"],
    ]
    assert all(link[3] == code_font for link in links)  # still reads as inline code
    assert not serious_second, describe_violations(serious_second)
    assert not serious_joined, f"axe-core ({scheme}):\n" + describe_violations(serious_joined)
    watch.assert_clean()
