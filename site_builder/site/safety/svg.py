"""SVG files the site publishes, made inert: an SVG opened on its own runs its scripts.

An ``<img>`` never runs an SVG's scripts, but the file itself sits on the site's origin,
and a reader who opens it (or a link to it) would run whatever a value's ``_repr_svg_``,
or a forged record, put in it.  So every SVG is parsed and written anew without scripts,
event handlers, foreign content or links outside the document.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from site_builder.fs import UnsafeFileError, UnsafePathError, open_regular

if TYPE_CHECKING:  # imported by clean_svg: a site without SVG never imports the XML parser
    from xml.etree import ElementTree

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
MAX_SVG_BYTES = 20 * 1024 * 1024
# Elements that run code or embed another document.
_DROPPED = {"script", "foreignObject", "iframe", "object", "embed", "handler", "listener"}
# SMIL elements that can set an attribute (an href, an event handler) while the SVG runs.
_ANIMATORS = {"set", "animate", "animateTransform", "animateMotion"}
_LOCAL_URL = re.compile(r"^\s*(#|data:image/(png|jpeg|gif|webp);)", re.I)
_CSS_URL = re.compile(r"url\(\s*(?!['\"]?#)[^)]*\)|@import|expression\s*\(", re.I)


class UnsafeSvgError(ValueError):
    """The SVG cannot be made safe to publish (not XML, a DTD, too large)."""


def clean_svg(data: bytes) -> bytes:
    """``data`` (an SVG document) without anything that could run or load another resource."""
    if len(data) > MAX_SVG_BYTES:
        raise UnsafeSvgError(f"larger than {MAX_SVG_BYTES} bytes")
    # Entities are how entity bombs get in; real SVGs declare none (Matplotlib's name the
    # SVG 1.1 DTD, which is never fetched, with no internal subset).
    if re.search(rb"<!ENTITY|<!DOCTYPE[^>\[]*\[", data, re.I):
        raise UnsafeSvgError("it declares entities")
    from xml.etree import ElementTree

    ElementTree.register_namespace("", SVG_NS)
    ElementTree.register_namespace("xlink", XLINK_NS)
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as exc:
        raise UnsafeSvgError(f"not well-formed XML ({exc})") from None
    if _local(root.tag) != "svg":
        raise UnsafeSvgError("its root element is not <svg>")
    _clean(root)
    return ElementTree.tostring(root, encoding="utf-8", xml_declaration=False)


def _local(tag: object) -> str:
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""


def _clean(element: ElementTree.Element) -> None:
    for child in list(element):
        name = _local(child.tag)
        if not name or name in _DROPPED or (name in _ANIMATORS and _sets_something_unsafe(child)):
            element.remove(child)
            continue
        _clean(child)
    for attr in list(element.attrib):
        name, value = _local(attr).lower(), element.attrib[attr]
        if name.startswith("on") or (name == "href" and not _LOCAL_URL.match(value)):
            del element.attrib[attr]
        elif name == "style" and _CSS_URL.search(value):
            del element.attrib[attr]
    if _local(element.tag) == "style" and element.text and _CSS_URL.search(element.text):
        element.text = _CSS_URL.sub("none", element.text)


def _sets_something_unsafe(element: ElementTree.Element) -> bool:
    target = element.attrib.get("attributeName", "").lower()
    return target.startswith("on") or target.endswith("href") or target == "style"


def inert_svg(folder: Path, rel: str) -> bytes:
    """The SVG file ``rel`` of ``folder`` (a regular file, no link followed) made inert;
    UnsafeSvgError says why it cannot be."""
    try:
        with open_regular(folder, rel) as f:
            data = f.read(MAX_SVG_BYTES + 1)
    except (OSError, UnsafeFileError, UnsafePathError) as exc:
        raise UnsafeSvgError(f"it cannot be read ({exc})") from None
    return clean_svg(data)
