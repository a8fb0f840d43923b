"""MERGE's plan on hand-built metadata (`jobs/merge/plan.py`): every data file a delete applies
to, and the small ones packed with them; no Spark, no files."""

from __future__ import annotations

from maintenance.jobs.merge.options import MergeOptions
from maintenance.jobs.merge.plan import plan_merge
from tests.support.metadata import data, pos, snapshot


def test_merge_targets_every_file_a_delete_applies_to_and_packs_small_ones() -> None:
    hit, untouched_small, other_region = data(1, "a", size=10), data(1, "a", size=10, ids=(50, 60)), data(1, "b", size=10)
    file_scoped = pos(2, "a", referenced=hit.path)
    partition_scoped = pos(2, "b")
    plan = plan_merge(snapshot(hit, untouched_small, other_region, file_scoped, partition_scoped), output_spec_id=1, small_file_bytes=100)
    assert {t.path for t in plan.targets} == {hit.path, untouched_small.path, other_region.path}
    assert {d.path for d in plan.deletes} == {file_scoped.path, partition_scoped.path}
    scoped = plan_merge(snapshot(hit, other_region, file_scoped, partition_scoped), output_spec_id=1, options=MergeOptions(partitions=("region=b",)))
    assert {t.path for t in scoped.targets} == {other_region.path} and {d.path for d in scoped.deletes} == {partition_scoped.path}
