"""Bibliography files as CSL-JSON items: BibTeX read with pybtex, CSL-JSON with json.

A bibliography is untrusted data: every field becomes plain Unicode text here (LaTeX such
as ``{\\"o}``, ``\\&``, ``--`` and ``{Braces}`` decoded with pylatexenc), links keep only
``http(s)`` URLs and DOIs, and a malformed entry or file is a problem naming the file and
line while the rest of it is still read.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

# BibTeX entry types -> CSL types (as citation-js and pandoc-citeproc map them).
CSL_TYPES = {
    "article": "article-journal", "book": "book", "mvbook": "book", "booklet": "pamphlet",
    "inbook": "chapter", "incollection": "chapter", "inproceedings": "paper-conference",
    "conference": "paper-conference", "proceedings": "book", "manual": "report",
    "mastersthesis": "thesis", "phdthesis": "thesis", "thesis": "thesis", "techreport": "report",
    "report": "report", "unpublished": "manuscript", "online": "webpage", "electronic": "webpage",
    "www": "webpage", "misc": "article", "software": "article", "dataset": "article",
}
THESIS_GENRES = {"mastersthesis": "Master's thesis", "phdthesis": "PhD thesis"}
# BibTeX fields -> CSL variables (text as it is, once decoded)
TEXT_FIELDS = {
    "title": "title", "shorttitle": "title-short", "edition": "edition", "volume": "volume",
    "note": "note", "isbn": "ISBN", "issn": "ISSN", "series": "collection-title",
    "chapter": "chapter-number", "address": "publisher-place", "location": "publisher-place",
    "publisher": "publisher", "school": "publisher", "institution": "publisher",
    "organization": "publisher", "type": "genre", "eprint": "number",
}
CONTAINER_FIELDS = ("journal", "journaltitle", "booktitle")
MONTHS = {m: i + 1 for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}
# Private-use characters mark the formatter's tags in citeproc's output (see styles.py):
# a field must never hold one.
MARKERS = re.compile("[\ue000-\ue00f]")
_DOI = re.compile(r"(?:https?://(?:dx\.)?doi\.org/|doi:\s*)?(10\.\d{4,9}/\S+)", re.IGNORECASE)
_YEAR = re.compile(r"\d{1,4}")
_ISO_DATE = re.compile(r"(\d{4})(?:-(\d{1,2}))?(?:-(\d{1,2}))?")
_SPACE = re.compile(r"\s+")
_CSL_ID = re.compile(r"\S{1,200}")


@dataclass(frozen=True)
class Reading:
    """What one bibliography file held: its works as CSL-JSON items, where each starts, and
    what could not be read (each naming the file and line)."""

    items: list[dict[str, Any]] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)  # key -> its entry's first line
    problems: list[str] = field(default_factory=list)


@functools.lru_cache(maxsize=1)
def _latex() -> Any:
    from pylatexenc.latex2text import LatexNodes2Text

    return LatexNodes2Text(math_mode="text", keep_comments=False, strict_latex_spaces=False)


@functools.lru_cache(maxsize=8192)
def latex_text(value: str) -> str:
    """A BibTeX field's LaTeX as plain Unicode text: ``{\\"o}`` -> ö, ``\\&`` -> &, ``--`` -> –."""
    if "\\" not in value and "{" not in value and "$" not in value and "-" not in value and "`" not in value:
        return _SPACE.sub(" ", MARKERS.sub("", value)).strip()
    value = value.replace("''", "\u201d").replace("``", "\u201c")
    value = re.sub(r"\\url\s*\{([^{}]*)\}", r"\1", value)  # the address itself, not "<...>"
    try:
        text = _latex().latex_to_text(value)
    except Exception:  # noqa: BLE001 (pylatexenc raises its own kinds on odd input: keep the text)
        text = value.replace("{", "").replace("}", "")
    return _SPACE.sub(" ", MARKERS.sub("", text)).strip()


def safe_url(value: str) -> str:
    """``value`` when it is an http(s) URL a reader may follow, else ""."""
    value = value.strip()
    parts = urlsplit(value)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc or any(c.isspace() or c in "\"<>\\" for c in value):
        return ""
    return value


def doi_of(value: str) -> str:
    """The DOI a field names ("10.1007/BF01700692"), "" when it names none."""
    match = _DOI.fullmatch(value.strip())
    if match is None or any(c in "\"<>\\" for c in match.group(1)):
        return ""
    return match.group(1)


