"""The declared shape of ``record.json``: a JSON Schema, checked with fastjsonschema.

A record is data (committed, or from a shard's artifact), never trusted: every field's
type, every number's range and every path's form is checked before anything is read.
fastjsonschema compiles the schema into plain Python once per build (jsonschema or pydantic
take 120-300 ms to import: a rebuild of 100 entries from their records has a 1 s budget).
A record is checked first with a validator that only says whether it passes: compiled without
fastjsonschema's detailed errors, whose messages repeat each part of the schema where it can
fail (226 KB of Python), it takes about 19 ms of CPU against 47 ms; a record that fails it is
checked again by the detailed one, for the message.
"""

from __future__ import annotations

import json
import math
from typing import Any, Callable

# A path relative to the record folder: no leading '/', no '.' or '..' part, no empty part,
# no backslash or NUL.  safe_join checks it again where it is used.
_REL_PATH = r"^(?!/)(?!.*(^|/)\.{1,2}(/|$))(?!.*//)[^\\\x00]+$"
_SHA256 = r"^[0-9a-f]{64}$"

_STRING = {"type": "string"}
_COUNT = {"type": "integer", "minimum": 0}
_SECONDS = {"type": "number", "minimum": 0, "maximum": 1e9}
_LINES = {"type": "array", "items": _STRING}
_STRING_MAP = {"type": "object", "additionalProperties": _STRING}


def _record(props: dict[str, Any]) -> dict[str, Any]:
    """An object with exactly these keys, all required."""
    return {"type": "object", "properties": props, "required": sorted(props), "additionalProperties": False}


_ARTIFACT = _record({
    "path": {"type": "string", "pattern": _REL_PATH},
    "kind": {"enum": ["figure", "image", "file", "display", "animation"]},
    "size": _COUNT,
    "alt": _STRING,
    "width": {"type": ["integer", "null"], "minimum": 0},
    "height": {"type": ["integer", "null"], "minimum": 0},
    "sha256": {"type": "string", "pattern": _SHA256},
})

_MIME = r"^[a-z0-9][a-z0-9.+-]*/[a-z0-9][a-z0-9.+-]*$"
_BUNDLE = {  # a Display: see site_builder.run.execute.Display
    "data": {"type": "object", "propertyNames": {"pattern": _MIME}, "additionalProperties": _LINES},
    "files": {"type": "object", "propertyNames": {"pattern": _MIME},
              "additionalProperties": {"type": "string", "pattern": _REL_PATH}},
    "omitted": {"type": "object", "propertyNames": {"pattern": _MIME}, "additionalProperties": _COUNT},
}

_BLOCK = _record({
    "name": _STRING,
    "status": {"enum": ["ok", "error", "expected-error", "not-run", "timeout", "crashed", "exited"]},
    "duration": _SECONDS,
    "output": {"type": "array", "items": {"oneOf": [
        _record({"stream": {"enum": ["stdout", "stderr"]}, "lines": _LINES}),
        _record({"stream": {"const": "display"}, **_BUNDLE}),
    ]}},
    "omitted_lines": _COUNT,
    "omitted_bytes": _COUNT,
    "omitted_at": {"type": ["integer", "null"], "minimum": 0},
    "full_output": {"type": ["string", "null"], "pattern": _REL_PATH},
    "full_output_sha256": {"type": ["string", "null"], "pattern": _SHA256},
    "error": {"oneOf": [{"type": "null"}, _record({
        "type": _STRING,
        "message": _STRING,
        "line": {"type": ["integer", "null"], "minimum": 1},
        "traceback": _LINES,
    })]},
    "artifacts": {"type": "array", "items": _ARTIFACT},
    "value": {"oneOf": [{"type": "null"}, _record(_BUNDLE)]},
    # what each name of the block's code denoted when it ran (run/api_names.py)
    "names": {"type": "array", "maxItems": 1500, "items": _record({
        "line": {"type": "integer", "minimum": 1},
        "col": _COUNT,
        "end_col": _COUNT,
        "names": {"type": "array", "minItems": 1, "maxItems": 6,
                  "items": {"type": "string", "minLength": 1, "maxLength": 300}},
        "explicit": {"type": "integer", "minimum": 0, "maximum": 6},
    })},
})

