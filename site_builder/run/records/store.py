"""Run records: the execution cache, in a folder authors can commit (``_freeze/`` by default).

One store is both the cache of issue 4 and the committable record of issue 7: a record
whose inputs still match the demo is its cached result.  Layout, per entry::

    _freeze/NAME/                       the run's files folder (``RunResult.files_dir``)
    _freeze/NAME/<files the demo wrote>  at their paths relative to the demo's cwd
    _freeze/NAME/_site_builder/          figures, complete outputs, and record.json

``record.json`` sits under ``_site_builder/`` so that a demo writing its own
``record.json`` can never collide with it.  The JSON is diff-friendly: sorted keys,
one array element per line, output and tracebacks split into lines, no timestamp
other than the run's own start time (a cache hit rewrites nothing).  Its layout lives in
``record_file``, the cache key (``RunInputs``, fingerprints) in ``record_inputs``.

API (also for ``check`` and ``--shard``):

- ``store_dir(records, name)`` -> the record folder of an entry;
- ``read_record(folder) -> (RunResult, RunInputs)`` / ``load_record(folder) -> RunResult``
  (``record_file.save_record(folder, result, inputs)`` writes one);
- ``RecordStore(records, root)``: ``lookup(entry, script, options)`` -> ``Lookup`` (hit or why not),
  ``staging(name)`` -> a fresh folder to run into, ``commit(entry, script, result, options)``
  -> the result, now in its record folder (swapped in atomically with renames).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import platform
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from site_builder.source.parsed import Script
from site_builder.source.entries import Entry
from site_builder.errors import SiteBuilderError
from site_builder.run.execute import RunOptions, RunResult
from site_builder.run.preload import installed_version
from site_builder.run.results import LazyResult, ResultRow
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
    remove_dead_temporaries,
    replace_dir,
    safe_join,
    writing,
)
from site_builder.run.records.record_json import RECORD_FILE, RecordError, check_files, from_record, record_digest, save_record
from site_builder.run.records.inputs import (
    RunInputs,
    code_fingerprint,
    depends_on_exact_text,
    option_values,
    recorded_packages,
    sha256_file,
    sha_text,
)
from site_builder.run.records.schema import SchemaError, parse_record
from site_builder.run.records.verdict import carried_verdict
from site_builder.names import stem_of

log = logging.getLogger(__name__)

# Bump when execute.py/runner.py/child/ change what a run produces (capture, figures, errors):
# every record made by the older behaviour is then re-run.
EXECUTION_VERSION = 8  # 2: blocks keep the value of their last expression; 3: not a bare string or an address;
# 4: display() calls and every MIME type of a value; animations; 5: blocks record what their names denoted (api_names)
# 6: names in function and class bodies scoped by symtable; parameters from the calls seen (3.12+)
# 7: notebooks run in IPython (magics, help, the displayhook); tracebacks keep the run folder's frames
# 8: an {eval} of a value whose only rich form is an image (a Matplotlib figure) gives that image


class RecordChangedError(SiteBuilderError):
    """A trusted record's bytes changed between the build's check and its read (exit status 1)."""


class FrozenError(SiteBuilderError):
    """``build --frozen`` found entries without a matching record (exit status 1)."""


class UnusableRecordError(FrozenError):
    """``build --frozen`` found a record that is broken or forged: bad data (exit status 2)."""

    exit_status = 2


@dataclass(frozen=True)
class Lookup:
    """The answer of :meth:`RecordStore.lookup`: the cached result, or why there is none."""

    result: RunResult | None
    reason: str = ""  # on a miss: "no record", "code changed", "data/x.csv changed", ...
    unusable: bool = False  # the record itself is broken or forged (not merely out of date)


def read_record(folder: Path) -> tuple[RunResult, RunInputs]:
    """Load the record in ``folder``, check its shape and its files; raise RecordError when
    unusable, FileNotFoundError when there is none."""
    result, inputs, _ = _read_record(folder)
    return result, inputs


def _read_record(folder: Path, trusted: str = "", checked: str = "") -> tuple[RunResult, RunInputs, bool]:
    """:func:`read_record`, and whether the record is the ``trusted`` one (its
    :func:`record_digest`: found good before and unchanged since), whose bytes are only parsed.
    ``checked``: the digest of bytes whose shape was found good before (their files are checked)."""
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
    digest = record_digest(raw) if trusted or checked else ""
    same = bool(trusted) and digest == trusted
    try:
        data = parse_record(raw, checked=same or (bool(checked) and digest == checked))
    except SchemaError as exc:
        raise RecordError(str(exc)) from None
    except ValueError as exc:
        raise RecordError(f"not valid JSON ({exc})") from None
    parts = str(data["entry"]).split("/")  # SECTION/NAME lives in _freeze/SECTION/NAME
    if list(folder.parts[-len(parts):]) != parts:
        raise RecordError(f"field entry: {data['entry']!r} is not the record of {folder.name}")
    result, inputs = from_record(data, folder)
    if not same:
        check_files(data, folder)
    return result, inputs, same


def load_record(folder: Path) -> RunResult:
    """The RunResult recorded in ``folder``; raise RecordError (or FileNotFoundError)."""
    return read_record(folder)[0]


def store_dir(records: Path, name: str) -> Path:
    """The record folder of entry ``name`` in the records folder (``_freeze/NAME``, ``_freeze/SECTION/NAME``)."""
    return records.joinpath(*name.split("/"))


# ---------------------------------------------------------------- the store


@dataclass
class RecordStore:
    """The records of one build: looks results up and commits new ones."""

    records: Path  # the records folder
    root: Path  # the project folder: the files demos read are relative to it
    # entry -> record_digest of a record the last published build used, when nothing its
    # lookup compares has changed since (the script, settings, Python, installed packages,
    # the builder, the record's files and the files the demo read; see rebuild.trusted_records):
    # that record is a hit without being checked again
    trusted: dict[str, str] = field(default_factory=dict)
    confirmed: set[str] = field(default_factory=set)  # trusted records a lookup found with those very bytes
    # entry -> what the last published build kept of its trusted record's result: such a
    # record is read only when a page needs it (see trusted_row)
    rows: dict[str, ResultRow] = field(default_factory=dict)
    # trusted records whose every file had the full stat signature (size, mtime, ctime, inode) the
    # last build saved when this build looked (see rebuild.trusted_records): their bytes are the
    # trusted ones, so trusted_row does not read them
    signed: frozenset[str] = frozenset()
    # entry -> record_digest of the record the last published build took a result from (see
    # rebuild.checked_records): those bytes skip the schema check (compiling it is most of a
    # lookup's cost when one comment changed), not the lookup's comparisons
    checked: dict[str, str] = field(default_factory=dict)
    _installed: dict[str, str | None] = field(default_factory=dict)  # per-build version cache
    # records folder -> its names starting with "." when this build first looked (what killed
    # builds leave there): listed once per folder, not once per entry (quadratic in a big site)
    _dot_names: dict[str, frozenset[str]] = field(default_factory=dict)

    def installed_version(self, dist: str) -> str | None:
        """The installed version of distribution ``dist`` (None when absent), cached per build."""
        if dist not in self._installed:
            self._installed[dist] = installed_version(dist)
        return self._installed[dist]

    def confirmed_records(self) -> dict[str, str]:
        """Entry -> record_digest of the trusted records the lookups found unchanged, byte for byte."""
        return {name: digest for name, digest in self.trusted.items() if name in self.confirmed}

    def lookup(self, entry: Entry, script: Script, options: RunOptions, *, frozen: bool = False) -> Lookup:
        """The recorded result of ``entry`` when every input still matches, else why not.

        ``frozen`` checks only what the sources decide (code, files read), not this
        machine's Python, packages or options.  An unreadable record is a miss (warned).
        """
        folder = store_dir(self.records, entry.name)
        try:
            if self._left_by_killed_build(folder, f".{folder.name}.old-"):
                recover(folder)  # a build killed between the two renames of replace_dir
            result, inputs, trusted = _read_record(folder, self.trusted.get(entry.name, ""),
                                                   self.checked.get(entry.name, ""))
        except FileNotFoundError:
            return Lookup(None, "no record")
        except RecordError as exc:
            where = f"{relative_to_root(self.records, self.root)}/{entry.name}"
            log.warning("%s: ignoring the run record in %s (running the demo again): %s", entry.name, where, exc)
            return Lookup(None, f"unusable record in {where}: {exc}", unusable=True)
        if trusted:  # nothing _mismatch compares has changed since the last build compared it
            self.confirmed.add(entry.name)
            return Lookup(result)
        reason = self._mismatch(entry, script, options, inputs, frozen)
        return Lookup(None, reason) if reason else Lookup(result)

    def trusted_row(self, entry: Entry) -> LazyResult | None:
        """The trusted record of ``entry`` as the row the last build kept of it, parsed only when
        asked for (None when there is no row, or its bytes are not the trusted ones: look it up).
        Its bytes are hashed now, as a lookup does, unless its signature vouched for them (see
        ``signed``); read later, they must be the trusted ones, or the build stops (the record
        changed while it ran)."""
        row, digest = self.rows.get(entry.name), self.trusted.get(entry.name, "")
        if row is None or not digest:
            return None
        if entry.name not in self.signed:
            try:
                with open_regular(store_dir(self.records, entry.name), RECORD_FILE) as f:
                    if record_digest(f.read()) != digest:
                        return None
            except (UnsafeFileError, OSError):
                return None

        def load() -> RunResult:
            try:
                result, _, same = _read_record(store_dir(self.records, entry.name), digest)
            except (OSError, RecordError) as exc:
                raise RecordChangedError(f"{entry.name}: its run record changed while the build ran ({exc}): "
                                         "build again") from None
            if not same:
                raise RecordChangedError(f"{entry.name}: its run record changed while the build ran: build again")
            return result

        self.confirmed.add(entry.name)
        return LazyResult(entry.name, row, load)

    def _mismatch(self, entry: Entry, script: Script, options: RunOptions, inputs: RunInputs,
                  frozen: bool) -> str:
        code, _ = code_fingerprint(script, entry.format != "py")
        if inputs.code != code:
            return "its code changed"
        if inputs.exact and inputs.source != sha_text(entry.source):
            return "its text changed and its output shows line numbers or source lines"
        for rel, sha in sorted(inputs.reads.items()):
            try:
                now = sha256_file(safe_join(self.root, rel))
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
        if inputs.options != option_values(options):
            return "run options changed (timeout or output limit)"
        return ""

    def check_replaceable(self, entries: list[Entry]) -> None:
        """Refuse (exit status 2) before anything runs when a folder in the records' place of an
        entry is not a record: committing the entry's run would delete it."""
        for entry in entries:
            folder = store_dir(self.records, entry.name)
            check_replaceable(folder, RECORD_FILE, "a run record", f"{self.shown_records}/{entry.name}")

    @functools.cached_property
    def shown_records(self) -> str:
        """The records folder as messages show it: found once a build, not once an entry (two realpaths)."""
        return relative_to_root(self.records, self.root)

    def staging(self, name: str) -> Path:
        """A fresh, empty folder beside the record of entry ``name`` to run it into."""
        make_records_dir(self.records, self.root)
        parent = store_dir(self.records, name).parent  # the same folder: the swap is a rename
        with writing(f"making the folder to run {name} in", self.records, self.root):
            make_dirs(parent)
            # The pid in the name: only the scratch folders of dead builds are ever removed.
            return make_temp_dir(parent, f".{stem_of(name)}.tmp-{os.getpid()}-")

    def commit(self, entry: Entry, script: Script, result: RunResult, options: RunOptions) -> RunResult:
        """Save ``result`` (run in a staging folder) as the entry's record; return it from there.

        A failed write (disk full...) raises WriteError and removes the staging folder: the
        entry's previous record is left exactly as it was.
        """
        staging = result.files_dir
        target = store_dir(self.records, entry.name)
        try:
            with writing(f"saving the record of {entry.name}", self.records, self.root):
                inputs = self.inputs(entry, script, result, options)
                result = dataclasses.replace(result, verdict=carried_verdict(target, inputs, result.environment))
                result = save_record(staging, result, inputs)
                check_replaceable(target, RECORD_FILE, "a run record", f"{self.shown_records}/{entry.name}")
                staging.chmod(0o755)  # mkdtemp made it private; a record is meant to be shared
                replace_dir(staging, target)
        except BaseException:
            self.discard(staging)
            raise
        if self._left_by_killed_build(target, f".{entry.stem}.tmp-"):
            remove_dead_temporaries(target.parent, f".{entry.stem}.tmp-")  # from builds killed mid-run
        return dataclasses.replace(result, files_dir=target)

    def _left_by_killed_build(self, folder: Path, prefix: str) -> bool:
        """Whether the folder holding record ``folder`` had a name starting with ``prefix`` when
        this build first listed it (no other build runs meanwhile: the project's lock)."""
        parent = os.path.dirname(folder)
        names = self._dot_names.get(parent)
        if names is None:
            try:
                names = frozenset(n for n in os.listdir(parent) if n.startswith("."))
            except OSError:
                names = frozenset()
            self._dot_names[parent] = names
        return any(n.startswith(prefix) for n in names)

    def discard(self, staging: Path) -> None:
        """Remove the staging folder of a run that was cancelled or could not be saved (it is no result)."""
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(staging.with_name(staging.name + ".builder"), ignore_errors=True)  # see run_demo

    def frozen_results(self, entries: list[Entry], parsed: dict[str, Script | Exception],
                       options: Mapping[str, RunOptions]) -> dict[str, RunResult]:
        """Every parsable entry's recorded result (``options``: how each entry runs, by its name);
        raise FrozenError naming those without one."""
        results: dict[str, RunResult] = {}
        refused: list[str] = []
        unusable = False
        for entry in entries:
            script = parsed[entry.name]
            if not isinstance(script, Script):
                continue
            found = self.lookup(entry, script, options[entry.name], frozen=True)
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
        code, uses_doc = code_fingerprint(script, entry.format != "py")
        reads = {}
        for rel in result.reads:
            try:
                reads[rel] = sha256_file(safe_join(self.root, rel))
            except (OSError, UnsafePathError):
                reads[rel] = ""  # read, then deleted: any file there later is a change
        return RunInputs(
            execution=EXECUTION_VERSION,
            code=code,
            source=sha_text(entry.source),
            exact=uses_doc or depends_on_exact_text(result, entry.rel_path),
            python=result.environment.get("python", platform.python_version()),
            packages=recorded_packages(result.environment),
            options=option_values(options),
            reads=reads,
        )
