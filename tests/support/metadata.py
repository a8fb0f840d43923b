"""Hand-built metadata for the pure planners' tests: a snapshot's files with the statistics
and sequence numbers a test gives them, no Spark, no files."""

from __future__ import annotations

import struct
from typing import Any

from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

from maintenance.table.files import Content, SnapshotFiles, TableFile
from maintenance.table.stats import ColumnStats

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "region", StringType(), required=False))
UNPARTITIONED = PartitionSpec(spec_id=0)
BY_REGION = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="region"), spec_id=1)
_names = iter(range(1_000_000))


def fresh_name() -> int:
    """A number no other hand-built file has used."""
    return next(_names)


def long_bound(value: int) -> bytes:
    return struct.pack("<q", value)


def table_file(content: Content, seq: int, region: str | None = None, *, size: int = 1000, records: int = 10, ids: tuple[int, int] | None = None,
               nulls: int | None = 0, equality_ids: tuple[int, ...] = (), referenced: str | None = None, spec: int | None = None) -> TableFile:
    stats = ColumnStats(
        value_counts={1: records} if nulls is not None else {},
        null_counts={1: nulls} if nulls is not None else {},
        lower={1: long_bound(ids[0])} if ids else {},
        upper={1: long_bound(ids[1])} if ids else {},
    )
    spec_id = spec if spec is not None else (1 if region is not None else 0)
    return TableFile(
        path=f"/t/{content.name.lower()}-{fresh_name()}.parquet", content=content, file_format="PARQUET", spec_id=spec_id,
        partition=(region,) if region is not None else (), partition_path=f"region={region}" if region is not None else "",
        seq=seq, file_seq=seq, records=records, size=size, stats=stats, equality_ids=equality_ids, referenced_data_file=referenced,
    )


def data(seq: int, region: str | None = None, **kw: Any) -> TableFile:
    return table_file(Content.DATA, seq, region, **kw)


def eq(seq: int, region: str | None = None, **kw: Any) -> TableFile:
    return table_file(Content.EQUALITY_DELETES, seq, region, equality_ids=(1,), **kw)


def pos(seq: int, region: str | None = None, **kw: Any) -> TableFile:
    return table_file(Content.POSITION_DELETES, seq, region, **kw)


def snapshot(*files: TableFile, seq: int = 10) -> SnapshotFiles:
    return SnapshotFiles("uuid", 1, seq, 2, SCHEMA, {0: UNPARTITIONED, 1: BY_REGION}, list(files))
