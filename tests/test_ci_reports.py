"""Issue 21: reports CI systems read: ``build --junit``, ``check --junit`` and GitHub annotations."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import run_cli, write_demo
from site_builder.reports.annotations import command

GOOD = '''
    """good: prints and warns (a bad gallery setting)."""
    # sphinx_gallery_thumbnail_number = x

    # %% B-print
    print("fine")
'''
BAD = '''
    """bad: its second block raises."""
    x = 1

    # %% B-boom
    raise ValueError("100% wrong,\\nsecond line")
'''
DRIFTING = '''
    """drifting: prints what the environment says (another machine's result)."""
    import os

    # %% B-value
    print("value", os.environ.get("DRIFT_VALUE"))
'''


def suite_of(path: Path) -> ET.Element:
    """The one testsuite of a JUnit file, checked against the attributes every reader expects."""
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert len(suites) == 1
    suite = suites[0]
    for attribute in ("name", "tests", "failures", "errors", "skipped", "time"):
        assert attribute in suite.attrib, attribute
    float(suite.get("time"))
    cases = suite.findall("testcase")
    assert int(suite.get("tests")) == len(cases)
    assert int(suite.get("failures")) == sum(1 for c in cases if c.find("failure") is not None)
    assert int(suite.get("errors")) == sum(1 for c in cases if c.find("error") is not None)
    assert int(suite.get("skipped")) == sum(1 for c in cases if c.find("skipped") is not None)
    for case in cases:
        assert case.get("classname") and case.get("name")
        float(case.get("time"))
        for problem in (case.find("failure"), case.find("error")):
            if problem is not None:
                assert problem.get("message") and problem.get("type")
    return suite


def cases_of(suite: ET.Element) -> dict[str, ET.Element]:
    return {case.get("name"): case for case in suite.findall("testcase")}


@pytest.fixture(scope="module")
def failing_build(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """A project with a good and a failing entry built twice with --junit (the second from the records),
    under GITHUB_ACTIONS=true."""
    project = tmp_path_factory.mktemp("junit")
    write_demo(project, "good", GOOD)
    write_demo(project, "basics/bad", BAD)
    env = {"GITHUB_ACTIONS": "true"}
    first = run_cli("build", "--junit", "reports/first.xml", cwd=project, env=env)
    second = run_cli("build", "--junit", "reports/second.xml", cwd=project, env=env)
    return {"project": project, "first": first, "second": second}


def test_a_failed_build_still_writes_its_junit_report(failing_build: dict[str, object]) -> None:
    project = failing_build["project"]
    assert failing_build["first"].returncode == 1
    suite = suite_of(project / "reports" / "first.xml")
    assert suite.get("name") == "site_builder build"
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "1", "0")
    cases = cases_of(suite)
    good, bad = cases["good"], cases["basics/bad"]
    assert good.find("failure") is None and good.get("classname") == "demos" and good.get("file") == "demos/good.py"
    assert bad.get("classname") == "demos.basics" and bad.get("file") == "demos/basics/bad.py"
    failure = bad.find("failure")
    assert failure.get("type") == "ValueError"
    assert "B-boom" in failure.get("message") and "100% wrong" in failure.get("message")
    assert "block B-boom, line 5" in failure.text and "second line" in failure.text  # the traceback
    assert bad.get("line") == "5"
    assert not list(project.glob("reports/*.tmp-*"))  # written atomically


def test_entries_from_the_records_are_marked_cached(failing_build: dict[str, object]) -> None:
    suite = suite_of(failing_build["project"] / "reports" / "second.xml")
    for case in cases_of(suite).values():
        properties = {p.get("name"): p.get("value") for p in case.iter("property")}
        assert properties["cached"] == "true"
        assert float(case.get("time")) == 0.0  # this build spent nothing on it
        assert float(properties["recorded_time"]) > 0  # what its recorded run took
    assert cases_of(suite)["basics/bad"].find("failure") is not None  # still failing


def test_github_actions_get_an_annotation_per_failure_and_warning(failing_build: dict[str, object]) -> None:
    out = failing_build["first"].stdout.splitlines()
    errors = [line for line in out if line.startswith("::error ")]
    assert len(errors) == 1
    assert errors[0].startswith("::error file=demos/basics/bad.py,line=5,title=basics/bad%3A ValueError in B-boom::")
    assert "100%25 wrong%2C" not in errors[0] and "100%25 wrong," in errors[0]  # % escaped in the message
    warnings = [line for line in out if line.startswith("::warning ")]
    assert any(line.startswith("::warning file=demos/good.py::good: ") and "sphinx_gallery_thumbnail_number" in line
               for line in warnings), out


def test_no_annotations_outside_github_actions(tmp_path: Path) -> None:
    write_demo(tmp_path, "bad", BAD)
    done = run_cli("build", cwd=tmp_path, env={"GITHUB_ACTIONS": ""})
    assert done.returncode == 1 and "::error" not in done.stdout + done.stderr


def test_a_build_that_stops_early_reports_one_error(tmp_path: Path) -> None:
    write_demo(tmp_path, "good", GOOD)
    done = run_cli("build", "--frozen", "--junit", "report.xml", cwd=tmp_path, env={"GITHUB_ACTIONS": "true"})
    assert done.returncode == 1
    suite = suite_of(tmp_path / "report.xml")
    (case,) = suite.findall("testcase")
    assert suite.get("errors") == "1" and "--frozen: no matching run record" in case.find("error").get("message")
    assert "::error::--frozen: no matching run record" in done.stdout


def test_check_junit_reports_drift_at_the_block(tmp_path: Path) -> None:
    write_demo(tmp_path, "drifting", DRIFTING)
    write_demo(tmp_path, "good", GOOD)
    assert run_cli("build", cwd=tmp_path, env={"DRIFT_VALUE": "1"}).returncode == 0
    done = run_cli("check", "--junit", "check.xml", "--runs", "1", cwd=tmp_path,
                   env={"DRIFT_VALUE": "2", "GITHUB_ACTIONS": "true"})
    assert done.returncode == 1
    suite = suite_of(tmp_path / "check.xml")
    assert suite.get("name") == "site_builder check" and suite.get("failures") == "1"
    cases = cases_of(suite)
    assert cases["good"].find("failure") is None
    failure = cases["drifting"].find("failure")
    assert failure.get("type") == "Drift" and "B-value" in failure.get("message")
    assert cases["drifting"].get("line") == "5"  # its first line of code
    assert "-value 1" in failure.text and "+value 2" in failure.text  # the diff
    assert "::error file=demos/drifting.py,line=5," in done.stdout


def test_workflow_commands_escape_their_data_and_properties() -> None:
    assert command("error", "100%\r\nnext: a, b", file="demos/a,b:c.py", line=3, title="t: x, y") == \
        "::error file=demos/a%2Cb%3Ac.py,line=3,title=t%3A x%2C y::100%25%0D%0Anext: a, b"
    assert command("warning", "plain") == "::warning::plain"
