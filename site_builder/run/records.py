"""Run records: the execution cache, in a folder authors can commit (``_freeze/`` by default).

One store is both the cache of issue 4 and the committable record of issue 7: a record
whose inputs still match the demo is its cached result.  Layout, per entry::

    _freeze/NAME/                       the run's files folder (``RunResult.files_dir``)
    _freeze/NAME/<files the demo wrote>  at their paths relative to the demo's cwd
    _freeze/NAME/_site_builder/          figures, complete outputs, and record.json

``record.json`` sits under ``_site_builder/`` so that a demo writing its own
``record.json`` can never collide with it.  The JSON is diff-friendly: sorted keys,
one array element per line, output and tracebacks split into lines, no timestamp
other than the run's own start time (a cache hit rewrites nothing).

API (also for ``check`` and ``--shard``):

- ``store_dir(config, name)`` -> the record folder of an entry;
- ``load_record(folder) -> RunResult`` / ``save_record(folder, result, inputs)``;
- ``to_record(result, inputs) -> dict`` / ``from_record(data, folder) -> (RunResult, RunInputs)``;
- ``RecordStore(config)``: ``lookup(entry, script, options)`` -> ``Lookup`` (hit or why not),
  ``staging(name)`` -> a fresh folder to run into, ``commit(entry, script, result, options)``
  -> the result, now in its record folder (swapped in atomically with renames).
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import logging
import os
import platform
import shutil
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from site_builder.source.blocks import Cell, Script
from site_builder.config import Config
from site_builder.source.entries import Entry
from site_builder.errors import SiteBuilderError
from site_builder.run.execute import (
    BUILDER_DIR,
    Artifact,
    BlockError,
    BlockResult,
    Display,
    OutputChunk,
    RunOptions,
    RunResult,
)
from site_builder.fs import (
    UnsafeFileError,
    check_replaceable,
    relative_to_root,
    UnsafePathError,
    make_dirs,
    make_records_dir,
    make_temp_dir,
    open_regular,
    recover,
    remove_stale,
    replace_dir,
    safe_join,
    sha256_regular,
    write_new,
    writing,
)
from site_builder.run.record_schema import SchemaError, parse_record
from site_builder.names import stem_of

log = logging.getLogger(__name__)

RECORD_FORMAT = 3  # 2: each block's "value"; 3: values and display() outputs are MIME bundles; bump when the JSON layout changes; other formats are cache misses
# Bump when execute.py/runner.py/child/ change what a run produces (capture, figures, errors):
# every record made by the older behaviour is then re-run.
EXECUTION_VERSION = 4  # 2: blocks keep the value of their last expression; 3: not a bare string or an address;
# 4: display() calls and every MIME type of a value; animations
RECORD_FILE = f"{BUILDER_DIR}/record.json"
# environment keys that are not package distributions
_NOT_PACKAGES = frozenset({"python", "platform", "blas"})


class RecordError(Exception):
    """A record that cannot be read, does not have the declared shape, or whose files changed."""


class FrozenError(SiteBuilderError):
    """``build --frozen`` found entries without a matching record (exit status 1)."""


class UnusableRecordError(FrozenError):
    """``build --frozen`` found a record that is broken or forged: bad data (exit status 2)."""

    exit_status = 2


@dataclass(frozen=True)
class RunInputs:
    """Everything a run's result depends on: the cache key, kept in the record."""

    execution: int  # EXECUTION_VERSION of the builder that ran it
    code: str  # sha256 of the blocks' code without comments/blank lines/module docstring, + structure
    source: str  # sha256 of the whole script text
    exact: bool  # the result depends on the exact text (tracebacks, __doc__): compare ``source`` too
    python: str
    packages: dict[str, str]  # distribution -> version, of the packages the demo imported
    options: dict[str, float]  # the RunOptions that change a run (timeout, output limit)
    reads: dict[str, str]  # project-relative path -> sha256 of each file the demo read


@dataclass(frozen=True)
class Lookup:
    """The answer of :meth:`RecordStore.lookup`: the cached result, or why there is none."""

    result: RunResult | None
    reason: str = ""  # on a miss: "no record", "code changed", "data/x.csv changed", ...
    unusable: bool = False  # the record itself is broken or forged (not merely out of date)


