"""CI reports: what ``build`` and ``check`` did, as JUnit XML (``--junit FILE``).

One ``testsuite`` per command, one ``testcase`` per entry (``classname`` the demo's folder
as dots, ``demos.basics``; ``name`` the entry; ``file`` its script); a failed entry carries a
``failure`` whose message names the block and line, with the traceback (or the diff) as its
text.  An entry whose result came from its run record is a passing testcase with
``time="0"`` (this build spent nothing on it) and the properties ``cached=true`` and
``recorded_time`` (how long its recorded run took).  A build that stopped before it had
results (a write failure, a bad record under ``--frozen``) is one ``error`` testcase.
The file is written atomically through ``fs``.
"""

from __future__ import annotations

import re
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from site_builder.errors import one_line
from site_builder.fs import make_dirs, write_atomic, writing
from site_builder.run.execute import RunResult

if TYPE_CHECKING:
    from site_builder.reports.build_report import BuildReport

# XML 1.0 cannot hold most control characters, even escaped (a demo's output may print them),
# nor lone surrogates (a file name's undecodable bytes); C1 controls and noncharacters it holds
# but discourages, and stricter readers refuse.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff]")


@dataclass(frozen=True)
class Problem:
    """Why a testcase failed: the one-line message, its kind, where, and the details."""

    message: str
    type: str  # "ValueError", "Timeout", "drift"...
    block: str | None = None
    line: int | None = None  # 1-based, in ``file``
    text: str = ""  # the traceback, or the diff


@dataclass(frozen=True)
class Case:
    """One entry's outcome."""

    name: str
    file: str  # project-relative path of its script
    seconds: float
    problem: Problem | None = None
    error: bool = False  # the problem is the builder's (an ``error``), not the entry's (a ``failure``)
    skipped: str = ""  # why it did not run (e.g. --fail-fast stopped the build)
    cached: bool = False
    recorded_seconds: float | None = None
    output: str = ""  # for system-out


@dataclass
class Suite:
    """One command's report."""

    name: str  # "site_builder build", "site_builder check"
    cases: list[Case] = field(default_factory=list)
    seconds: float = 0.0
    started_at: float = field(default_factory=time.time)


def failed_block(result: RunResult) -> tuple[str | None, int | None, str, str]:
    """(block, line, error type, traceback) of the first block of ``result`` that went wrong."""
    for block in result.blocks:
        if block.error is not None:
            return block.name, block.error.line, block.error.type, block.error.traceback or block.error.message
        if block.status in ("error", "timeout", "crashed", "exited"):
            return block.name, None, block.status.capitalize(), ""
    return None, None, "Failure", ""


def classname(file: str) -> str:
    """The dotted folder of a script, ``demos/basics/plot.py`` -> ``demos.basics``."""
    folder = file.rpartition("/")[0]
    return folder.replace("/", ".") or "demos"


def to_xml(suite: Suite) -> bytes:
    """The JUnit XML of ``suite`` (a ``testsuites`` root holding one ``testsuite``)."""
    failures = sum(1 for c in suite.cases if c.problem is not None and not c.error)
    errors = sum(1 for c in suite.cases if c.error)
    skipped = sum(1 for c in suite.cases if c.skipped)
    counts = {"tests": str(len(suite.cases)), "failures": str(failures), "errors": str(errors),
              "skipped": str(skipped), "time": f"{suite.seconds:.3f}"}
    root = ET.Element("testsuites", {"name": suite.name, **counts})
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(suite.started_at))
    element = ET.SubElement(root, "testsuite", {"name": suite.name, **counts, "timestamp": stamp})
    for case in suite.cases:
        item = ET.SubElement(element, "testcase", {"classname": classname(case.file), "name": one_line(case.name),
                                                   "file": one_line(case.file), "time": f"{case.seconds:.3f}"})
        if case.problem is not None and case.problem.line:
            item.set("line", str(case.problem.line))
        if case.cached:
            properties = ET.SubElement(item, "properties")
            ET.SubElement(properties, "property", {"name": "cached", "value": "true"})
            if case.recorded_seconds is not None:
                ET.SubElement(properties, "property", {"name": "recorded_time",
                                                       "value": f"{case.recorded_seconds:.3f}"})
        if case.skipped:
            ET.SubElement(item, "skipped", {"message": one_line(case.skipped)})
        if case.problem is not None:
            problem = ET.SubElement(item, "error" if case.error else "failure",
                                    {"message": one_line(case.problem.message), "type": one_line(case.problem.type)})
            where = ", ".join(p for p in (f"block {case.problem.block}" if case.problem.block else "",
                                          f"line {case.problem.line}" if case.problem.line else "") if p)
            problem.text = f"{one_line(case.file)}{f' ({where})' if where else ''}\n{case.problem.text}".rstrip() + "\n"
        if case.output:
            ET.SubElement(item, "system-out").text = case.output
    for node in root.iter():  # one place where every attribute and text is made what XML 1.0 holds
        node.attrib = {key: _clean(value) for key, value in node.attrib.items()}
        node.text = _clean(node.text) if node.text else node.text
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def _clean(text: str) -> str:
    """``text`` without what XML 1.0 cannot hold (each such character becomes U+FFFD)."""
    return _NOT_XML.sub("\N{REPLACEMENT CHARACTER}", text)


def write_report(path: Path, suite: Suite, root: Path) -> None:
    """Write ``suite`` to ``path`` atomically (a WriteError when it cannot be written)."""
    with writing(f"writing the JUnit report {path.name}", path.parent, root):
        make_dirs(path.parent)
        write_atomic(path, to_xml(suite))


def build_cases(report: BuildReport) -> list[Case]:
    """One case per entry of a finished build (plus one per problem no entry owns, e.g. a bad file name)."""
    cases = []
    owned = set()
    for build in report.builds:
        result, name = build.result, build.entry.name
        cached = name in report.from_cache
        seconds = 0.0 if cached else result.duration
        base = dict(name=name, file=build.entry.rel_path, seconds=seconds, cached=cached,
                    recorded_seconds=result.duration if cached else None)
        if result.failure:
            owned.add(result.failure)
        if name in report.not_run:
            cases.append(Case(**base, skipped=result.failure or "not run"))
        elif result.failure:
            block, line, kind, text = failed_block(result)
            cases.append(Case(**base, problem=Problem(result.failure, kind, block, line, text)))
        else:
            cases.append(Case(**base))
    for failure in report.failures:
        if failure not in owned:  # e.g. "demos/Bad Name.py: not a valid entry name"
            where = failure.partition(": ")[0]
            cases.append(Case(name=where, file=where if where.endswith(".py") else "", seconds=0.0,
                              problem=Problem(failure, "EntryError")))
    return cases


def error_case(message: str) -> Case:
    """The one case of a command that stopped before it had results (exit status 1 or 2)."""
    return Case(name="build", file="", seconds=0.0, problem=Problem(message, "SiteBuilderError"), error=True)
