"""The one backoff rule (`maintenance/backoff.py`): waits that double, up to a bound."""

from __future__ import annotations

from maintenance.backoff import doubling


def test_the_wait_doubles_with_each_failure_up_to_its_bound() -> None:
    assert [doubling(60.0, failures, 3600.0) for failures in range(1, 9)] == [60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 3600.0, 3600.0]
    assert [doubling(0.2, failures) for failures in range(1, 5)] == [0.2, 0.4, 0.8, 1.6]


def test_many_failures_stay_at_the_bound_without_overflowing() -> None:
    assert doubling(30.0, 5000, 600.0) == 600.0
    assert doubling(1, 5000, 20) == 20