# ---------------------------------------------------------------- fingerprints


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _code_tokens(cell: Cell) -> tuple[list[list[str]], bool]:
    """The cell's tokens without comments, blank lines and (setup) module docstring; uses __doc__?"""
    tokens = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(cell.text + "\n").readline))
    except (tokenize.TokenError, SyntaxError):
        return [["text", cell.text]], "__doc__" in cell.text
    ignored = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}
    significant = [t for t in tokens if t.type not in ignored]
    if cell.marker_line is None:  # the setup cell: drop a leading module docstring
        n = 0
        while n < len(significant) and significant[n].type == tokenize.STRING:
            n += 1
        if n and (n == len(significant) or significant[n].type == tokenize.NEWLINE):
            significant = significant[n + 1:]
    uses_doc = any("__doc__" in t.string for t in significant if t.type in (tokenize.NAME, tokenize.STRING))
    # INDENT holds the literal whitespace: only the structure matters
    layout = {tokenize.INDENT, tokenize.DEDENT, tokenize.NEWLINE}
    return [[tokenize.tok_name[t.type]] if t.type in layout else [t.string] for t in significant], uses_doc


def code_fingerprint(script: Script) -> tuple[str, bool]:
    """(sha256 of the code and block structure, whether the code reads ``__doc__``)."""
    blocks = []
    uses_doc = False
    for cell in script.code_cells:
        tokens, doc = _code_tokens(cell)
        uses_doc = uses_doc or doc
        blocks.append({"name": cell.name, "tags": list(cell.tags), "tokens": tokens})
    data = json.dumps(blocks, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest(), uses_doc


def _depends_on_exact_text(result: RunResult, rel_path: str) -> bool:
    """True when line numbers or source lines of the script appear in what the run showed."""
    mention = f"{rel_path}:"
    for block in result.blocks:
        if block.error is not None and (block.error.traceback or block.error.line):
            return True
        # warnings print "demos/x.py:12: UserWarning" and the source line
        if any(mention in chunk.text or f'"{rel_path}"' in chunk.text for chunk in block.output):
            return True
    return result.failure is not None


def _packages(environment: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in environment.items() if k not in _NOT_PACKAGES}


def run_options(config: Config, name: str) -> RunOptions:
    """How entry ``name`` runs; part of its cache key, so build, --frozen and check share it."""
    return RunOptions(timeout=config.timeout_for(name), project_root=config.root,
                      figure_scale=config.figure_scale, display_limit=config.display_limit,
                      animation_frames=config.animation_frames, animation_size=config.animation_size)


def _run_options(options: RunOptions) -> dict[str, float]:
    found = {"timeout": float(options.timeout), "output_limit": float(options.output_limit)}
    if options.figure_scale != 2.0:  # records made before the setting existed were all made at 2
        found["figure_scale"] = float(options.figure_scale)
    for name in ("display_limit", "animation_frames", "animation_size"):  # when not their default
        if getattr(options, name) != getattr(RunOptions, name):
            found[name] = float(getattr(options, name))
    return found


# ---------------------------------------------------------------- record <-> RunResult


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
            "artifacts": [{**dataclasses.asdict(a), "sha256": shas[a.path]} for a in b.artifacts],
            "value": None if b.value is None else _display_record(b.value),
        })
    return {
        "format": RECORD_FORMAT,
        "entry": result.entry,
        "failure": result.failure,
        "duration": result.duration,
        "started_at": result.started_at,
        "environment": dict(result.environment),
        "reads": list(result.reads),
        "inputs": dataclasses.asdict(inputs),
        "blocks": blocks,
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
        status=raw["status"],
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
    )


def _display(raw: dict[str, Any], own: set[str]) -> Display:
    return Display(data={mime: "".join(lines) for mime, lines in raw["data"].items()},
                   files={mime: path for mime, path in raw["files"].items() if path in own},
                   omitted={mime: int(size) for mime, size in raw["omitted"].items()})


def _check_files(data: dict[str, Any], folder: Path) -> None:
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
    try:
        text = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False)
        raw = (text + "\n").encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate in some output: escape everything
        raw = (json.dumps(data, indent=1, sort_keys=True) + "\n").encode("ascii")
    # The builder's folder is its own (run_demo put it there); still, never write through a link.
    make_dirs(folder / BUILDER_DIR)
    write_new(folder / RECORD_FILE, raw)
    return result


def record_digest(raw: bytes) -> str:
    """The sha256 of a record.json's bytes: what a trusted record is known by."""
    return hashlib.sha256(raw).hexdigest()


def read_record(folder: Path) -> tuple[RunResult, RunInputs]:
    """Load the record in ``folder``, check its shape and its files; raise RecordError when
    unusable, FileNotFoundError when there is none."""
    result, inputs, _ = _read_record(folder)
    return result, inputs


