"""`where` projected onto partitions (maintenance/table/row_filter.py), against partition
values Iceberg's own transforms compute (pyiceberg's `transform`)."""

from __future__ import annotations

from datetime import date

import pytest
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform
from pyiceberg.types import DateType, IntegerType, LongType, NestedField, StringType

from maintenance.errors import PredicateError
from maintenance.table.files import Content, TableFile
from maintenance.table.row_filter import partition_matcher

SCHEMA = Schema(NestedField(1, "id", LongType()), NestedField(2, "region", IntegerType()), NestedField(3, "day", DateType()),
                NestedField(4, "v", StringType()))
BY_REGION_DAY = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region"), PartitionField(3, 1001, DayTransform(), "day_day"), spec_id=0)
BY_BUCKET = PartitionSpec(PartitionField(1, 1002, BucketTransform(8), "id_bucket"), spec_id=1)
UNPARTITIONED = PartitionSpec(spec_id=2)
ON_A_DROPPED_COLUMN = PartitionSpec(PartitionField(9, 1003, IdentityTransform(), "gone"), spec_id=3)
SPECS = {s.spec_id: s for s in (BY_REGION_DAY, BY_BUCKET, UNPARTITIONED, ON_A_DROPPED_COLUMN)}


def _file(spec_id: int, *partition: object) -> TableFile:
    return TableFile(path=f"f{spec_id}{partition}", content=Content.DATA, file_format="PARQUET", spec_id=spec_id, partition=tuple(partition),
                     partition_path="", seq=1, file_seq=1, records=1, size=1)


def _day(text: str) -> int:
    return DayTransform().transform(DateType())(date.fromisoformat(text))


def test_identity_and_day_partitions_are_chosen_by_the_projected_predicate() -> None:
    matches = partition_matcher("region IN (1, 2) AND day >= '2026-11-02'", SCHEMA, SPECS)
    assert matches(_file(0, 1, _day("2026-11-02"))) and matches(_file(0, 2, _day("2026-12-01")))
    assert not matches(_file(0, 1, _day("2026-11-01")))  # every row of that day is before the bound
    assert not matches(_file(0, 3, _day("2026-11-05")))


def test_a_bucket_holds_the_key_it_hashes_to_and_no_other() -> None:
    bucket_of_5 = BucketTransform(8).transform(LongType())(5)
    matches = partition_matcher("id = 5", SCHEMA, SPECS)
    assert [b for b in range(8) if matches(_file(1, b))] == [bucket_of_5]


def test_what_a_partition_cannot_rule_out_is_in_scope() -> None:
    on_payload = partition_matcher("v = 'x'", SCHEMA, SPECS)
    assert on_payload(_file(0, 7, 0)) and on_payload(_file(1, 3))  # no partition comes from v
    by_region = partition_matcher("region = 1", SCHEMA, SPECS)
    assert by_region(_file(2)) and by_region(_file(3, "anything"))  # unpartitioned; a spec on a dropped column
    assert partition_matcher(None, SCHEMA, SPECS)(_file(0, 9, 0))


@pytest.mark.parametrize("predicate, words", [("region = = 1", "does not parse"), ("colour = 'red'", "colour"), ("day >= 'soon'", "day >= 'soon'")])
def test_a_predicate_that_does_not_fit_the_table_is_the_users_error(predicate: str, words: str) -> None:
    with pytest.raises(PredicateError, match=words):
        partition_matcher(predicate, SCHEMA, SPECS)
