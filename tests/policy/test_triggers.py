"""Triggers (`policy/triggers.py`): "at least" and "at most" thresholds."""

from __future__ import annotations

from maintenance.policy.triggers import fired
from maintenance.table.health import TableHealth


def test_triggers_reach_at_least_and_at_most_thresholds() -> None:
    health = TableHealth(data_files=10, data_bytes=10 * 2**20, manifests=40, small_manifests=39)
    assert fired({"avg_data_file_bytes": 2 * 2**20, "small_manifests": 30}, health) == ["avg_data_file_bytes 1048576 <= 2097152", "small_manifests 39 >= 30"]
    assert fired({"avg_data_file_bytes": 2**19}, health) == []
