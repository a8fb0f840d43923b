"""CONVERT's plan on hand-built metadata (`jobs/convert/plan.py`): which data files an equality
delete reaches, by scope, sequence numbers and known bounds; no Spark, no files."""

from __future__ import annotations

from maintenance.jobs.convert.plan import plan_convert
from tests.support.metadata import data, eq, snapshot


def test_convert_targets_follow_scope_sequence_and_known_bounds() -> None:
    older, same_commit, other_region = data(1, "a", ids=(0, 9)), data(3, "a", ids=(0, 9)), data(1, "b", ids=(0, 9))
    far = data(1, "a", ids=(100, 200))
    counts_only = data(1, "a", nulls=0)  # metrics mode counts: no bounds, so no pruning
    delete = eq(3, "a", ids=(5, 5))
    plan = plan_convert(snapshot(older, same_commit, other_region, far, counts_only, delete))
    assert {t.path for t in plan.targets} == {older.path, counts_only.path}
    assert plan.applies_to[older.path] == [delete.path]


def test_a_global_delete_reaches_every_partition_and_needs_the_whole_table() -> None:
    a, b = data(1, "a"), data(1, "b")
    delete = eq(2, nulls=None)  # unpartitioned spec: global
    assert {t.path for t in plan_convert(snapshot(a, b, delete)).targets} == {a.path, b.path}
    assert plan_convert(snapshot(a, b, delete), partitions=("region=a",)).empty


def test_null_keys_keep_files_that_hold_nulls() -> None:
    only_nulls = eq(2, "a", nulls=10, records=10)
    no_nulls, some_nulls = data(1, "a", ids=(0, 9), nulls=0), data(1, "a", ids=(0, 9), nulls=3)
    plan = plan_convert(snapshot(no_nulls, some_nulls, only_nulls))
    assert {t.path for t in plan.targets} == {some_nulls.path}


def test_max_delete_files_takes_the_oldest_first() -> None:
    first, second, third = eq(4, "a"), eq(2, "a"), eq(3, "a")
    plan = plan_convert(snapshot(data(1, "a"), first, second, third), max_delete_files=2)
    assert [d.path for d in plan.deletes] == [second.path, third.path]
