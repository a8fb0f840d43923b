"""`cli/json_text.py`: its text is the standard library's indented JSON, byte for byte."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maintenance.cli.json_text import dumps_indented

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text() \
    | st.builds(Path, st.text(min_size=1, max_size=5)) | st.dates()  # the last two through `default=str`
KEYS = st.text() | st.integers() | st.floats(allow_nan=False) | st.booleans() | st.none()
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.dictionaries(KEYS, inner, max_size=4),
                      max_leaves=30)


@settings(max_examples=400, deadline=None)
@given(VALUES)
def test_the_same_text_as_the_standard_librarys(value: object) -> None:
    assert dumps_indented(value) == json.dumps(value, indent=2, default=str)


def test_a_plans_shape() -> None:
    """Flat objects in a list in an object, empty ones, and a value only `default` writes."""
    value = {"decisions": [{"table": "a.b.c", "due": True, "estimated_s": 5.0, "n": 3, "reason": "x: \"y\" é"}] * 3, "problems": {},
             "empty": [], "when": datetime.date(2026, 12, 5), "nested": [[1, [2, {}]], {"k": [None]}]}
    assert dumps_indented(value) == json.dumps(value, indent=2, default=str)


def test_a_key_json_cannot_write_is_refused_as_json_refuses_it() -> None:
    with pytest.raises(TypeError):
        json.dumps({(1, 2): [1]}, indent=2)
    with pytest.raises(TypeError):
        dumps_indented({(1, 2): [1]})
