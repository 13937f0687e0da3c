"""What ``check`` found, kept in the record it checked: the evidence for "reproduces exactly".

``verdict_of`` sums up one entry's check (its runs, whether every printed line, value and
quoted expression agreed, the fingerprint of the record's inputs and environment it applies
to); ``keep_verdict`` writes it into the record's ``record.json``. A record made by a later run
keeps it only when its fingerprint is the one the verdict applies to (``carried_verdict``: a
``build --force``, a builder that records differently); new code, inputs or environment drop
it, and the page then claims nothing it has no evidence for.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from pathlib import Path

from site_builder.fs import UnsafeFileError, UnsafePathError, open_regular, write_atomic
from site_builder.json_text import fields, indented_file
from site_builder.run.records.drift import Comparison
from site_builder.run.records.inputs import RunInputs
from site_builder.run.records.record_json import RECORD_FILE
from site_builder.run.records.schema import SchemaError, parse_record
from site_builder.run.results import Verdict


def fingerprint(inputs: RunInputs, environment: dict[str, str]) -> str:
    """The sha256 of a record's inputs (code, Python, packages, options, files read) and environment;
    the script's whole text only when the run shows it (``exact``): a prose edit changes no run."""
    data = {"inputs": {**fields(inputs), **({} if inputs.exact else {"source": ""})},
            "environment": environment}
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass")
                          ).hexdigest()


def verdict_of(inputs: RunInputs, environment: dict[str, str], against_record: Comparison,
               between_runs: Sequence[Comparison], runs: int, same_environment: bool) -> Verdict:
    """The verdict of one entry's check: ``runs`` runs of check, plus the record's own when it ran
    in the same environment; agreed when nothing differed."""
    differed = [d.block for d in against_record.drifts] if same_environment else []
    differed += [d.block for c in between_runs for d in c.drifts]
    counted = runs + (1 if same_environment else 0)
    return Verdict(counted, time.strftime("%Y-%m-%d", time.gmtime()), fingerprint(inputs, environment),
                   not differed and counted >= 2, tuple(dict.fromkeys(differed)))


def carried_verdict(folder: Path, inputs: RunInputs, environment: dict[str, str]) -> Verdict | None:
    """The verdict of the record in ``folder`` when a new run of ``inputs`` in ``environment`` has the
    fingerprint it applies to, else None (no record, none checked, or not readable: no evidence)."""
    try:
        with open_regular(folder, RECORD_FILE) as f:
            found = parse_record(f.read()).get("verdict")
    except (OSError, UnsafeFileError, UnsafePathError, SchemaError, ValueError):
        return None
    if not isinstance(found, dict) or found.get("fingerprint") != fingerprint(inputs, environment):
        return None
    return Verdict(**{**found, "differed": tuple(found["differed"])})


def keep_verdict(folder: Path, verdict: Verdict) -> None:
    """Write ``verdict`` into the record in ``folder`` (its other fields as they are)."""
    with open_regular(folder, RECORD_FILE) as f:
        data = parse_record(f.read())
    data["verdict"] = {**fields(verdict), "differed": list(verdict.differed)}
    write_atomic(folder / RECORD_FILE, indented_file(data))