_QUOTED = _record({  # a QuotedValue: see site_builder.run.results
    "written": _STRING,
    "code": _STRING,
    "spec": _STRING,
    "after": {"type": ["integer", "null"], "minimum": -1},
    "line": _COUNT,
    "place": _STRING,
    "export": _STRING,
    "text": _STRING,
    "kind": {"enum": ["text", "markdown", "latex", "image"]},
    "type": _STRING,
    "error": _STRING,
    "block": _STRING,
    "evaluated": {"type": "boolean"},
    "files": _BUNDLE["files"],  # optional: records made before {eval} showed images have none
})
_QUOTED["required"].remove("files")

RECORD_SCHEMA: dict[str, Any] = _record({
    "format": {"const": 5},
    "entry": _STRING,
    "failure": {"type": ["string", "null"]},
    "duration": _SECONDS,
    "started_at": {"type": "number", "minimum": 0, "maximum": 1e11},
    "environment": _STRING_MAP,
    "reads": {"type": "array", "items": {"type": "string", "pattern": _REL_PATH}},
    "inputs": _record({
        "execution": {"type": "integer"},
        "code": _STRING,
        "source": _STRING,
        "exact": {"type": "boolean"},
        "python": _STRING,
        "packages": _STRING_MAP,
        "options": {"type": "object", "additionalProperties": {"type": "number"}},
        "reads": {"type": "object", "propertyNames": {"pattern": _REL_PATH}, "additionalProperties": _STRING},
    }),
    "blocks": {"type": "array", "items": _BLOCK},
    "quoted": {"type": "array", "items": _QUOTED},
    "glued": {"type": "array", "items": _record({"name": _STRING, "block": _STRING, **_BUNDLE})},
    "verdict": {"oneOf": [{"type": "null"}, _record({  # a Verdict: see site_builder.run.results
        "runs": _COUNT,
        "date": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"},
        "fingerprint": {"type": "string", "pattern": _SHA256},
        "agreed": {"type": "boolean"},
        "differed": {"type": "array", "maxItems": 1000, "items": _STRING},
    })]},
})

_passes: list[Callable[[Any], Any]] = []  # compiled on first use, each
_explains: list[Callable[[Any], Any]] = []


class SchemaError(ValueError):
    """The record does not have the declared shape; ``field`` names where (e.g. blocks[0].duration)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def parse_record(raw: bytes, *, checked: bool = False) -> dict[str, Any]:
    """The record in ``raw`` as checked JSON; raise SchemaError (or ValueError for bad JSON).

    ``checked``: these very bytes passed the check before (the caller knows): parse only.
    """
    # NaN and Infinity are not JSON: keep them as their names, so the schema rejects them
    # where they are ("blocks[0].duration must be number") instead of treating them as numbers.
    # A literal too large for a float (1e999) is kept as its text the same way.
    try:
        data = json.loads(raw, parse_constant=lambda name: name, parse_float=_finite_or_text)
    except RecursionError:  # nested past the decoder: bad JSON like any other, not a crash
        raise ValueError("nested too deeply") from None
    if checked:
        return data
    import fastjsonschema

    if not _passes:
        _passes.append(fastjsonschema.compile(_without_const(RECORD_SCHEMA), detailed_exceptions=False))
    try:
        _passes[0](data)
    except fastjsonschema.JsonSchemaValueException:
        _check_explained(data)
    return data


def _check_explained(data: Any) -> None:
    """Raise SchemaError when ``data`` fails the schema, saying where and why (the verdict is this
    check's: the quick one is as strict or stricter)."""
    import fastjsonschema

    if not _explains:
        _explains.append(fastjsonschema.compile(RECORD_SCHEMA))
    try:
        _explains[0](data)
    except fastjsonschema.JsonSchemaValueException as exc:
        field = str(exc.name).removeprefix("data").lstrip(".") or "the record"
        message = str(exc.message).removeprefix(str(exc.name)).strip()
        raise SchemaError(field, f"field {field} {message}") from None


def _without_const(schema: Any) -> Any:
    """``schema`` with each ``const`` as a one-value ``enum`` (fastjsonschema compiles no ``const``
    without detailed errors): as strict or stricter, its ``enum`` refusing a bool for a number."""
    if not isinstance(schema, dict):
        return schema
    changed: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "const":
            changed["enum"] = [value]
        elif key == "properties":
            changed[key] = {name: _without_const(part) for name, part in value.items()}
        elif key in ("items", "additionalProperties", "propertyNames"):
            changed[key] = _without_const(value)
        elif key in ("oneOf", "anyOf", "allOf"):
            changed[key] = [_without_const(part) for part in value]
        else:
            changed[key] = value
    return changed


def _finite_or_text(text: str) -> float | str:
    number = float(text)
    return number if math.isfinite(number) else text
