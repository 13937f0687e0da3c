"""Prose links to API documentation and between entries in a real browser: reachable with
Tab, the full name as tooltip, reading as inline code, axe clean in both themes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser_support import DESKTOP, axe_violations, describe_violations, serious_violations, serve_site
from tests.conftest import build_site, shared_folder, write_demo
from tests.inventory_support import write_inventory

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


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_prose_api_links_are_focusable_code_with_their_full_name(open_watched_page: Any, site_url: str, scheme: str) -> None:
    page, watch = open_watched_page(site_url, viewport=DESKTOP, color_scheme=scheme)
    page.goto(site_url + "plot_joined/index.html")
    links = page.locator("a.api-link").evaluate_all(
        "els => els.map(a => [a.title, a.href, a.textContent, getComputedStyle(a.firstElementChild).fontFamily])")
    assert [link[:3] for link in links] == [
        ["os.path.join", f"{PY}library/os.path.html#os.path.join", "os.path.join()"],
        ["os.path.basename", f"{PY}library/os.path.html#os.path.basename", "basename()"],
        ["collections.OrderedDict", f"{PY}library/collections.html#collections.OrderedDict",
         "collections.OrderedDict"],
    ]
    code_font = page.locator("main .literal").last.evaluate("el => getComputedStyle(el).fontFamily")
    assert all(link[3] == code_font for link in links)  # still reads as inline code
    # Tab reaches the first API link
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.classList.contains('api-link')"):
            break
    else:
        pytest.fail("Tab never reached an API link")
    assert page.evaluate("() => document.activeElement.title") == "os.path.join"
    # the entry reference leads to the other entry's page, read by its title
    page.locator("main .docstring, main .prose, main .purpose").get_by_role("link", name="Second", exact=True).first.click()
    page.wait_for_url("**/plot_second/index.html")
    serious = serious_violations(axe_violations(page))
    assert not serious, describe_violations(serious)
    page.goto(site_url + "plot_joined/index.html")
    serious = serious_violations(axe_violations(page))
    assert not serious, f"axe-core ({scheme}):\n" + describe_violations(serious)
    watch.assert_clean()