def _read_record(folder: Path, trusted: str = "") -> tuple[RunResult, RunInputs, bool]:
    """:func:`read_record`, and whether the record is the ``trusted`` one (its
    :func:`record_digest`: found good before and unchanged since), whose bytes are only parsed."""
    if not folder.is_dir():
        raise FileNotFoundError(folder)
    try:
        with open_regular(folder, RECORD_FILE) as f:
            raw = f.read()
    except UnsafeFileError as exc:
        if exc.reason == "it is missing":
            raise FileNotFoundError(folder / RECORD_FILE) from None
        raise RecordError(f"{RECORD_FILE} is refused: {exc.reason}") from None
    except OSError as exc:
        raise RecordError(f"unreadable ({exc.strerror})") from None
    checked = bool(trusted) and record_digest(raw) == trusted
    try:
        data = parse_record(raw, checked=checked)
    except SchemaError as exc:
        raise RecordError(str(exc)) from None
    except ValueError as exc:
        raise RecordError(f"not valid JSON ({exc})") from None
    parts = str(data["entry"]).split("/")  # SECTION/NAME lives in _freeze/SECTION/NAME
    if list(folder.parts[-len(parts):]) != parts:
        raise RecordError(f"field entry: {data['entry']!r} is not the record of {folder.name}")
    result, inputs = from_record(data, folder)
    if not checked:
        _check_files(data, folder)
    return result, inputs, checked


def load_record(folder: Path) -> RunResult:
    """The RunResult recorded in ``folder``; raise RecordError (or FileNotFoundError)."""
    return read_record(folder)[0]


def store_dir(config: Config, name: str) -> Path:
    """The record folder of entry ``name`` (``_freeze/NAME``, ``_freeze/SECTION/NAME``)."""
    return config.records.joinpath(*name.split("/"))


# ---------------------------------------------------------------- the store


