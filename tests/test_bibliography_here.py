"""Issue 29: ``{bibliography}`` places the References list where it stands; a reST label written
above a docstring's title names that page; a link to a document the site lacks reads as text.

One shared build (module scope): a bibliography, a MyST notebook citing it with its list in
the middle of the page, a Sphinx-Gallery script with ``.. bibliography::`` and a label above its
title, and a notebook linking to both.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import MYST_FRONT_MATTER, build_keeping_warnings

BIB = """@book{Friedman1956, author = {Friedman, Milton}, title = {A Theory of the Consumption Function},
  publisher = {Princeton University Press}, year = {1956}}
@article{Hall1978, author = {Hall, Robert E.}, title = {Stochastic Implications of the Life Cycle},
  journal = {Journal of Political Economy}, year = {1978}}
"""
LECTURE = MYST_FRONT_MATTER + """
(lecture-top)=
# Consumption

As {cite}`Friedman1956` argued and {cite:t}`Hall1978` showed.

## Works cited

```{bibliography}
```

## After the list

TEXT-AFTER-THE-LIST

```{code-cell} ipython3
print(1)
```
"""
GALLERY = '''"""
.. _gallery-top:

Gallery title
=============

Summary of the gallery. Cites :cite:`Hall1978`.

.. bibliography::

GALLERY-TEXT-AFTER.
"""
print(2)
'''
LINKS = MYST_FRONT_MATTER + """
# Links

To {ref}`gallery-top`, [](plot_gallery.py#gallery-top), [elsewhere](sub/plot_gallery.md#gallery-top) and
{cite}`Friedman1956`, whose list is at the end.
"""

# A book's references page (QuantEcon's zreferences.md): it cites nothing, its list is the book's.
REFERENCES_PAGE = MYST_FRONT_MATTER + """
(references)=
# References

```{bibliography} refs.bib
```
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    project = tmp_path_factory.mktemp("bibliography-here")
    (project / "pyproject.toml").write_text('[tool.site_builder]\nbibliography = ["refs.bib"]\n')
    (project / "refs.bib").write_text(BIB)
    demos = project / "demos"
    demos.mkdir()
    (demos / "lecture.md").write_text(LECTURE)
    (demos / "plot_gallery.py").write_text(GALLERY)
    (demos / "links.md").write_text(LINKS)
    (demos / "zreferences.md").write_text(REFERENCES_PAGE)
    build_keeping_warnings(project)
    return project / "build", (project / "warnings.txt").read_text()


def test_the_list_stands_where_the_directive_is(site: tuple[Path, str]) -> None:
    html = (site[0] / "lecture" / "index.html").read_text(encoding="utf-8")
    listed = html.index('<ol class="references">')
    assert html.index("Works cited") < listed < html.index("TEXT-AFTER-THE-LIST")
    assert html.count('class="reference"') == 2 and 'id="references-heading"' not in html  # not twice
    assert 'class="bibliography-here"' not in html
    assert 'href="#bib-Friedman1956"' in html and 'id="bib-Friedman1956"' in html  # citations lead to it


def test_rest_bibliography_directive_places_the_list_too(site: tuple[Path, str]) -> None:
    html = (site[0] / "plot_gallery" / "index.html").read_text(encoding="utf-8")
    assert html.index("Cites") < html.index('<ol class="references">') < html.index("GALLERY-TEXT-AFTER")
    assert html.count('class="reference"') == 1 and 'id="references-heading"' not in html


def test_a_page_without_the_directive_lists_its_works_at_the_end(site: tuple[Path, str]) -> None:
    html = (site[0] / "links" / "index.html").read_text(encoding="utf-8")
    assert 'id="references-heading"' in html and html.count('class="reference"') == 1


def test_a_label_above_a_docstring_title_names_the_page(site: tuple[Path, str]) -> None:
    target = (site[0] / "plot_gallery" / "index.html").read_text(encoding="utf-8")
    assert 'id="label-gallery-top"' in target
    assert ">Summary of the gallery." in target  # the label adds no text; the summary is still its first paragraph
    html = (site[0] / "links" / "index.html").read_text(encoding="utf-8")
    link = '<a class="xref xref-entry" href="../plot_gallery/index.html#label-gallery-top"'
    assert link in html and html.count('plot_gallery/index.html#label-gallery-top') == 2
    assert ">Gallery title</a>" in html  # {ref} and an empty link show the page's title
    assert "label gallery-top" not in site[1] and "(gallery-top)" not in site[1]


def test_a_link_to_a_document_the_site_lacks_reads_as_text_and_warns(site: tuple[Path, str]) -> None:
    html = (site[0] / "links" / "index.html").read_text(encoding="utf-8")
    assert 'href="sub/plot_gallery.md' not in html
    assert '<span class="unresolved" title="Unresolved cross-reference">elsewhere</span>' in html
    assert "no document 'sub/plot_gallery.md' in the site" in site[1]


def test_a_bibliography_on_a_page_citing_nothing_lists_every_work_the_site_cites(site: tuple[Path, str]) -> None:
    html = (site[0] / "zreferences" / "index.html").read_text(encoding="utf-8")
    listed = html[html.index('<ol class="references">'):]
    assert "Friedman, M. (1956)" in listed and "Hall, R. E. (1978)" in listed
    assert 'id="references-heading"' not in html
