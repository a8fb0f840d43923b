"""The file groups' plan (`jobs/file_groups/plan.py`), on hand-built metadata: the budget goes
to the groups readers suffer from most."""

from __future__ import annotations

from maintenance.jobs.merge.options import MergeOptions
from maintenance.jobs.merge.plan import plan_merge
from maintenance.table.reader_cost import DELETE_RECORD_BYTES, OPEN_COST_BYTES
from tests.support.metadata import data, pos, snapshot


def test_the_budget_goes_to_the_groups_readers_suffer_from_most_per_byte_not_the_largest() -> None:
    """Model (`file_groups.plan`): a group's benefit is an open and the entries of every
    delete applying to one of its files, per file it applies to, plus an open per file it
    removes; divided by its input bytes. Region a: 400 bytes under one small delete; region
    b: 100 bytes under three deletes of 50 entries: b first, a left for the next run."""
    big = [data(1, "a", size=100, records=100) for _ in range(4)]
    small = [data(1, "b", size=100, records=100)]
    a_delete, b_deletes = pos(2, "a", records=1), [pos(2, "b", records=50) for _ in range(3)]
    files = snapshot(*big, *small, a_delete, *b_deletes)

    plan = plan_merge(files, output_spec_id=1, options=MergeOptions(max_bytes_per_run=150, max_group_bytes=1000))

    assert [g.partitions for g in plan.groups] == [((1, ("b",)),)] and plan.groups_deferred == 1
    assert plan.reach[b_deletes[0].key] == {small[0].path} and plan.reach[a_delete.key] == {f.path for f in big}
    whole = plan_merge(files, output_spec_id=1, options=MergeOptions(max_group_bytes=1000))
    b_first, a_second = whole.groups
    assert b_first.reader_benefit / b_first.input_bytes > a_second.reader_benefit / a_second.input_bytes
    assert b_first.reader_benefit == 3 * OPEN_COST_BYTES + 150 * DELETE_RECORD_BYTES  # one file, nothing fewer
    assert a_second.reader_benefit == 4 * (OPEN_COST_BYTES + DELETE_RECORD_BYTES) + 3 * OPEN_COST_BYTES  # four files into one
    listed = whole.counters(detail=True)
    assert listed["groups_planned"] == 2 and [g["files"] for g in listed["groups"]] == [[small[0].path], sorted(f.path for f in big)]
    assert [g["expected_output_files"] for g in listed["groups"]] == [1, 1] and listed["groups"][1]["partitions"] == ["region=a"]
