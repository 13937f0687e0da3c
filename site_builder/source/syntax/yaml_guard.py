"""YAML in a Markdown notebook, checked before jupytext reads it: no anchors, no aliases,
and front matter jupytext can read.

jupytext reads a notebook's front matter and each ``{code-cell}``'s options with PyYAML,
then copies the result into plain dicts and lists: a 700-byte "billion laughs" (aliases of
aliases) becomes billions of nodes and the build never ends.  Notebook metadata has no use
for YAML's references, so a block holding one is refused with a line naming the entry and
the line; the check only tokenises (linear time, nothing is built).  The front matter must
then be YAML, and a mapping wherever jupytext looks up keys (it fails bare otherwise).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from site_builder.errors import ParseError

# An opening fence of a MyST code or raw cell, wherever it is (found generously: a block this
# misses but jupytext reads would go unchecked, one it checks needlessly costs a scan).
_CELL_FENCE = re.compile(r"^[ \t>]*(`{3,}|~{3,})[^\n]*\{(?:code-cell|raw-cell)\}")
_YAML_RULE = re.compile(r"^[ \t]*-{3,}[ \t]*$")
_FRONT_END = re.compile(r"^(?:-{3,}|\.{3})[ \t]*$")


# Front matter keys jupytext reads as mappings (it calls .get on them), by their path.
_MAPPINGS = (("jupytext",), ("jupytext", "text_representation"), ("kernelspec",), ("language_info",))


def check_markdown_yaml(source: str, where: str) -> None:
    """Raise ParseError when a YAML block jupytext would read in ``source`` uses an anchor or an
    alias, or when its front matter is not YAML or not the mappings jupytext reads."""
    import yaml

    blocks = list(_yaml_blocks(source))
    for first_line, block in blocks:
        try:
            token = first_reference(block)
        except RecursionError:
            raise ParseError(f"{where}:{first_line}: its YAML nests too deep to be read") from None
        if token is not None:
            anchor = isinstance(token, yaml.AnchorToken)
            raise ParseError(f"{where}:{first_line + token.start_mark.line}: a YAML {'anchor' if anchor else 'alias'} "
                             f"({'&' if anchor else '*'}{token.value}): a notebook's front matter and cell options "
                             "are read without anchors and aliases; write the values out")
    if blocks and blocks[0][0] == 2:
        _check_front_matter(blocks[0][1], where)


def first_reference(text: str) -> object | None:
    """The first anchor or alias token of the YAML ``text``, None when it has none or is no YAML
    (tokens only: linear, nothing is built)."""
    import yaml

    if "&" not in text and "*" not in text:
        return None  # no reference can hide in it: skip the scanner
    try:
        return next((t for t in yaml.scan(text, Loader=yaml.SafeLoader)
                     if isinstance(t, (yaml.AnchorToken, yaml.AliasToken))), None)
    except yaml.YAMLError:
        return None  # not YAML: said for the front matter below, by jupytext for a cell's options


def load_plain_yaml(text: str) -> object | None:
    """``text`` read as YAML (no tags), None when it is no YAML, nests past Python's stack, or uses
    anchors or aliases (prose's YAML blocks: a few hundred bytes of aliases, copied, are billions of nodes)."""
    import yaml

    try:
        return None if first_reference(text) is not None else yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError):
        return None


def _check_front_matter(block: str, where: str) -> None:
    """The front matter (no aliases in it by now) is YAML, a mapping, with mappings where jupytext reads keys."""
    import yaml

    try:
        front = yaml.safe_load(block)
    except yaml.MarkedYAMLError as exc:
        line = 2 + exc.problem_mark.line if exc.problem_mark else 2
        raise ParseError(f"{where}:{line}: its front matter is not valid YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise ParseError(f"{where}: its front matter is not valid YAML: {exc}") from None
    except RecursionError:
        raise ParseError(f"{where}:2: its front matter nests too deep to be read") from None
    if front is None:
        return
    if not isinstance(front, dict):
        raise ParseError(f"{where}: its front matter must be a mapping of keys to values, not {_kind(front)}")
    for path in _MAPPINGS:
        parent: object = front
        for key in path[:-1]:
            parent = parent.get(key) if isinstance(parent, dict) else None
        if isinstance(parent, dict) and path[-1] in parent and not isinstance(parent[path[-1]], dict):
            raise ParseError(f"{where}: its front matter's {'.'.join(path)} must be a mapping of keys to values, "
                             f"not {_kind(parent[path[-1]])}")


def _kind(value: object) -> str:
    return {list: "a list", str: "a string", bool: "true or false", type(None): "empty"}.get(type(value), "a number")


def _yaml_blocks(source: str) -> Iterator[tuple[int, str]]:
    """(1-based line of its first line, text) of each YAML block jupytext may read in ``source``:
    the front matter and each MyST cell's options (a ``---`` block, or ``:key: value`` lines)."""
    lines = source.lstrip("\ufeff").split("\n")
    if lines and lines[0].rstrip() == "---":
        end = next((i for i in range(1, len(lines)) if _FRONT_END.match(lines[i])), len(lines))
        yield 2, "\n".join(lines[1:end])
    for i, line in enumerate(lines):
        if not _CELL_FENCE.match(line):
            continue
        body = i + 1
        if body < len(lines) and _YAML_RULE.match(lines[body]):
            end = next((k for k in range(body + 1, len(lines)) if _YAML_RULE.match(lines[k])), len(lines))
            yield body + 2, "\n".join(lines[body + 1:end])
        elif body < len(lines) and lines[body].lstrip().startswith(":"):
            end = body
            while end < len(lines) and lines[end].lstrip().startswith(":"):
                end += 1
            yield body + 1, "\n".join(line.lstrip()[1:] for line in lines[body:end])
