"""The written size checked against the plan (`jobs/file_groups/sizing.py`), on hand-built groups."""

from __future__ import annotations

import dataclasses

from maintenance.jobs.file_groups.grouping import OutputLayout, plan_groups
from maintenance.jobs.file_groups.sizing import OutputSizing
from tests.support.metadata import data


def test_a_group_that_missed_the_target_is_written_again_and_teaches_the_run_its_ratio() -> None:
    sizing = OutputSizing(100)
    [group] = plan_groups([data(1, "a", size=55) for _ in range(4)], 1, {}, target_size=100)  # 220 bytes estimated: two even files
    assert group.layout(100) == OutputLayout(2) and sizing.calibrated(group) is group
    assert sizing.resized(group, [105, 98]) is None  # within 10%: kept
    resized = sizing.resized(group, [80, 80])  # the rows took 160 bytes: one full file and the rest
    assert resized is not None and resized.expected_output_bytes == 160 and resized.layout(100) == OutputLayout(2, 0.6)
    [later] = plan_groups([data(1, "b", size=55) for _ in range(4)], 1, {}, target_size=100)
    assert sizing.calibrated(later).expected_output_bytes == 160  # scaled by what the first group taught
    spread = dataclasses.replace(later, spread=True)
    assert sizing.resized(spread, [10, 300]) is None and sizing.calibrated(spread) is spread
