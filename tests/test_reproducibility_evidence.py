"""The page says the printed numbers reproduce exactly only on evidence: a `check` whose runs agreed.
And `check` compares the values the prose quotes, naming the page's line and expression."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import copy_of, run_cli, shared_folder, write_demo

SEEDED = '''
"""seeded.py — a seeded draw.

Purpose
-------
The draw is {eval}`draw:.6f`.
"""
import random

random.seed(1)
draw = random.random()
print(f"draw {draw:.6f}")
'''

# Seeds, then prints the time (scikit-learn's plot_grid_search_digits prints its timings).
TIMED = '''
"""timed.py — seeded, but prints the time.

Purpose
-------
It took {eval}`stamp` ns.
"""
import random
import time

random.seed(0)
stamp = time.perf_counter_ns()
print(random.random(), stamp)
'''

UNSEEDED = '''
"""plain.py — no seed."""
print(sum(range(10)))
'''


def sentence(project: Path, entry: str) -> str:
    html = (project / "build" / entry / "index.html").read_text()
    found = re.search(r'<p class="how-to-run">(.*?)<a class="download"', html, re.S)
    assert found is not None
    return " ".join(re.sub(r"<[^>]+>", "", found.group(1)).split())


def build_check_rebuild(folder: Path) -> None:
    """In ``folder/project``: a project built (sentences kept in ``before.json``), then checked (its
    output kept in ``check.txt``), then built again."""
    project = folder / "project"
    for name, source in (("seeded", SEEDED), ("timed", TIMED), ("plain", UNSEEDED)):
        write_demo(project, name, source)
    built = run_cli("build", cwd=project)
    assert built.returncode == 0, built.stderr
    (folder / "before.json").write_text(json.dumps({e: sentence(project, e) for e in ("seeded", "timed", "plain")}))
    check = run_cli("check", cwd=project)
    assert check.returncode == 1  # timed differs between runs
    (folder / "check.txt").write_text(check.stdout + check.stderr, encoding="utf-8")
    rebuilt = run_cli("build", cwd=project)
    assert rebuilt.returncode == 0, rebuilt.stderr


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], str]:
    """A project built (sentences kept), then checked (its output kept), then built again."""
    folder = shared_folder(tmp_path_factory, "reproducibility-evidence", build_check_rebuild)
    return (folder / "project", json.loads((folder / "before.json").read_text()),
            (folder / "check.txt").read_text(encoding="utf-8"))


def test_never_checked_claims_nothing_exact(checked: tuple[Path, dict[str, str], str]) -> None:
    _, before, _ = checked
    assert before["seeded"].endswith("Requires only the Python standard library, and seeds its random "
                                      "generators; not yet verified to reproduce.")
    assert "reproduce exactly" not in before["timed"]
    assert before["plain"].endswith("Requires only the Python standard library.")


def test_checked_and_agreeing_claims_exactness_with_its_evidence(checked: tuple[Path, dict[str, str], str]) -> None:
    project, _, _ = checked
    assert re.search(r"and its printed numbers reproduce exactly \(3 runs agreed when checked on "
                     r"\d{4}-\d\d-\d\d\)\.$", sentence(project, "seeded"))
    record = json.loads((project / "_freeze" / "seeded" / "_site_builder" / "record.json").read_text())
    assert record["verdict"]["agreed"] is True and record["verdict"]["runs"] == 3
    assert re.fullmatch(r"[0-9a-f]{64}", record["verdict"]["fingerprint"])
    assert sentence(project, "plain").endswith("standard library.")  # no seed: no sentence needed


def test_checked_and_differing_never_claims_and_check_names_what_differed(
        checked: tuple[Path, dict[str, str], str]) -> None:
    project, _, output = checked
    said = sentence(project, "timed")
    assert "reproduce exactly" not in said and "differ from run to run (found by check on" in said
    assert "the output of values quoted in the page differs between two runs" in output
    assert re.search(r"[-+]demos/timed\.py:5: stamp = \d+", output)  # the page's line and expression
    assert "the output of setup differs between two runs" in output


def test_code_changed_since_the_check_claims_nothing_exact(checked: tuple[Path, dict[str, str], str],
                                                            tmp_path: Path) -> None:
    project = copy_of(checked[0], tmp_path)
    demo = project / "demos" / "seeded.py"
    demo.write_text(demo.read_text().replace("random.seed(1)", "random.seed(2)"))
    result = run_cli("build", cwd=project)
    assert result.returncode == 0, result.stderr
    assert sentence(project, "seeded").endswith("and seeds its random generators; not yet verified to reproduce.")


def test_a_rerun_with_the_same_fingerprint_keeps_the_evidence_until_inputs_change(
        checked: tuple[Path, dict[str, str], str], tmp_path: Path) -> None:
    project = copy_of(checked[0], tmp_path)
    seeded = project / "demos" / "seeded.py"
    seeded.write_text(seeded.read_text().replace("The draw is", "Drawn, it is"))  # prose only: same run
    result = run_cli("build", "--force", cwd=project)  # every demo runs again, its record rewritten
    assert result.returncode == 0, result.stderr
    assert re.search(r"reproduce exactly \(3 runs agreed when checked on \d{4}-\d\d-\d\d\)\.$",
                     sentence(project, "seeded"))
    assert "differ from run to run (found by check on" in sentence(project, "timed")  # found stays found
    with open(project / "pyproject.toml", "a", encoding="utf-8") as f:
        f.write("[tool.site_builder]\ntimeout = 300\n")  # an input of the run: not the run checked
    result = run_cli("build", cwd=project)
    assert result.returncode == 0, result.stderr
    assert sentence(project, "seeded").endswith("and seeds its random generators; not yet verified to reproduce.")
    assert "differ from run to run" not in sentence(project, "timed")


def test_check_reports_a_changed_quoted_value(checked: tuple[Path, dict[str, str], str], tmp_path: Path) -> None:
    project = copy_of(checked[0], tmp_path)
    path = project / "_freeze" / "seeded" / "_site_builder" / "record.json"
    record = json.loads(path.read_text())
    record["quoted"][0]["text"] = "0.999999"  # as an earlier version of the code quoted it
    path.write_text(json.dumps(record))
    result = run_cli("check", "seeded", cwd=project)
    assert result.returncode == 1
    assert "seeded: drift in the values quoted in the page against" in result.stdout
    assert "-demos/seeded.py:5: draw:.6f = 0.999999" in result.stdout
    assert "+demos/seeded.py:5: draw:.6f = 0.134364" in result.stdout
