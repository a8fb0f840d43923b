"""REWRITE's plan on hand-built metadata (`jobs/rewrite/plan.py`): position deletes grouped by
their data files' partitions, with the highest sequence number."""

from __future__ import annotations

from maintenance.jobs.rewrite.plan import plan_rewrite
from tests.support.metadata import data, pos, snapshot


def test_rewrite_groups_by_the_data_files_partition_with_the_highest_sequence_number() -> None:
    a1, b1 = data(1, "a"), data(1, "b")
    many = [pos(s, "a", size=10) for s in (2, 3, 4)]
    cross = pos(5, "a", size=10, referenced=b1.path)  # file-scoped: applies to b1 in another partition
    compact = [pos(2, "c", size=10)]  # one file: nothing to combine
    plan = plan_rewrite(snapshot(a1, b1, *many, cross, *compact), {})
    assert {d.path for d in plan.deletes} == {d.path for d in [*many, cross]}
    by_partition = dict(zip(plan.partitions, plan.sequence_numbers))
    assert by_partition == {(1, ("a",)): 4, (1, ("b",)): 5}
    assert {d.path for d in plan.data} == {a1.path, b1.path}
