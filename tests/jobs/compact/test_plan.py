"""COMPACT's plan on hand-built metadata (`jobs/compact/plan.py`): its candidates, as Iceberg's
`rewrite_data_files` chooses them; no Spark, no files."""

from __future__ import annotations

from typing import Any

from maintenance.jobs.compact.options import CompactOptions
from maintenance.jobs.compact.plan import Layout, plan_compact
from maintenance.table.files import Content, TableFile
from tests.support.metadata import data, pos, snapshot, table_file

BINPACK = Layout("binpack")


def compact(*files: TableFile, **options: Any) -> Any:
    return plan_compact(snapshot(*files), 1, 100, CompactOptions(**options), BINPACK)


def test_compact_takes_partitions_with_enough_small_files() -> None:
    many = [data(1, "a", size=10) for _ in range(5)]
    few = [data(1, "b", size=10) for _ in range(4)]
    right_size = [data(1, "c", size=100) for _ in range(6)]
    plan = compact(*many, *few, *right_size)
    assert {t.path for t in plan.targets} == {f.path for f in many} and plan.partitions == 1
    assert compact(*few, min_input_files=4).partitions == 1


def test_compact_takes_enough_content_an_oversized_file_and_heavily_deleted_files() -> None:
    two_big_enough = [data(1, "a", size=60), data(1, "a", size=60)]  # both below 75, together above the target
    oversized = data(1, "b", size=200)  # above 1.8 x target: split
    deleted = data(1, "c", size=100, records=10)
    dv = table_file(Content.POSITION_DELETES, 2, "c", records=4, referenced=deleted.path)
    plan = compact(*two_big_enough, oversized, deleted, dv)
    assert {t.path for t in plan.targets} == {*(f.path for f in two_big_enough), oversized.path, deleted.path}
    assert {d.path for d in plan.deletes} == {dv.path}
    assert compact(deleted, dv, delete_ratio_threshold=0.5).empty


def test_compact_writes_older_specs_together_into_the_current_one_and_lists_dangling_deletes() -> None:
    old = [data(1, spec=0, size=10), data(1, spec=0, size=10)]
    gone = pos(3, "z")  # no data file in region z: dangling
    plan = compact(*old, gone, min_input_files=2)
    assert {t.path for t in plan.targets} == {f.path for f in old} and gone.path in {d.path for d in plan.deletes}
    assert compact(*[data(1, "a", size=100)] * 1).empty
