"""MERGE's estimate counts the files it opens, not only their bytes."""

from __future__ import annotations

import pytest

from maintenance.jobs.merge.estimate import estimate
from maintenance.jobs.spec import SECONDS_PER_FILE
from maintenance.table.health import TableHealth, count_files
from tests.support.metadata import data, eq, snapshot


def health_of(*files: object) -> TableHealth:
    health = TableHealth()
    count_files(health, snapshot(*files), small_file_bytes=1)  # type: ignore[arg-type]
    return health


def test_each_file_of_a_partition_with_deletes_adds_to_the_estimate() -> None:
    """On the budget fleet a run's compute-seconds followed the files it opened (bytes were a
    few hundred KB): the estimate carries them, so one calibration serves small and large
    tables. Files of partitions without deletes are not merged and do not count."""
    one = health_of(data(1, "eu", size=1000), eq(2, "eu", size=100), data(1, "us", size=1000))
    more = health_of(*(data(1, "eu", size=1000) for _ in range(10)), *(eq(2, "eu", size=100) for _ in range(10)), data(1, "us", size=1000))

    assert estimate(more) - estimate(one) == pytest.approx(18 * SECONDS_PER_FILE, rel=0.01)
    assert estimate(health_of(data(1, "eu", size=1000))) == pytest.approx(5.0)
