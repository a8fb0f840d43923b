"""A run's progress steps as a short line (`maintenance/progress.py`), on the terminal and the
status page alike."""

from __future__ import annotations

from maintenance.progress import describe_progress as describe
from maintenance.progress import recorded_step


def test_a_step_reads_as_its_name_and_its_counts() -> None:
    assert describe("staged", {}) == "staged" and describe("written", {"files": 9}) == "written: files 9"


def test_byte_counts_read_in_binary_units() -> None:
    assert describe("planning", {"data_files": 12, "data_bytes": 3 * 2**20}) == "planning: data files 12, data bytes 3.0 MiB"


def test_a_recorded_step_reads_as_the_step_it_was() -> None:
    assert recorded_step({"stage": "groups written", "groups_written": 3}) == "groups written: groups written 3"
    assert recorded_step(None) is None and recorded_step({}) is None