# ---------------------------------------------------------------- BibTeX


def _name(person: Any) -> dict[str, str]:
    """A pybtex Person as a CSL name; a name in braces ({World Health Organization}) is literal."""
    last = " ".join(person.last_names)
    if len(person.last_names) == 1 and last.startswith("{") and last.endswith("}") and not person.first_names:
        return {"literal": latex_text(last)}
    name = {"family": latex_text(last), "given": latex_text(" ".join(person.first_names + person.middle_names)),
            "non-dropping-particle": latex_text(" ".join(person.prelast_names)),
            "suffix": latex_text(" ".join(person.lineage_names))}
    return {k: v for k, v in name.items() if v} or {"literal": latex_text(str(person))}


def _issued(fields: Any) -> dict[str, Any] | None:
    date = fields.get("date", "")
    match = _ISO_DATE.match(date.strip()) if date else None
    if match:
        return {"date-parts": [[int(p) for p in match.groups() if p]]}
    year = _YEAR.search(fields.get("year", ""))
    if year is None:
        return None
    parts = [int(year.group())]
    month = latex_text(fields.get("month", "")).lower()[:3]
    if month in MONTHS:
        parts.append(MONTHS[month])
    elif month.isdigit() and 1 <= int(month) <= 12:
        parts.append(int(month))
    return {"date-parts": [parts]}


def _item(key: str, entry: Any) -> dict[str, Any]:
    """One pybtex entry as a CSL-JSON item."""
    kind = entry.type.lower()
    fields = entry.fields
    item: dict[str, Any] = {"id": key, "type": CSL_TYPES.get(kind, "article")}
    for name, variable in TEXT_FIELDS.items():
        if name in fields and variable not in item:
            item[variable] = latex_text(fields[name])
    if kind in THESIS_GENRES and "genre" not in item:
        item["genre"] = THESIS_GENRES[kind]
    container = next((fields[f] for f in CONTAINER_FIELDS if f in fields), "")
    if container:
        item["container-title"] = latex_text(container)
    if "number" in fields:
        item["issue" if item["type"] == "article-journal" else "number"] = latex_text(fields["number"])
    if "pages" in fields:
        item["page"] = latex_text(fields["pages"]).replace("\u2013", "-").replace("\u2014", "-").replace("--", "-")
    issued = _issued(fields)
    if issued:
        item["issued"] = issued
    for role in ("author", "editor", "translator"):
        people = entry.persons.get(role)
        if people:
            item[role] = [_name(p) for p in people]
    doi = doi_of(latex_text(fields.get("doi", "")))
    url = safe_url(latex_text(fields.get("url", "") or fields.get("howpublished", "")))
    if doi:
        item["DOI"] = doi
    if url:
        item["URL"] = url
    return {k: v for k, v in item.items() if v not in ("", [], None)}


def read_bibtex(text: str, shown: str) -> Reading:
    """The works of a BibTeX file's ``text`` (``shown``: its name for messages)."""
    import pybtex.errors
    from pybtex.database.input import bibtex

    reading = Reading()
    # pybtex reports problems through a module-wide switch: collected, never printed
    strict = pybtex.errors.strict
    pybtex.errors.set_strict_mode(False)
    try:
        with pybtex.errors.capture() as errors:
            parser = bibtex.Parser()
            try:
                data = parser.parse_string(text)
            except Exception as exc:  # noqa: BLE001 (a file pybtex cannot read at all)
                reading.problems.append(f"{shown}:{getattr(exc, 'lineno', 1) or 1}: not read as BibTeX: {_first_line(exc)}")
                return reading
    finally:
        pybtex.errors.set_strict_mode(strict)
    starts = _entry_lines(text)
    broken: set[str] = set()
    for error in errors:
        line = getattr(error, "lineno", None) or 0
        message = _first_line(error)
        # An unclosed entry is noticed where the next one starts: the one before it is broken.
        unclosed = "expected" in message and line in starts.values()
        before = [(start, key) for key, start in starts.items() if (start < line if unclosed else start <= line)]
        if before:
            start, key = max(before)
            broken.add(key)
            reading.problems.append(f"{shown}:{start}: the BibTeX entry {key} is malformed ({message}, "
                                    f"line {line}): it is left out, the rest of the file is read")
        else:
            reading.problems.append(f"{shown}:{line}: malformed BibTeX ({message}): the rest of the file is read")
    for key, entry in data.entries.items():
        line = starts.get(key, 0)
        if key in broken:
            continue  # what pybtex made of a broken entry is not what its author wrote
        if not _CSL_ID.fullmatch(key):
            reading.problems.append(f"{shown}:{line}: the key {key[:60]!r} is not a usable key (no spaces, "
                                    "at most 200 characters): its entry is left out")
            continue
        try:
            reading.items.append(_item(key, entry))
        except Exception as exc:  # noqa: BLE001 (odd data in one entry leaves the others)
            reading.problems.append(f"{shown}:{line}: the entry {key} cannot be read ({_first_line(exc)})")
            continue
        reading.lines[key] = line
    return reading


