"""`json.dumps(value, indent=2, default=str)`, the same text, in a fraction of the time.

With an indent, the standard library encodes in pure Python (its C encoder serves only
unindented output): `plan --all --json` over 2,000 tables (8,000 decisions) spent 0.24 s
there, a sixth of a warm cron tick. Here every list or object whose items are all scalars
(each decision, each row) goes through the C encoder, with the newline and the indent of
its items given as the item separator, and only the containers that hold containers are
walked in Python. The text is byte for byte the standard library's
(`tests/cli/test_json_text.py` compares them on generated values).
"""

from __future__ import annotations

import json
from typing import Any

_CONTAINERS = (dict, list, tuple)


def dumps_indented(value: Any, indent: int = 2) -> str:
    """`json.dumps(value, indent=indent, default=str)`."""
    return _encode(value, 0, " " * indent)


def _encode(value: Any, level: int, step: str) -> str:
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner, outer = step * (level + 1), step * level
        if not any(isinstance(item, _CONTAINERS) for item in value.values()):
            flat = json.dumps(value, default=str, separators=(",\n" + inner, ": "))
            return "{\n" + inner + flat[1:-1] + "\n" + outer + "}"
        items = (inner + _key(key) + ": " + _encode(item, level + 1, step) for key, item in value.items())
        return "{\n" + ",\n".join(items) + "\n" + outer + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        inner, outer = step * (level + 1), step * level
        if not any(isinstance(item, _CONTAINERS) for item in value):
            flat = json.dumps(value, default=str, separators=(",\n" + inner, ": "))
            return "[\n" + inner + flat[1:-1] + "\n" + outer + "]"
        return "[\n" + ",\n".join(inner + _encode(item, level + 1, step) for item in value) + "\n" + outer + "]"
    if value is None or isinstance(value, (str, int, float)):
        return json.dumps(value)
    return _encode(str(value), level, step)  # `default=str`


def _key(key: Any) -> str:
    """An object's key as the standard library writes it: a string, or the JSON text of a
    number, true, false or null, quoted."""
    if isinstance(key, str):
        return json.dumps(key)
    if key is True or key is False or key is None or isinstance(key, (int, float)):
        return json.dumps(json.dumps(key))
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")
