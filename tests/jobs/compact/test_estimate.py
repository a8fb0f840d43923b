"""COMPACT's estimate counts the files of the partitions it compacts, deletes included."""

from __future__ import annotations

import pytest

from maintenance.jobs.compact.estimate import estimate
from maintenance.jobs.spec import SECONDS_PER_FILE
from maintenance.table.health import TableHealth, count_files
from tests.support.metadata import data, eq, snapshot


def test_the_files_of_partitions_with_small_files_add_to_the_estimate() -> None:
    """A COMPACT of 24 small files and 38 deletes cost twice one of 24 alone on the budget
    fleet (0.34 against 0.15 compute-seconds): the deletes it applies count as files."""
    plain, with_deletes = TableHealth(), TableHealth()
    count_files(plain, snapshot(*(data(1, "eu", size=100) for _ in range(24)), data(1, "us", size=10**9)), small_file_bytes=1000)
    count_files(with_deletes, snapshot(*(data(1, "eu", size=100) for _ in range(24)), *(eq(2, "eu", size=10) for _ in range(38))), small_file_bytes=1000)

    assert estimate(plain) == pytest.approx(5.0 + 24 * SECONDS_PER_FILE, rel=0.01)
    assert estimate(with_deletes) - estimate(plain) == pytest.approx(38 * SECONDS_PER_FILE, rel=0.01)
