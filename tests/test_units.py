"""Sizes and durations for people (`maintenance/units.py`): the run history's duration
column and the status page's "ran 3.5h ago (every 1.0d)" say minutes, hours and days,
never raw seconds."""

from __future__ import annotations

import pytest

from maintenance.units import format_bytes, format_seconds


@pytest.mark.parametrize(("seconds", "shown"), [
    (0.25, "0.25s"), (4.2, "4.2s"), (42, "42s"), (59.4, "59s"),
    (60, "1m00s"), (245, "4m05s"), (599.4, "9m59s"), (600, "10m"), (1326, "22m"), (3599, "60m"),
    (3600, "1.0h"), (12_600, "3.5h"), (86_399, "24.0h"),
    (86_400, "1.0d"), (172_800, "2.0d"), (30 * 86_400, "30.0d"),
])
def test_durations_read_in_minutes_hours_and_days(seconds: float, shown: str) -> None:
    assert format_seconds(seconds) == shown


def test_sizes_read_in_binary_units() -> None:
    assert [format_bytes(n) for n in (812, 12 * 1024, 3.4 * 2**30, 5 * 2**50)] == ["812 B", "12.0 KiB", "3.4 GiB", "5120.0 TiB"]
