"""Durations as people write them in policies and on the command line: `3d`, `12h`, `90s`."""

from __future__ import annotations

import re

from maintenance.errors import UsageError

_UNITS_S = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"^\s*(?P<n>\d+(?:\.\d+)?)\s*(?P<unit>ms|s|m|h|d|w)?\s*$")


def parse_duration(text: str | int | float) -> float:
    """Seconds. Written text needs its unit (`--older-than 5` meant five seconds to nobody):
    only `0` may go without. A number (YAML, Python) is seconds."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        if text < 0:
            raise UsageError(f"duration cannot be negative: {text}")
        return float(text)
    match = _DURATION.match(str(text))
    if match is None:
        raise UsageError(f"not a duration: {text!r} (use e.g. 90s, 30m, 12h, 3d, 2w)")
    if match["unit"] is None and float(match["n"]) != 0:
        raise UsageError(f"a duration needs a unit: {text.strip()!r} could be {match['n']}s, {match['n']}m, {match['n']}h or {match['n']}d")
    return float(match["n"]) * _UNITS_S[match["unit"] or "s"]


def parse_budget(text: str | int | float) -> float:
    """Seconds of job runs per hour (`daemon.budget`, `--budget`): a number is seconds (the
    quantity has no other unit), a duration says them in its own (`20m`: 1,200). Positive."""
    stripped = str(text).strip()
    try:
        seconds = float(stripped) if not isinstance(text, bool) and re.fullmatch(r"\d+(\.\d+)?", stripped) else parse_duration(text)
    except UsageError:
        raise UsageError(f"not a budget: {stripped!r} (compute-seconds of job runs per hour: 600, or 10m)") from None
    if seconds <= 0:
        raise UsageError(f"a budget must be more than 0 seconds an hour: {stripped!r}")
    return seconds


def format_duration(seconds: float) -> str:
    """The largest whole unit that writes `seconds` exactly (`3d`, `90s`, `1500ms`)."""
    for unit in ("w", "d", "h", "m", "s"):
        count = seconds / _UNITS_S[unit]
        if count >= 1 and float(count).is_integer():
            return f"{int(count)}{unit}"
    return f"{round(seconds * 1000)}ms" if seconds else "0s"
