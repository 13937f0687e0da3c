"""Records, notebooks and the other indented JSON files keep the bytes json.dumps gave them:
``json_text.indented`` is ``json.dumps(indent=1, sort_keys=True)`` to the character."""

from __future__ import annotations

import json
from enum import IntEnum
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from site_builder.json_text import indented, indented_file

KEYS = st.one_of(st.text(max_size=6), st.integers(-50, 50))
LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                   st.text())
VALUES = st.recursive(LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.tuples(inner, inner),
    st.dictionaries(st.text(max_size=6), inner, max_size=4),
    st.dictionaries(st.integers(-50, 50), inner, max_size=4)), max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(VALUES, st.booleans())
def test_the_same_text_as_json_dumps(data: Any, ensure_ascii: bool) -> None:
    assert indented(data, ensure_ascii=ensure_ascii) == json.dumps(data, indent=1, sort_keys=True,
                                                                   ensure_ascii=ensure_ascii)


class Level(IntEnum):
    HIGH = 3


@pytest.mark.parametrize("data", [
    {}, [], "", {"a": {}, "b": [], "c": [{}]},
    {10: "ten", 9: "nine", -1: "minus"},  # sorted as numbers, as json sorts them, then written as text
    {1.5: "x", 2.0: "y"}, {True: 1}, {None: 2}, {"b": 1, "a": [1, 2.5, None, True, False, "é\n\"\\"]},
    [float("nan"), float("inf"), -float("inf"), 1e300, -0.0, 10**30, Level.HIGH], {"k": Level.HIGH},
    {"lone": "\udc80", "tab": "\t", "nul": "\x00", "emoji": "\U0001f600"},
])
def test_edge_cases(data: Any) -> None:
    for ensure_ascii in (True, False):
        assert indented(data, ensure_ascii=ensure_ascii) == json.dumps(data, indent=1, sort_keys=True,
                                                                       ensure_ascii=ensure_ascii)


def test_what_json_refuses_is_refused() -> None:
    for bad in ({"a": object()}, [b"bytes"], {(1, 2): "tuple key"}, {"a": 1, 2: "mixed keys"}):
        with pytest.raises(TypeError):
            json.dumps(bad, indent=1, sort_keys=True)
        with pytest.raises(TypeError):
            indented(bad)


def test_a_file_is_utf8_unless_a_lone_surrogate_needs_escapes() -> None:
    assert indented_file({"é": ["ü"]}) == (json.dumps({"é": ["ü"]}, indent=1, ensure_ascii=False) + "\n").encode()
    assert indented_file({"out": "a\udc80"}) == b'{\n "out": "a\\udc80"\n}\n'