_ENTRY_START = re.compile(r"^[ \t]*@[ \t]*(\w+)[ \t]*[{(][ \t]*([^,\s{}()]+)[ \t]*,", re.MULTILINE)


def _entry_lines(text: str) -> dict[str, int]:
    """Each entry key's first line (1-based) in a BibTeX text (case as pybtex keeps it)."""
    found: dict[str, int] = {}
    for match in _ENTRY_START.finditer(text):
        if match.group(1).lower() not in ("string", "preamble", "comment"):
            found.setdefault(match.group(2), text.count("\n", 0, match.start()) + 1)
    return found


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# ---------------------------------------------------------------- CSL-JSON


def _clean(value: Any, depth: int = 0) -> Any:
    """A CSL-JSON value with only strings, numbers, lists and objects (markers removed), or None."""
    if depth > 4:
        return None
    if isinstance(value, str):
        return _SPACE.sub(" ", MARKERS.sub("", value)).strip()
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, list):
        return [v for v in (_clean(x, depth + 1) for x in value[:1000]) if v is not None]
    if isinstance(value, dict):
        return {str(k): v for k, v in ((k, _clean(x, depth + 1)) for k, x in value.items()) if v is not None}
    return None


def read_csl_json(text: str, shown: str) -> Reading:
    """The works of a CSL-JSON file's ``text``: a list of items (or ``{"items": [...]}``)."""
    reading = Reading()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        reading.problems.append(f"{shown}:{exc.lineno}: not read as CSL-JSON: {exc.msg}")
        return reading
    if isinstance(data, dict) and isinstance(data.get("items"), list):
        data = data["items"]
    if not isinstance(data, list):
        reading.problems.append(f"{shown}:1: not read as CSL-JSON: it holds no list of items")
        return reading
    lines = _json_item_lines(text)
    for n, raw in enumerate(data):
        line = lines[n] if n < len(lines) else 1
        key = raw.get("id") if isinstance(raw, dict) else None
        if not isinstance(key, (str, int)) or not _CSL_ID.fullmatch(str(key)):
            reading.problems.append(f"{shown}:{line}: item {n + 1} has no usable \"id\": left out")
            continue
        item = _clean(raw)
        item["id"] = str(key)
        item["type"] = item.get("type") if isinstance(item.get("type"), str) else "article"
        doi = doi_of(item.get("DOI", "")) if isinstance(item.get("DOI"), str) else ""
        url = safe_url(item.get("URL", "")) if isinstance(item.get("URL"), str) else ""
        item.pop("DOI", None), item.pop("URL", None)
        if doi:
            item["DOI"] = doi
        if url:
            item["URL"] = url
        for role in ("author", "editor", "translator"):
            if role in item and not (isinstance(item[role], list) and all(isinstance(p, dict) for p in item[role])):
                del item[role]
        reading.items.append(item)
        reading.lines[str(key)] = line
    return reading


def _json_item_lines(text: str) -> list[int]:
    """The line of each top-level item of a CSL-JSON list (the line of its opening brace)."""
    lines, depth, in_string, escaped, line = [], 0, False, False, 1
    level = 3 if text.lstrip().startswith("{") else 2  # {"items": [...]} or [...]
    for char in text:
        if char == "\n":
            line += 1
        if in_string:
            escaped, in_string = (not escaped and char == "\\"), in_string and (escaped or char != '"')
            continue
        if char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if char == "{" and depth == level:
                lines.append(line)
        elif char in "]}":
            depth -= 1
    return lines
