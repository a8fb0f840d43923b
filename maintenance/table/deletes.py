"""Which delete file applies to which data file: the one rule every job and health use.

From the spec ("Scan Planning") and Iceberg 1.10's `DeleteFileIndex`, which readers use:

- An **equality delete** applies to a data file whose data sequence number is strictly
  lower than its own, in its partition (same spec id and partition values), or in every
  partition of every spec when its own spec is unpartitioned (no fields, or only `void`
  ones).
- A **position delete** (a v2 file or a v3 deletion vector) applies to a data file whose
  data sequence number is lower or equal. A file-scoped one (its `referenced_data_file`
  set, or its `file_path` lower and upper bounds equal) applies to that one path, whatever
  the partition; any other v2 file applies to its own spec id and partition only (an
  unpartitioned spec's position deletes are not global). Where a data file has a deletion
  vector, no v2 position delete file applies to it any more.

These scope and sequence rules are exact: CONVERT and REWRITE rewrite deletes by them, and
a rule that reached further would delete rows readers see. Jobs that apply the rule row by
row in Spark (CONVERT's key join, the position entries CONVERT and REWRITE carry over) take
it from here too, as column expressions (`equality_scope_column`, `position_scope_column`),
so the rule is written once in each form, side by side. Column statistics may then rule
an equality delete out for a data file: only where Iceberg's own planner would too (never
on missing statistics, never on a column both sides may hold NULL in, never on bounds it
cannot order the way Java does), so the result is always a superset of Iceberg's. Tests
check it against Iceberg's `planFiles()` over generated tables.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING

from pyiceberg.schema import Schema
from pyiceberg.types import PrimitiveType, UUIDType

from maintenance.table.files import Content, PartitionKey, SnapshotFiles, TableFile
from maintenance.table.stats import ranges_overlap

if TYPE_CHECKING:
    from pyspark.sql import Column


def equality_scope(delete: TableFile, data: TableFile, global_delete: bool) -> bool:
    """Sequence number and partition scope of an equality delete (exact)."""
    return delete.seq > data.seq and (global_delete or delete.partition_key == data.partition_key)


def position_scope(delete: TableFile, data: TableFile) -> bool:
    """Sequence number and partition or path scope of a position delete or DV (exact; the
    DV-replaces-v2 rule is the index's, as it needs the table's other files)."""
    if delete.seq < data.seq:
        return False
    if delete.referenced_data_file is not None:
        return delete.referenced_data_file == data.path
    return delete.partition_key == data.partition_key


def equality_scope_column(data_seq: Column, data_part: Column, delete_seq: Column, delete_part: Column, delete_global: Column) -> Column:
    """`equality_scope` as a Spark column: files stand for their data sequence number and a
    partition id (one id per partition key) and the delete for whether its spec is global."""
    return (data_seq < delete_seq) & (delete_global | (data_part == delete_part))


def position_scope_column(data_path: Column, data_seq: Column, data_part: Column, delete_seq: Column, delete_part: Column, delete_ref: Column) -> Column:
    """`position_scope` as a Spark column (`delete_ref`: the delete's referenced data file, or
    NULL for a partition-scoped one; partition ids as in `equality_scope_column`)."""
    from pyspark.sql import functions as F

    in_scope = F.when(delete_ref.isNotNull(), delete_ref == data_path).otherwise(delete_part == data_part)
    return (data_seq <= delete_seq) & in_scope


def equality_stats_may_match(delete: TableFile, data: TableFile, schema: Schema) -> bool:
    """Whether any key of `delete` can equal a row of `data`, from statistics alone.

    False only where Iceberg's planner also rules the pair out (its
    `canContainEqDeletesForFile`), so everything it applies stays applied here."""
    for field_id in delete.equality_ids:
        try:
            field = schema.find_field(field_id)
        except ValueError:
            return True  # a dropped key column: nothing to reason with
        if not isinstance(field.field_type, PrimitiveType):
            continue
        data_nulls = field.optional and data.stats.may_hold_null(field_id)
        delete_nulls = field.optional and delete.stats.may_hold_null(field_id)
        if data_nulls and delete_nulls:
            continue  # NULL may meet NULL
        if field.optional and data.stats.only_null(field_id) and not delete_nulls:
            return False
        if field.optional and delete.stats.only_null(field_id) and not data_nulls:
            return False
        if isinstance(field.field_type, UUIDType):
            continue  # Java orders UUIDs as signed longs: not worth mirroring to prune
        data_range = data.stats.bounds(field_id, field.field_type)
        delete_range = delete.stats.bounds(field_id, field.field_type)
        if data_range is not None and delete_range is not None and not ranges_overlap(data_range, delete_range):
            return False
    return True


class DeleteIndex:
    """The rule over one snapshot's files: which deletes may apply to each data file."""

    def __init__(self, files: SnapshotFiles, deletes: Iterable[TableFile] | None = None) -> None:
        """`deletes` narrows the index to some of the snapshot's delete files (a job's plan)."""
        self.files = files
        self._eq_by_partition: dict[PartitionKey, list[TableFile]] = defaultdict(list)
        self._eq_global: list[TableFile] = []
        self._pos_by_partition: dict[PartitionKey, list[TableFile]] = defaultdict(list)
        self._pos_by_path: dict[str, list[TableFile]] = defaultdict(list)
        self._dvs_by_path: dict[str, list[TableFile]] = defaultdict(list)
        for delete in files.deletes if deletes is None else deletes:
            if delete.content == Content.EQUALITY_DELETES:
                (self._eq_global if files.is_global(delete.spec_id) else self._eq_by_partition[delete.partition_key]).append(delete)
            elif delete.is_dv:
                self._dvs_by_path[delete.referenced_data_file or ""].append(delete)
            elif delete.referenced_data_file is not None:
                self._pos_by_path[delete.referenced_data_file].append(delete)
            else:
                self._pos_by_partition[delete.partition_key].append(delete)
        # Whether a data file has a DV decides whether v2 files apply: always from the whole snapshot.
        self._has_dv = {f.referenced_data_file for f in files.deletion_vectors}
        for group in (self._eq_global, *self._eq_by_partition.values()):
            group.sort(key=lambda f: f.seq)
        self._eq_seqs = {id(group): [f.seq for f in group] for group in (self._eq_global, *self._eq_by_partition.values())}

    def equality_deletes_for(self, data: TableFile) -> list[TableFile]:
        """Equality deletes that may apply to `data`: exact scope, conservative statistics."""
        found = []
        for group in (self._eq_by_partition.get(data.partition_key, []), self._eq_global):
            if not group:
                continue
            start = bisect.bisect_right(self._eq_seqs[id(group)], data.seq)  # strictly newer
            found.extend(d for d in group[start:] if equality_stats_may_match(d, data, self.files.schema))
        return found

    def position_deletes_for(self, data: TableFile) -> list[TableFile]:
        """Position delete files and DVs that apply to `data` (exact)."""
        dvs = [d for d in self._dvs_by_path.get(data.path, []) if d.seq >= data.seq]
        if data.path in self._has_dv:
            return dvs
        candidates = [*self._pos_by_path.get(data.path, []), *self._pos_by_partition.get(data.partition_key, [])]
        return [d for d in candidates if position_scope(d, data)]

    def deletes_for(self, data: TableFile) -> list[TableFile]:
        return [*self.equality_deletes_for(data), *self.position_deletes_for(data)]
