"""A run record's ``record.json``: its JSON layout, made from a ``RunResult`` and read back.

``save_record`` hashes the files the run wrote and writes the record beside them;
``from_record`` turns a record (shape checked by ``record_schema``) back into the result and
its inputs, ``check_files`` that every file it names is still the one recorded.  ``records``
reads records through these and keeps them in ``_freeze/``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from pathlib import Path
from typing import Any

from site_builder.json_text import fields, indented_file
from site_builder.fs import UnsafeFileError, UnsafePathError, make_dirs, sha256_regular, write_new
from site_builder.run.execute import (
    BUILDER_DIR,
    Artifact,
    BlockError,
    BlockResult,
    Display,
    OutputChunk,
    RunResult,
)
from site_builder.run.child.protocol import Outcome
from site_builder.run.results import GluedValue, QuotedValue, Verdict
from site_builder.run.name_refs import name_refs
from site_builder.run.records.inputs import RunInputs

log = logging.getLogger(__name__)

# 2: "value"; 3: values and display() outputs are MIME bundles; 4: "names"; 5: "quoted", "glued";
# bump when the layout changes
RECORD_FORMAT = 5
RECORD_FILE = f"{BUILDER_DIR}/record.json"


class RecordError(Exception):
    """A record that cannot be read, does not have the declared shape, or whose files changed."""


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def hashed_files(result: RunResult) -> tuple[RunResult, dict[str, str]]:
    """``result`` without the files that are no regular file of its folder any more, and the
    sha256 of those kept.  A file the demo wrote, then removed or replaced by a link, is
    dropped with a warning: a record hashes every file it names."""
    folder = result.files_dir
    shas: dict[str, str] = {}
    blocks = []
    for b in result.blocks:
        kept = []
        for art in b.artifacts:
            try:
                shas[art.path] = sha256_regular(folder, art.path)
                kept.append(art)
            except (UnsafeFileError, UnsafePathError) as exc:
                why = exc.reason if isinstance(exc, UnsafeFileError) else "its path leaves the entry's folder"
                log.warning("%s: the file %s the demo wrote is not published: %s", result.entry, art.path, why)
        full = b.full_output
        if full is not None:
            try:
                shas[full] = sha256_regular(folder, full)
            except (UnsafeFileError, UnsafePathError):
                full = None  # the head and tail are still shown; only the link to all of it goes
        blocks.append(dataclasses.replace(b, artifacts=tuple(kept), full_output=full,
                                          omitted_at=b.omitted_at if full else None))
    return dataclasses.replace(result, blocks=tuple(blocks)), shas


def to_record(result: RunResult, inputs: RunInputs, shas: dict[str, str]) -> dict[str, Any]:
    """The JSON-ready record of ``result``, whose files have the sha256s ``shas`` (hashed_files)."""
    blocks = []
    for b in result.blocks:
        blocks.append({
            "name": b.name,
            "status": b.status,
            "duration": b.duration,
            "output": [{"stream": "display", **_display_record(c.display)} if c.display is not None
                       else {"stream": c.stream, "lines": _lines(c.text)} for c in b.output],
            "omitted_lines": b.omitted_lines,
            "omitted_bytes": b.omitted_bytes,
            "omitted_at": b.omitted_at,
            "full_output": b.full_output,
            "full_output_sha256": shas[b.full_output] if b.full_output else None,
            "error": None if b.error is None else {
                "type": b.error.type,
                "message": b.error.message,
                "line": b.error.line,
                "traceback": _lines(b.error.traceback),
            },
            "artifacts": [{**fields(a), "sha256": shas[a.path]} for a in b.artifacts],
            "value": None if b.value is None else _display_record(b.value),
            "names": [{**fields(n), "names": list(n.names)} for n in b.names],
        })
    return {
        "format": RECORD_FORMAT,
        "entry": result.entry,
        "failure": result.failure,
        "duration": result.duration,
        "started_at": result.started_at,
        "environment": dict(result.environment),
        "reads": list(result.reads),
        "inputs": fields(inputs),
        "blocks": blocks,
        "quoted": [fields(q) for q in result.quoted],
        "glued": [{"name": g.name, "block": g.block, **_display_record(g.display)} for g in result.glued],
        "verdict": None if result.verdict is None else {**fields(result.verdict),
                                                         "differed": list(result.verdict.differed)},
    }


def _display_record(display: Display) -> dict[str, Any]:
    return {"data": {mime: _lines(text) for mime, text in display.data.items()},
            "files": dict(display.files), "omitted": dict(display.omitted)}


def from_record(data: dict[str, Any], folder: Path) -> tuple[RunResult, RunInputs]:
    """Rebuild the RunResult (files in ``folder``) and its inputs from a record checked by
    ``parse_record``; raise RecordError when malformed."""
    if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
        raise RecordError(f"not a record of format {RECORD_FORMAT}")
    try:
        blocks = tuple(_block(b) for b in data["blocks"])
        result = RunResult(
            entry=str(data["entry"]),
            blocks=blocks,
            failure=data["failure"],
            duration=float(data["duration"]),
            started_at=float(data["started_at"]),
            files_dir=folder,
            environment={str(k): str(v) for k, v in data["environment"].items()},
            reads=tuple(str(r) for r in data["reads"]),
            quoted=tuple(QuotedValue(**q) for q in data["quoted"]),
            glued=_glued(data["glued"], data["blocks"]),
            verdict=None if data["verdict"] is None else Verdict(**{**data["verdict"],
                                                                   "differed": tuple(data["verdict"]["differed"])}),
        )
        inputs = RunInputs(**data["inputs"])
        for name, kind in (("code", str), ("source", str), ("python", str), ("packages", dict),
                           ("options", dict), ("reads", dict)):
            if not isinstance(getattr(inputs, name), kind):
                raise TypeError(f"inputs.{name} is not a {kind.__name__}")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise RecordError(f"malformed record ({type(exc).__name__}: {exc})") from None
    return result, inputs


def _block(raw: dict[str, Any]) -> BlockResult:
    error = raw["error"]
    # A display names only files of its own block, of kind "display".
    own = {a["path"] for a in raw["artifacts"] if a["kind"] == "display"}
    output = []
    for c in raw["output"]:
        if c["stream"] == "display":
            display = _display(c, own)
            output.append(OutputChunk("display", display.text, display))
        else:
            output.append(OutputChunk(c["stream"], "".join(c["lines"])))
    return BlockResult(
        name=raw["name"],
        status=Outcome(raw["status"]),
        duration=float(raw["duration"]),
        output=tuple(output),
        omitted_lines=int(raw["omitted_lines"]),
        omitted_bytes=int(raw["omitted_bytes"]),
        full_output=raw["full_output"],
        omitted_at=raw["omitted_at"],
        error=None if error is None else BlockError(
            error["type"], error["message"], error["line"], "".join(error["traceback"])
        ),
        artifacts=tuple(
            Artifact(**{k: v for k, v in a.items() if k != "sha256"}) for a in raw["artifacts"]
        ),
        value=None if raw["value"] is None else _display(raw["value"], own),
        names=name_refs(raw["names"]),
    )


def _glued(raw: list[dict[str, Any]], blocks: list[dict[str, Any]]) -> tuple[GluedValue, ...]:
    # a glued figure's file is a display file of the block that glued it
    own = {b["name"]: {a["path"] for a in b["artifacts"] if a["kind"] == "display"} for b in blocks}
    return tuple(GluedValue(g["name"], g["block"], _display(g, own.get(g["block"], set()))) for g in raw)


def _display(raw: dict[str, Any], own: set[str]) -> Display:
    return Display(data={mime: "".join(lines) for mime, lines in raw["data"].items()},
                   files={mime: path for mime, path in raw["files"].items() if path in own},
                   omitted={mime: int(size) for mime, size in raw["omitted"].items()})



def check_files(data: dict[str, Any], folder: Path) -> None:
    """Raise RecordError unless every file the record names is a regular file of ``folder``
    (reached without following a link) with the recorded sha256."""
    expected: dict[str, tuple[str, str]] = {}
    for i, block in enumerate(data["blocks"]):
        if block["full_output"] is not None:
            field = f"blocks[{i}].full_output_sha256"
            if block["full_output_sha256"] is None:
                raise RecordError(f"field {field}: {block['full_output']} is not hashed")
            expected[block["full_output"]] = (block["full_output_sha256"], field)
        for k, art in enumerate(block["artifacts"]):
            expected[art["path"]] = (art["sha256"], f"blocks[{i}].artifacts[{k}].path")
    for rel, (sha, field) in expected.items():
        try:
            now = sha256_regular(folder, rel)
        except UnsafeFileError as exc:
            raise RecordError(f"field {field}: {rel} is refused: {exc.reason}") from None
        except UnsafePathError:
            raise RecordError(f"field {field}: {rel} leaves the record folder") from None
        if now != sha:
            raise RecordError(f"field {field}: {rel} changed since it was recorded (sha256 differs)")


def save_record(folder: Path, result: RunResult, inputs: RunInputs) -> RunResult:
    """Write ``folder/_site_builder/record.json`` for ``result`` (whose files are in ``folder``);
    return the result as recorded (without files that could not be hashed)."""
    result, shas = hashed_files(dataclasses.replace(result, files_dir=folder))
    data = to_record(result, inputs, shas)
    raw = indented_file(data)
    # The builder's folder is its own (run_demo put it there); still, never write through a link.
    make_dirs(folder / BUILDER_DIR)
    write_new(folder / RECORD_FILE, raw)
    return result


def record_digest(raw: bytes) -> str:
    """The sha256 of a record.json's bytes: what a trusted record is known by."""
    return hashlib.sha256(raw).hexdigest()
