"""Sizes and durations for people to read: `12.3 MiB`, `4m05s`. The terminal's text output
and the status page write them alike (JSON keeps the numbers)."""

from __future__ import annotations


def format_bytes(value: float) -> str:
    """Binary units: `812 B`, `12.0 KiB`, `3.4 GiB`."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def format_seconds(value: float) -> str:
    """`0.25s`, `4.2s`, `42s`, `4m05s`, `12m`, `3.5h`, `2.0d`."""
    if value < 1:
        return f"{value:.2f}s"
    if value < 60:
        return f"{value:.0f}s" if value >= 10 else f"{value:.1f}s"
    if value < 3600:
        whole = round(value)
        return f"{whole // 60}m{whole % 60:02d}s" if whole < 600 else f"{whole / 60:.0f}m"
    if value < 86400:
        return f"{value / 3600:.1f}h"
    return f"{value / 86400:.1f}d"
