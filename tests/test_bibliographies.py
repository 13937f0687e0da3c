"""Bibliographies and citation styles on their own: BibTeX's LaTeX as Unicode, CSL-JSON's links,
numbered styles numbering works in page order, a project's .csl file, the settings' checks.

The bibliography is test_references' own fixture.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from conftest import write_demo
from site_builder.commands.build import BuildOptions, build
from site_builder.config import load_config
from site_builder.site.references.bibtex import latex_text, read_bibtex, read_csl_json
from test_references import BIB



def test_latex_in_bibtex_fields_becomes_unicode() -> None:
    assert latex_text(r"G{\"o}del \& Erd\H{o}s -- {Braces} \v{C}ech") == "Gödel & Erdős – Braces Čech"


def test_csl_json_keeps_only_safe_links_and_names_lines() -> None:
    text = json.dumps([{"id": "a", "title": "x", "URL": "javascript:alert(1)", "DOI": "https://doi.org/10.1000/x"},
                       {"title": "no id"}], indent=1)
    reading = read_csl_json(text, "refs.json")
    assert reading.items[0].get("URL") is None and reading.items[0]["DOI"] == "10.1000/x"
    assert reading.problems == ['refs.json:8: item 2 has no usable "id": left out']
    assert read_csl_json("[{,", "bad.json").problems[0].startswith("bad.json:1: not read as CSL-JSON")


def test_numbered_styles_number_works_in_page_order(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.site_builder]\nbibliography = ["refs.bib"]\ncitation_style = "ieee"\n')
    (tmp_path / "refs.bib").write_text(BIB)
    write_demo(tmp_path, "one", '''\
        """one.py — numbered.

        Purpose
        -------
        First [@Goedel1931], then {cite:p}`Friedman1956`, and {cite:t}`Goedel1931`.
        """
        # %% B-a
        print("[B-a] ok")
        ''')
    assert build(load_config(tmp_path), BuildOptions()).ok
    page = (tmp_path / "build" / "one" / "index.html").read_text()
    first = '<a class="citation-link" href="#bib-Goedel1931" rel="noopener noreferrer">[1]</a>'
    assert first in page and '#bib-Friedman1956" rel="noopener noreferrer">[2]</a>' in page  # in page order
    assert ">Gödel and von Neumann [1]</a>" in page
    end = page[page.index('<ol class="references">'):]
    assert end.index('<span class="reference-label">[1]</span> K. Gödel') < end.index("[2]</span> M. Friedman")


def test_a_project_csl_file_styles_citations(tmp_path: Path) -> None:
    csl = """<?xml version="1.0" encoding="utf-8"?>
<style xmlns="http://purl.org/net/xbiblio/csl" class="in-text" version="1.0">
  <info><title>Our own</title><id>our-own</id><category citation-format="numeric"/><updated>2024-01-01T00:00:00+00:00</updated></info>
  <citation><layout prefix="&lt;" suffix="&gt;" delimiter="|"><text variable="citation-number"/></layout></citation>
  <bibliography><layout><text variable="citation-number" suffix=". "/><text variable="title"/></layout></bibliography>
</style>"""
    (tmp_path / "style.csl").write_text(csl)
    (tmp_path / "pyproject.toml").write_text('[tool.site_builder]\nbibliography = ["refs.bib"]\ncitation_style = "style.csl"\n')
    (tmp_path / "refs.bib").write_text(BIB)
    write_demo(tmp_path, "one", '"""one.py — x.\n\nPurpose\n-------\nSee [@Friedman1956; @Goedel1931].\n"""\n# %% B-a\nprint(1)\n')
    assert build(load_config(tmp_path), BuildOptions()).ok
    page = (tmp_path / "build" / "one" / "index.html").read_text()
    assert '&lt;<a class="citation-link" href="#bib-Friedman1956" rel="noopener noreferrer">1</a>|<a' in page


def test_an_unknown_style_name_is_a_usage_error(tmp_path: Path) -> None:
    from site_builder.errors import UsageError

    (tmp_path / "pyproject.toml").write_text('[tool.site_builder]\ncitation_style = "no-such-style"\n')
    with pytest.raises(UsageError, match="no CSL style named 'no-such-style'"):
        load_config(tmp_path)


def test_a_bibliography_outside_the_project_is_refused(tmp_path: Path) -> None:
    from site_builder.errors import UsageError

    (tmp_path / "pyproject.toml").write_text('[tool.site_builder]\nbibliography = ["../refs.bib"]\n')
    with pytest.raises(UsageError, match="not a path inside the project"):
        load_config(tmp_path)


def test_pybtex_reading_collects_problems_quietly(capsys: pytest.CaptureFixture[str]) -> None:
    reading = read_bibtex(BIB, "refs.bib")
    assert [i["id"] for i in reading.items] == ["Friedman1956", "Goedel1931", "evil"]
    assert capsys.readouterr().err == ""  # pybtex prints nothing of its own
    logging.getLogger(__name__).debug("%s", reading.problems)
