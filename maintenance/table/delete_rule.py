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
check it against Iceberg's `planFiles()` over generated tables. A pair the superset adds
can hold no matching key, with one exception: floating-point bounds leave NaN out, so
Iceberg's planner may keep a delete holding NaN away from a data file holding NaN; CONVERT
asks Iceberg for its pairs on such keys (`jobs.convert.scan.needs_iceberg_pairs`).

Health uses the rule's scope alone (`DeleteIndex.applied_by_scope`): how many delete files
and entries readers attach to each data file, which is what they pay for.
"""

from __future__ import annotations

import bisect
import itertools
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyiceberg.schema import Schema
from pyiceberg.types import PrimitiveType, UUIDType

from maintenance.errors import IcemaintError
from maintenance.table.files import Content, PartitionKey, SnapshotFiles, TableFile
from maintenance.table.stats import ranges_overlap

if TYPE_CHECKING:
    from pyspark.sql import Column


class DeleteOnDroppedColumnError(IcemaintError):
    """An equality delete names a column the table's current schema no longer has: nothing
    can apply it by the current schema (Iceberg's planner fails on it too), so no job that
    would apply or rewrite it runs."""


def require_equality_columns(schema: Schema, deletes: Iterable[TableFile], table: str) -> None:
    """Every equality field of `deletes` is a column of `schema`; else one clear refusal
    naming the table and the file (CONVERT, MERGE and COMPACT plan through this)."""
    for delete in deletes:
        for field_id in delete.equality_ids:
            try:
                schema.find_field(field_id)
            except ValueError:
                raise DeleteOnDroppedColumnError(
                    f"{table}: the equality delete file {delete.path} names field id {field_id}, which is not in the table's current schema "
                    "(the column was dropped); it cannot be applied or rewritten"
                ) from None


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


@dataclass(frozen=True)
class _KeyFacts:
    """What one file's statistics say about one key column, read once per file and key:
    whether it may hold NULL (optional columns only), whether it holds only NULL, and its
    ordered bounds (None when unknown, or when its type is not worth ordering like Java)."""

    may_hold_null: bool
    only_null: bool
    bounds: tuple[object, object] | None


def _key_facts(file: TableFile, field_ids: tuple[int, ...], schema: Schema) -> tuple[_KeyFacts | None, ...] | None:
    """One `_KeyFacts` per key field (None for a key that is not primitive: nothing to
    compare), or None for all when a key column was dropped (nothing to reason with)."""
    facts: list[_KeyFacts | None] = []
    for field_id in field_ids:
        try:
            field = schema.find_field(field_id)
        except ValueError:
            return None
        if not isinstance(field.field_type, PrimitiveType):
            facts.append(None)
            continue
        facts.append(_KeyFacts(
            may_hold_null=field.optional and file.stats.may_hold_null(field_id),
            only_null=field.optional and file.stats.only_null(field_id),
            # Java orders UUIDs as signed longs: not worth mirroring to prune
            bounds=None if isinstance(field.field_type, UUIDType) else file.stats.bounds(field_id, field.field_type),
        ))
    return tuple(facts)


def _facts_may_match(delete: tuple[_KeyFacts | None, ...] | None, data: tuple[_KeyFacts | None, ...] | None) -> bool:
    """Whether any key of a delete can equal a row of a data file, from their statistics
    (`_key_facts` of each on the delete's keys) alone.

    False only where Iceberg's planner also rules the pair out (its
    `canContainEqDeletesForFile`): a key column where one side holds only NULL and the other
    cannot hold it, or where both sides' bounds are known and do not overlap, and neither
    side may hold NULL on both. So everything it applies stays applied here."""
    if delete is None or data is None:
        return True
    for delete_key, data_key in zip(delete, data, strict=True):
        if delete_key is None or data_key is None:
            continue
        if data_key.may_hold_null and delete_key.may_hold_null:
            continue  # NULL may meet NULL
        if data_key.only_null and not delete_key.may_hold_null:
            return False
        if delete_key.only_null and not data_key.may_hold_null:
            return False
        if data_key.bounds is not None and delete_key.bounds is not None and not ranges_overlap(data_key.bounds, delete_key.bounds):
            return False
    return True


@dataclass(frozen=True)
class AppliedDeletes:
    """What a reader's planner may attach to one data file, by scope and sequence numbers
    (statistics can only lower it): the delete files it opens and the entries it reads."""

    equality_files: int = 0
    equality_records: int = 0
    position_files: int = 0  # v2 position delete files (a deletion vector is counted apart)
    position_records: int = 0


class _BySequence:
    """Delete files of one scope sorted by data sequence number, with running record totals,
    so how many are newer than a data file is two bisections."""

    def __init__(self, files: Iterable[TableFile]) -> None:
        ordered = sorted(files, key=lambda f: f.seq)
        self.seqs = [f.seq for f in ordered]
        self.records = list(itertools.accumulate((f.records for f in ordered), initial=0))

    def newer_than(self, seq: int, *, inclusive: bool) -> tuple[int, int]:
        """(files, records) with a number above `seq` (at or above it with `inclusive`)."""
        start = (bisect.bisect_left if inclusive else bisect.bisect_right)(self.seqs, seq)
        return len(self.seqs) - start, self.records[-1] - self.records[start]


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
        self._by_sequence: dict[object, _BySequence] | None = None  # for applied_by_scope, made on first use
        self._facts: dict[int, tuple[_KeyFacts | None, ...] | None] = {}  # by id() of the delete files held above

    def equality_deletes_for(self, data: TableFile) -> list[TableFile]:
        """Equality deletes that may apply to `data`: exact scope, conservative statistics."""
        found: list[TableFile] = []
        data_facts: dict[tuple[int, ...], tuple[_KeyFacts | None, ...] | None] = {}
        for group in (self._eq_by_partition.get(data.partition_key, []), self._eq_global):
            if not group:
                continue
            start = bisect.bisect_right(self._eq_seqs[id(group)], data.seq)  # strictly newer
            found.extend(d for d in group[start:] if _facts_may_match(self._delete_facts(d), self._data_facts(data, d.equality_ids, data_facts)))
        return found

    def _delete_facts(self, delete: TableFile) -> tuple[_KeyFacts | None, ...] | None:
        """A delete's key facts, read once for every data file it is checked against."""
        key = id(delete)
        if key not in self._facts:
            self._facts[key] = _key_facts(delete, delete.equality_ids, self.files.schema)
        return self._facts[key]

    def _data_facts(self, data: TableFile, field_ids: tuple[int, ...],
                    cache: dict[tuple[int, ...], tuple[_KeyFacts | None, ...] | None]) -> tuple[_KeyFacts | None, ...] | None:
        """A data file's facts on one set of keys, read once per `equality_deletes_for` call."""
        if field_ids not in cache:
            cache[field_ids] = _key_facts(data, field_ids, self.files.schema)
        return cache[field_ids]

    def position_deletes_for(self, data: TableFile) -> list[TableFile]:
        """Position delete files and DVs that apply to `data` (exact)."""
        dvs = [d for d in self._dvs_by_path.get(data.path, []) if d.seq >= data.seq]
        if data.path in self._has_dv:
            return dvs
        candidates = [*self._pos_by_path.get(data.path, []), *self._pos_by_partition.get(data.partition_key, [])]
        return [d for d in candidates if position_scope(d, data)]

    def applied_by_scope(self, data: TableFile) -> AppliedDeletes:
        """How many deletes (and entries) scope and sequence numbers attach to `data`,
        without statistics: what a reader pays for it at most (health and reader cost)."""
        if self._by_sequence is None:
            self._by_sequence = {
                "eq_global": _BySequence(self._eq_global),
                **{("eq", key): _BySequence(group) for key, group in self._eq_by_partition.items()},
                **{("pos", key): _BySequence(group) for key, group in self._pos_by_partition.items()},
            }
        empty = (0, 0)
        eq_files, eq_records = self._by_sequence["eq_global"].newer_than(data.seq, inclusive=False)
        group = self._by_sequence.get(("eq", data.partition_key))
        files, records = group.newer_than(data.seq, inclusive=False) if group is not None else empty
        if data.path in self._has_dv:
            return AppliedDeletes(eq_files + files, eq_records + records)
        group = self._by_sequence.get(("pos", data.partition_key))
        pos_files, pos_records = group.newer_than(data.seq, inclusive=True) if group is not None else empty
        scoped = [d for d in self._pos_by_path.get(data.path, []) if d.seq >= data.seq]
        return AppliedDeletes(eq_files + files, eq_records + records, pos_files + len(scoped), pos_records + sum(d.records for d in scoped))

    def deletes_for(self, data: TableFile) -> list[TableFile]:
        return [*self.equality_deletes_for(data), *self.position_deletes_for(data)]
