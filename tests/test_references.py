"""A connected dictionary: citations from BibTeX and CSL-JSON in every prose syntax, cross-
references, terms and aliases, link_terms, "Referred to by", the works-cited and glossary pages.

One project (built once for the module) holds every construct; the bibliography and the
pages are our own fixtures.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from conftest import MYST_FRONT_MATTER, build_keeping_warnings, write_demo
from site_builder.commands.build import BuildOptions, build
from site_builder.config import load_config
from site_builder.site.references.terms import TermLinker, Term

BIB = r"""
@string{pup = "Princeton University Press"}
@book{Friedman1956,
  author = {Friedman, Milton},
  title = {A Theory of the {Consumption} Function},
  publisher = pup,
  year = {1956},
  url = {https://example.org/friedman},
}

@article{broken,
  author = {Someone Else
  title = {Missing brace},
  year = 2001
}

@article{Goedel1931,
  author = {G{\"o}del, Kurt and von Neumann, John},
  title = {{\"U}ber formal unentscheidbare S{\"a}tze \& more},
  journal = {Monatshefte f\"ur Mathematik},
  year = {1931},
  pages = {173--198},
  doi = {10.1007/BF01700692},
}
@misc{evil, title={<script>alert(1)</script>}, author={Doe, Jane}, year=2020,
  url={javascript:alert(1)}}
"""
CSL_JSON = [{"id": "vaswani2017", "type": "paper-conference", "title": "Attention Is All You Need",
             "author": [{"family": "Vaswani", "given": "Ashish"}, {"family": "Shazeer", "given": "Noam"},
                        {"family": "Parmar", "given": "Niki"}],
             "issued": {"date-parts": [[2017]]}, "DOI": "10.48550/arXiv.1706.03762"}]

SOFTMAX = '''\
    """softmax.py — the softmax function.

    Purpose
    -------
    Softmax turns scores into probabilities {cite:t}`Friedman1956`, as in [@Goedel1931, p. 33]
    and as @Friedman1956 says; see also [-@Goedel1931], {cite:p}`nokey` and [@evil].
    Mail a@b.com; the decorator @property is no citation.  It feeds {term}`attention`.

    Aliases
    -------
    soft max, normalised
      exponential
    """

    # %% B-compute
    print("[B-compute] ok")

    # %% [markdown]
    # ## The softmax formula
    #
    # (sec-formula)=
    # ### Definition
    #
    # Softmax is defined below; see {ref}`sec-formula` and {numref}`Equation %s <eq-soft>`:
    #
    # $$
    # \\sigma(z)_i = e^{z_i}
    # $$ (eq-soft)
    #
    # An unknown label {ref}`no-such-label`, {numref}`Figure %s <fig-none>`.
'''
ATTENTION = '''\
    """attention.py — attention weights.

    Purpose
    -------
    Attention applies the softmax to scores, a normalised exponential of them [@vaswani2017].
    Not in `softmax` code, nor in [softmax](https://example.org) links; softmaxes is another word.
    """

    # %% B-weights
    print("[B-weights] ok")

    # %% [markdown]
    # ## About softmax
    #
    # ```{glossary}
    # Logit
    # log-odds
    #   A score before the softmax, see {cite:t}`vaswani2017`.
    # ```
    #
    # See {ref}`the definition <sec-formula>` on another page, and {term}`logit`.
'''
RST = '''\
    """
    Reading reST
    ============

    This example cites :cite:t:`Goedel1931` and :cite:p:`Friedman1956,vaswani2017`, uses
    :term:`softmax` and the term :term:`Gradient`, and :cite:`missing`.
    See :ref:`sec-formula` and :numref:`Section %s <sec-formula>`.

    .. glossary::

       Gradient
          The vector of partial derivatives.
    """
    # %%
    print(1)
'''
NOTEBOOK = MYST_FRONT_MATTER.replace("---\n", "---\nbibliography:\n  - extra.bib\naliases: [scores]\n", 1)[:-4] + """---

# Scores in a notebook

Cites {cite}`extra2020` from its own bibliography, and {cite:ps}`vaswani2017`, {cite:year}`Friedman1956`.

```{code-cell} ipython3
print(2)
```
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("references")
    (project / "pyproject.toml").write_text(textwrap.dedent("""\
        [project]
        name = "refs"
        [tool.site_builder]
        bibliography = ["refs.bib", "refs.json"]
        link_terms = true
        """))
    (project / "refs.bib").write_text(BIB)
    (project / "refs.json").write_text(json.dumps(CSL_JSON, indent=1))
    (project / "demos" / "nb").mkdir(parents=True)
    (project / "demos" / "nb" / "extra.bib").write_text("@book{extra2020, title={Extra}, author={Roe, Ann}, year=2020}")
    write_demo(project, "softmax", SOFTMAX)
    write_demo(project, "attention", ATTENTION)
    write_demo(project, "rstdemo", RST)
    (project / "demos" / "nb" / "scores.md").write_text(NOTEBOOK)
    return build_keeping_warnings(project)


def _page(site: Path, name: str) -> str:
    return (site / "build" / name / "index.html").read_text()


def _warnings(site: Path) -> str:
    return (site / "warnings.txt").read_text()


# ---------------------------------------------------------------- citations


def test_myst_and_pandoc_citations_in_markdown_prose(site: Path) -> None:
    page = _page(site, "softmax")
    assert '<a class="citation-link" href="#bib-Friedman1956" rel="noopener noreferrer">Friedman (1956)</a>' in page
    assert ">Gödel &amp; von Neumann, 1931, p. 33</a>)" in page  # [@key, p. 33]: author-year with locator
    assert 'citation-yearpar"><a class="citation-link" href="#bib-Goedel1931" rel="noopener noreferrer">(1931)</a>' in page
    assert "a@b.com" in page and "@property" in page  # an e-mail and a decorator stay text


def test_rst_citations_and_notebook_front_matter_bibliography(site: Path) -> None:
    rst = _page(site, "rstdemo")
    assert ">Gödel and von Neumann (1931)</a>" in rst
    assert ">Friedman, 1956</a>; <a class=\"citation-link\" href=\"#bib-vaswani2017\"" in rst
    notebook = _page(site, "nb/scores")
    assert ">Roe (2020)</a>" in notebook  # its front matter's own bibliography; {cite} of one work: narrative
    assert ">Vaswani, Shazeer, and Parmar, 2017</a>" in notebook  # {cite:ps}: every author
    assert ">1956</a>" in notebook  # {cite:year}


def test_references_list_at_the_page_end_with_doi_and_url_links(site: Path) -> None:
    page = _page(site, "softmax")
    end = page[page.index('<section class="references-section"'):]
    assert '<li id="bib-Friedman1956" class="reference">Friedman, M. (1956). <i>A Theory of the Consumption Function</i>' in end
    assert '<a class="reference-url" href="https://example.org/friedman"' in end
    assert '<a class="reference-doi" href="https://doi.org/10.1007/BF01700692"' in end
    assert "Über formal unentscheidbare Sätze &amp; more" in end and "Monatshefte" in end  # LaTeX decoded
    assert page.index("The softmax formula") < page.index('class="references-section"')


def test_hostile_fields_are_escaped_and_bad_links_dropped(site: Path) -> None:
    page = _page(site, "softmax")
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "javascript:" not in page


def test_unknown_keys_warn_with_entry_line_and_key_and_show_unresolved(site: Path) -> None:
    warnings = _warnings(site)
    assert "softmax: demos/softmax.py:6: the citation key 'nokey' is in no bibliography" in warnings
    assert "rstdemo: demos/rstdemo.py:6: the citation key 'missing' is in no bibliography" in warnings
    assert '<span class="unresolved" title="Not in the bibliography">nokey?</span>' in _page(site, "softmax")


def test_a_malformed_bib_entry_warns_with_file_and_line_and_the_rest_works(site: Path) -> None:
    assert "refs.bib:11: the BibTeX entry broken is malformed" in _warnings(site)
    assert 'id="bib-Goedel1931"' in _page(site, "softmax")  # the entry after it still reads


def test_the_works_cited_page_lists_each_work_with_the_entries_citing_it(site: Path) -> None:
    page = (site / "build" / "references" / "index.html").read_text()
    friedman = page[page.index('id="work-Friedman1956"'):]
    friedman = friedman[:friedman.index("</li>")]
    assert all(f'href="../{name}/index.html"' in friedman for name in ("softmax", "rstdemo", "nb/scores"))
    assert "data-pagefind-body" in page  # works are searchable


# ---------------------------------------------------------------- cross-references


def test_cross_references_within_and_between_pages(site: Path) -> None:
    softmax = _page(site, "softmax")
    assert '<a class="xref xref-internal" href="#sec-formula" rel="noopener noreferrer">Definition</a>' in softmax
    assert '<a class="xref xref-internal" href="#eq-soft" rel="noopener noreferrer">Equation 1</a>' in softmax
    assert 'id="sec-formula"' in softmax and 'id="eq-soft"' in softmax
    attention = _page(site, "attention")
    assert ('<a class="xref xref-entry" href="../softmax/index.html#sec-formula" rel="noopener noreferrer">'
            "the definition</a>") in attention
    rst = _page(site, "rstdemo")
    assert 'href="../softmax/index.html#sec-formula" rel="noopener noreferrer">Definition</a>' in rst


def test_an_unresolved_cross_reference_warns_and_reads_as_text(site: Path) -> None:
    assert "softmax: demos/softmax.py:30: {ref}`no-such-label`: no label 'no-such-label' in the site" in _warnings(site)
    page = _page(site, "softmax")
    assert '<span class="unresolved" title="Unresolved cross-reference">no-such-label</span>' in page
    assert '<span class="unresolved" title="Unresolved cross-reference">fig-none</span>' in page
    assert "{ref}" not in page.split("</details>")[-1]


# ---------------------------------------------------------------- terms


def test_terms_resolve_to_entries_aliases_and_glossaries(site: Path) -> None:
    softmax = _page(site, "softmax")
    assert '<a class="term" href="../attention/index.html" rel="noopener noreferrer">attention</a>' in softmax
    rst = _page(site, "rstdemo")
    assert '<a class="term" href="../softmax/index.html" rel="noopener noreferrer">softmax</a>' in rst
    assert '<a class="term" href="#term-gradient" rel="noopener noreferrer">Gradient</a>' in rst
    assert '<dt id="term-gradient">Gradient</dt>' in rst
    attention = _page(site, "attention")
    assert '<dt id="term-logit">Logit</dt>' in attention
    assert '<a class="term" href="#term-logit" rel="noopener noreferrer">logit</a>' in attention


def test_link_terms_links_the_first_mention_only_as_a_whole_word_outside_code_headings_links(site: Path) -> None:
    page = _page(site, "attention")
    purpose = page[page.index('class="purpose"'):page.index('class="how-to-run"')]
    assert purpose.count('href="../softmax/index.html"') == 1  # once: its alias "normalised exponential" not again
    assert '<a class="term" href="../nb/scores/index.html" rel="noopener noreferrer">scores</a>' in purpose  # an alias
    assert '<a class="term" href="../softmax/index.html" rel="noopener noreferrer">softmax</a> to <a' in purpose
    assert "<code>softmax</code>" in purpose and ">softmax</a> links" in purpose
    assert "softmaxes" in purpose and 'rel="noopener noreferrer">softmaxes' not in purpose
    assert "<h2" in page and ">About softmax</h2>" in page  # headings are left alone


def test_link_terms_never_links_a_page_to_itself() -> None:
    terms = {"softmax": Term("softmax", "softmax"), "attention": Term("attention", "attention")}
    linker = TermLinker(terms, "softmax", lambda t, s: f'<a href="{t.entry}">{s}</a>')
    html = linker("<p>softmax and Attention and attention</p><h2>softmax</h2><pre>attention</pre>")
    assert html == '<p>softmax and <a href="attention">Attention</a> and attention</p><h2>softmax</h2><pre>attention</pre>'


def test_referred_to_by_lists_the_entries_citing_linking_or_mentioning(site: Path) -> None:
    page = _page(site, "softmax")
    end = page[page.index('<section class="referred-by"'):]
    end = end[:end.index("</section>")]
    assert 'href="../attention/index.html">attention</a>' in end  # a {ref} and a mention
    assert 'href="../rstdemo/index.html">Reading reST</a>' in end  # a :term:
    assert "nb/scores" not in end


def test_the_glossary_page_lists_terms_aliases_and_definitions(site: Path) -> None:
    page = (site / "build" / "glossary" / "index.html").read_text()
    assert 'href="../attention/index.html#term-logit">Logit</a> <span class="aliases">(also log-odds)</span>' in page
    assert "soft max, normalised exponential" in page
    assert "A score before the softmax, see vaswani2017." in page


# ---------------------------------------------------------------- incremental rebuilds


def test_rebuilds_render_exactly_the_pages_a_change_shows_and_run_no_demo(
        tmp_path: Path, rendered_pages: list[str]) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.site_builder]\nbibliography = ["refs.bib"]\nlink_terms = true\n')
    (tmp_path / "refs.bib").write_text(BIB)
    write_demo(tmp_path, "cites", '"""cites.py — cites.\n\nPurpose\n-------\nSee [@Friedman1956].\n"""\n# %% B-a\nprint(1)\n')
    write_demo(tmp_path, "labels", '"""labels.py — labels.\n\nPurpose\n-------\nText.\n"""\n# %% B-a\nprint(1)\n'
               '\n# %% [markdown]\n# (sec-one)=\n# ## First title\n')
    write_demo(tmp_path, "refers", '"""refers.py — refers.\n\nPurpose\n-------\nSee {ref}`sec-one`.\n"""\n# %% B-a\nprint(1)\n')
    write_demo(tmp_path, "mentions", '"""mentions.py — mentions.\n\nPurpose\n-------\nA smooth max here.\n"""\n'
               '# %% B-a\nprint(1)\n')
    write_demo(tmp_path, "plain", '"""plain.py — nothing.\n\nPurpose\n-------\nNothing at all.\n"""\n# %% B-a\nprint(1)\n')
    config = load_config(tmp_path)
    assert build(config, BuildOptions()).ok

    def rebuilt(edited: str = "") -> list[str]:
        rendered_pages.clear()
        report = build(config, BuildOptions())
        assert report.ok
        assert report.from_cache >= {"cites", "labels", "refers", "mentions", "plain"} - {edited}  # no demo ran
        return sorted(p for p in rendered_pages if "/" not in p and not p.endswith(".html") and p != "sitemap.xml")

    bib = (tmp_path / "refs.bib").read_text()
    (tmp_path / "refs.bib").write_text(bib.replace("Consumption", "Saving"))  # a cited work's title
    assert rebuilt() == ["cites"]
    page = (tmp_path / "build" / "cites" / "index.html").read_text()
    assert "Saving Function" in page
    (tmp_path / "refs.bib").write_text(bib.replace("Consumption", "Saving").replace("2020", "2021"))  # uncited
    assert rebuilt() == []
    labels = tmp_path / "demos" / "labels.py"
    labels.write_text(labels.read_text().replace("First title", "Second title"))  # a label's text
    assert rebuilt("labels") == ["labels", "refers"]
    assert ">Second title</a>" in (tmp_path / "build" / "refers" / "index.html").read_text()
    plain = tmp_path / "demos" / "plain.py"
    plain.write_text(plain.read_text().replace('"""\n#', 'Aliases\n-------\nsmooth max\n"""\n#', 1))  # an alias
    assert rebuilt("plain") == ["mentions", "plain"]
    assert 'href="../plain/index.html"' in (tmp_path / "build" / "mentions" / "index.html").read_text()
