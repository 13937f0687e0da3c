"""End to end: the real attention demo built into the published page, checked against the reference."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.page_reader import PageParts, parts, text as page_text

# Our own reference facts (blocks, printed lines, the code printing them): inside the repository.
FACTS = json.loads((Path(__file__).with_name("attention_facts.json")).read_text(encoding="utf-8"))
SECTIONS = FACTS["blocks"]


@pytest.fixture(scope="module")
def page(built_site: Path) -> str:
    return (built_site / "attention" / "index.html").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def cells(page: str) -> PageParts:
    """The attention page's cells in order, with each one's code and printed text."""
    return parts(page)


def test_all_nine_sections_in_order(cells: PageParts) -> None:
    assert cells.cells == SECTIONS


def test_printed_lines_match_the_reference(cells: PageParts) -> None:
    for name, lines in FACTS["printed"].items():
        assert cells.output[name].strip().split("\n")[:len(lines)] == lines, name
    for name, patterns in FACTS["printed_patterns"].items():
        printed = cells.output[name].strip().split("\n")
        assert len(printed) >= len(patterns), name
        for pattern, line in zip(patterns, printed):
            assert re.fullmatch(pattern, line), (name, line)
    assert set(FACTS["printed"]) | set(FACTS["printed_patterns"]) == set(cells.output)  # nothing else prints


def test_code_cells_reproduce_the_whole_script(cells: PageParts) -> None:
    script = (REPO / "demos" / "attention.py").read_text(encoding="utf-8")
    rebuilt = []
    for name in SECTIONS:
        if name != "setup":
            rebuilt.append(f"# %% {name}")
        rebuilt.append(cells.code[name].rstrip("\n"))
        rebuilt.append("")
    assert "\n".join(rebuilt).rstrip("\n") == script.rstrip("\n")


def test_page_carries_the_reference_texts(page: str) -> None:
    text = re.sub(r"\s+", " ", page_text(page))
    for expected in [
        "Dictionary of Applied Machine Learning · attention",
        "attention — Python demo",
        "Illustrate attention as a learned associative memory.",
        "Requires NumPy and Matplotlib only",
        "Download attention.py",
        "The script, block by block",
        "One cell per block of the script: the code, and what that code printed when it last ran here",
        "the excerpted sentences of the Universal Declaration of Human Rights, stored verbatim so the demo needs no network",
        "4000 full-corpus iterations; the loss falls well below its starting value",
    ]:
        assert expected in text, expected


def test_download_and_files_beside_the_page(built_site: Path, page: str) -> None:
    folder = built_site / "attention"
    assert (folder / "attention.py").read_bytes() == (REPO / "demos" / "attention.py").read_bytes()
    assert 'href="attention.py"' in page
    for name in ["attention_loss.csv", "attention_weights.csv", "attention.png"]:
        assert (folder / name).is_file(), name
        assert f'"{name}"' in page, name  # linked (or shown) from the page
    assert (folder / "attention_loss.csv").read_text().startswith("iter,loss\n")


def test_index_lists_the_entry_with_its_summary(built_site: Path) -> None:
    index = (built_site / "index.html").read_text(encoding="utf-8")
    assert 'href="attention/index.html"' in index
    assert "train a single self-attention layer" in index


def test_no_machine_path_in_the_site(built_site: Path) -> None:
    for path in built_site.rglob("*"):
        if path.is_file() and path.suffix in {".html", ".csv", ".txt", ".json", ".py", ".ipynb", ".xml", ".js"}:
            text = path.read_text(encoding="utf-8", errors="replace")
            assert str(built_site.parent) not in text, path
            assert "/Users/" not in text and "/root/" not in text and "/tmp/" not in text, path


def test_code_carries_the_reference_checks(cells: PageParts) -> None:
    for name, lines in FACTS["code"].items():
        shown = cells.code[name].splitlines()
        for line in lines:
            assert line in shown, (name, line)


def test_every_relative_link_resolves(built_site: Path) -> None:
    pages = list(built_site.rglob("*.html"))
    assert len(pages) >= 3
    for page_path in pages:
        for link in parts(page_path.read_text(encoding="utf-8")).urls:
            assert not re.match(r"^(?:[a-z]+:)?//", link), (page_path, link)  # nothing from another host
            assert not link.startswith("/"), (page_path, link)  # relative, so any sub-path or disk works
            target = link.split("#", 1)[0].split("?", 1)[0]
            if not target or link.startswith(("mailto:", "data:")):
                continue
            resolved = (page_path.parent / target).resolve()
            if target.endswith("/"):
                resolved = resolved / "index.html"
            assert resolved.is_file(), (page_path.relative_to(built_site), link)
