"""The home page: an index.qmd at the top of the demos folder is the site's index.html (its title,
prose and outputs above the list of entries, which no longer lists it); its own page and downloads
stay in its folder. One shared build (module scope)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import build_site
from tests.page_reader import article_text as visible

HOME = '''---
title: "A gallery of descents"
---

Welcome. The figure is @fig-home; the other page is [first](first/index.html).

```{python}
#| label: fig-home
#| fig-cap: The home figure
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.plot([3, 1, 2])
plt.show()
print("printed on the home page")
```
'''


SECTION = '''---
title: The first part
---

What this part is about.

```{python}
print("printed on the section's page")
```
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("home")
    (project / "demos").mkdir()
    (project / "demos" / "index.qmd").write_text(HOME, encoding="utf-8")
    (project / "demos" / "first.qmd").write_text("---\ntitle: First page\n---\n\nText.\n", encoding="utf-8")
    (project / "demos" / "part").mkdir()
    (project / "demos" / "part" / "index.qmd").write_text(SECTION, encoding="utf-8")
    (project / "demos" / "part" / "member.qmd").write_text("---\ntitle: A member\n---\n\nMember text.\n",
                                                          encoding="utf-8")
    build_site(project)
    return project


def test_the_home_document_is_the_index_above_the_list(project: Path) -> None:
    html = (project / "build" / "index.html").read_text(encoding="utf-8")
    text = visible(html)
    assert "A gallery of descents" in text and "printed on the home page" in text
    assert html.index("printed on the home page") < html.index(">First page</a>")  # the list after it
    assert 'href="first/index.html">First page</a>' in html
    assert 'data-name="index"' not in html  # not listed as an entry


def test_its_files_stay_in_its_folder_and_resolve_from_the_root(project: Path) -> None:
    html = (project / "build" / "index.html").read_text(encoding="utf-8")
    assert 'src="index/_site_builder/block-1-figure-1.png"' in html
    assert (project / "build" / "index" / "_site_builder" / "block-1-figure-1.png").is_file()
    assert 'href="index/index.qmd" download' in html
    assert (project / "build" / "index" / "index.qmd").read_text(encoding="utf-8") == HOME
    assert 'id="fig-home"' in html and 'href="#fig-home"' in html
    assert (project / "build" / "index" / "index.html").is_file()  # its own page, for links to it


def test_no_entry_leads_to_the_home_page_as_previous_or_next(project: Path) -> None:
    first = (project / "build" / "first" / "index.html").read_text(encoding="utf-8")
    assert 'href="../index/index.html"' not in first


def test_a_sections_index_document_is_its_page_above_its_entries(project: Path) -> None:
    html = (project / "build" / "part" / "index.html").read_text(encoding="utf-8")
    text = visible(html)
    assert "The first part" in text and "What this part is about." in text
    assert "printed on the section" in text
    assert html.index("printed on the section") < html.index(">A member</a>")  # its list after it
    assert 'href="../part/member/index.html">A member</a>' in html and 'data-name="part/index"' not in html
    assert ">First page</a>" not in html  # only the section's entries
    assert text.count("The first part") == 1  # its entries under its title, not under a second heading of it
    assert 'href="index/index.qmd" download' in html  # its files stay in its folder
    assert (project / "build" / "part" / "index" / "index.qmd").read_text(encoding="utf-8") == SECTION


def test_the_home_page_lists_a_section_by_its_page(project: Path) -> None:
    html = (project / "build" / "index.html").read_text(encoding="utf-8")
    assert '<h2 id="section-part">The first part</h2>' in html
    assert 'href="part/index.html">The first part</a>' in html
    assert html.index('href="part/index.html"') < html.index('href="part/member/index.html"')  # first in its section
