"""The cache key of a run (``RunInputs``): what a run's result depends on, fingerprinted.

A record whose inputs still match the demo is its cached result (see ``records``): the
blocks' code without comments or blank lines, the script's text when the output shows it,
Python, the packages the demo imported, the run options and the files the demo read.
"""

from __future__ import annotations

import hashlib
import io
import json
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from site_builder.run.execute import RunOptions, RunResult
from site_builder.source.parsed import Cell, Script
from site_builder.source.expressions.places import find_expressions
from site_builder.source.syntax.ipython import looks_like_ipython

# environment keys that are not package distributions
_NOT_PACKAGES = frozenset({"python", "platform", "blas"})


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


def code_fingerprint(script: Script, notebook: bool = False) -> tuple[str, bool]:
    """(sha256 of the code and block structure, whether the code reads ``__doc__``); in a
    ``notebook`` a cell of IPython syntax counts whole (a comment in ``%%writefile`` is no comment)."""
    blocks = []
    uses_doc = False
    for cell in script.code_cells:
        tokens, doc = _code_tokens(cell)
        uses_doc = uses_doc or doc
        block: dict[str, Any] = {"name": cell.name, "tags": list(cell.tags), "tokens": tokens}
        if cell.options:  # "#| eval: false" changes the run
            block.update(options=[list(o) for o in cell.options])
        if notebook and looks_like_ipython(cell.text):
            block.update(text=cell.text)
        blocks.append(block)
    quoted = [[e.after, e.written] for e in find_expressions(script, notebook)]
    if quoted:  # what the prose quotes is evaluated by the run: a new expression runs it again
        blocks.append({"expressions": quoted})
    data = json.dumps(blocks, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest(), uses_doc


def depends_on_exact_text(result: RunResult, rel_path: str) -> bool:
    """True when line numbers or source lines of the script appear in what the run showed."""
    mention = f"{rel_path}:"
    for block in result.blocks:
        if block.error is not None and (block.error.traceback or block.error.line):
            return True
        # warnings print "demos/x.py:12: UserWarning" and the source line
        if any(mention in chunk.text or f'"{rel_path}"' in chunk.text for chunk in block.output):
            return True
    return result.failure is not None


def recorded_packages(environment: dict[str, str]) -> dict[str, str]:
    """The package distributions (name -> version) of a run's environment."""
    return {k: v for k, v in environment.items() if k not in _NOT_PACKAGES}


def option_values(options: RunOptions) -> dict[str, float]:
    """The RunOptions that change a run's result, as recorded in its inputs."""
    found = {"timeout": float(options.timeout), "output_limit": float(options.output_limit)}
    if options.figure_scale != 2.0:  # records made before the setting existed were all made at 2
        found["figure_scale"] = float(options.figure_scale)
    for name in ("display_limit", "animation_frames", "animation_size"):  # when not their default
        if getattr(options, name) != getattr(RunOptions, name):
            found[name] = float(getattr(options, name))
    if options.strict_expressions:  # an expression that raises fails the entry
        found["strict_expressions"] = 1.0
    return found


def sha_text(text: str) -> str:
    """Hex sha256 of a text (lone surrogates included)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