@dataclass
class RecordStore:
    """The records of one build: looks results up and commits new ones."""

    config: Config
    # entry -> record_digest of a record the last published build used, when nothing its
    # lookup compares has changed since (the script, settings, Python, installed packages,
    # the builder, the record's files and the files the demo read; see rebuild.trusted_records):
    # that record is a hit without being checked again
    trusted: dict[str, str] = field(default_factory=dict)
    _installed: dict[str, str | None] = field(default_factory=dict)  # per-build version cache

    def installed_version(self, dist: str) -> str | None:
        """The installed version of distribution ``dist`` (None when absent), cached per build."""
        if dist not in self._installed:
            from importlib import metadata  # ~20 ms to import: only when a record is checked

            try:
                self._installed[dist] = metadata.version(dist)
            except metadata.PackageNotFoundError:
                self._installed[dist] = None
        return self._installed[dist]

    def lookup(self, entry: Entry, script: Script, options: RunOptions, *, frozen: bool = False) -> Lookup:
        """The recorded result of ``entry`` when every input still matches, else why not.

        ``frozen`` checks only what the sources decide (code, files read), not this
        machine's Python, packages or options.  An unreadable record is a miss (warned).
        """
        folder = store_dir(self.config, entry.name)
        try:
            recover(folder)  # a build killed between the two renames of replace_dir
            result, inputs, trusted = _read_record(folder, self.trusted.get(entry.name, ""))
        except FileNotFoundError:
            return Lookup(None, "no record")
        except RecordError as exc:
            where = f"{self.config.records.name}/{entry.name}"
            log.warning("%s: ignoring the run record in %s (running the demo again): %s", entry.name, where, exc)
            return Lookup(None, f"unusable record in {where}: {exc}", unusable=True)
        if trusted:  # nothing _mismatch compares has changed since the last build compared it
            return Lookup(result)
        reason = self._mismatch(entry, script, options, inputs, frozen)
        return Lookup(None, reason) if reason else Lookup(result)

    def _mismatch(self, entry: Entry, script: Script, options: RunOptions, inputs: RunInputs,
                  frozen: bool) -> str:
        code, _ = code_fingerprint(script)
        if inputs.code != code:
            return "its code changed"
        if inputs.exact and inputs.source != _sha_text(entry.source):
            return "its text changed and its output shows line numbers or source lines"
        for rel, sha in sorted(inputs.reads.items()):
            try:
                now = sha256_file(safe_join(self.config.root, rel))
            except (OSError, UnsafePathError):
                if not sha:
                    continue  # it was gone after the run already
                return f"{rel}, which it read, is gone"
            if now != sha:
                return f"{rel}, which it read, changed"
        if frozen:
            return ""
        if inputs.execution != EXECUTION_VERSION:
            return "the builder's execution behaviour changed"
        if inputs.python != platform.python_version():
            return f"Python changed ({inputs.python} -> {platform.python_version()})"
        for dist, version in sorted(inputs.packages.items()):
            now_version = self.installed_version(dist)
            if now_version != version:
                return f"{dist} changed ({version} -> {now_version or 'not installed'})"
        if inputs.options != _run_options(options):
            return "run options changed (timeout or output limit)"
        return ""

    def check_replaceable(self, entries: list[Entry]) -> None:
        """Refuse (exit status 2) before anything runs when a folder in the records' place of an
        entry is not a record: committing the entry's run would delete it."""
        shown = relative_to_root(self.config.records, self.config.root)  # once, not once per entry
        for entry in entries:
            folder = store_dir(self.config, entry.name)
            check_replaceable(folder, RECORD_FILE, "a run record", f"{shown}/{entry.name}")

    def staging(self, name: str) -> Path:
        """A fresh, empty folder beside the record of entry ``name`` to run it into."""
        make_records_dir(self.config.records)
        parent = store_dir(self.config, name).parent  # the same folder: the swap is a rename
        with writing(f"making the folder to run {name} in", self.config.records, self.config.root):
            make_dirs(parent)
            # The pid in the name: only the scratch folders of dead builds are ever removed.
            return make_temp_dir(parent, f".{stem_of(name)}.tmp-{os.getpid()}-")

    def commit(self, entry: Entry, script: Script, result: RunResult, options: RunOptions) -> RunResult:
        """Save ``result`` (run in a staging folder) as the entry's record; return it from there.

        A failed write (disk full...) raises WriteError and removes the staging folder: the
        entry's previous record is left exactly as it was.
        """
        staging = result.files_dir
        target = store_dir(self.config, entry.name)
        try:
            with writing(f"saving the record of {entry.name}", self.config.records, self.config.root):
                result = save_record(staging, result, self.inputs(entry, script, result, options))
                check_replaceable(target, RECORD_FILE, "a run record", f"{self.config.records.name}/{entry.name}")
                staging.chmod(0o755)  # mkdtemp made it private; a record is meant to be shared
                replace_dir(staging, target)
        except BaseException:
            self.discard(staging)
            raise
        remove_stale(target.parent, f".{entry.stem}.tmp-")  # from builds killed mid-run
        return dataclasses.replace(result, files_dir=target)

    def discard(self, staging: Path) -> None:
        """Remove the staging folder of a run that was cancelled or could not be saved (it is no result)."""
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(staging.with_name(staging.name + ".builder"), ignore_errors=True)  # see run_demo

    def frozen_results(self, entries: list[Entry], parsed: dict[str, Script | Exception]) -> dict[str, RunResult]:
        """Every parsable entry's recorded result; raise FrozenError naming those without one."""
        results: dict[str, RunResult] = {}
        refused: list[str] = []
        unusable = False
        for entry in entries:
            script = parsed[entry.name]
            if not isinstance(script, Script):
                continue
            options = run_options(self.config, entry.name)
            found = self.lookup(entry, script, options, frozen=True)
            if found.result is None:
                refused.append(f"{entry.name} ({found.reason})")
                unusable = unusable or found.unusable
            else:
                results[entry.name] = found.result
        if refused:
            error = UnusableRecordError if unusable else FrozenError
            raise error(
                f"--frozen: no matching run record for {len(refused)} entr{'y' if len(refused) == 1 else 'ies'}: "
                f"{'; '.join(refused)}; run `site-builder build` to record them"
            )
        return results

    def inputs(self, entry: Entry, script: Script, result: RunResult, options: RunOptions) -> RunInputs:
        """The cache key of a run that just finished."""
        code, uses_doc = code_fingerprint(script)
        reads = {}
        for rel in result.reads:
            try:
                reads[rel] = sha256_file(safe_join(self.config.root, rel))
            except (OSError, UnsafePathError):
                reads[rel] = ""  # read, then deleted: any file there later is a change
        return RunInputs(
            execution=EXECUTION_VERSION,
            code=code,
            source=_sha_text(entry.source),
            exact=uses_doc or _depends_on_exact_text(result, entry.rel_path),
            python=result.environment.get("python", platform.python_version()),
            packages=_packages(result.environment),
            options=_run_options(options),
            reads=reads,
        )


def _sha_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
