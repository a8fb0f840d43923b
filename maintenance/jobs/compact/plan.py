"""COMPACT planning from metadata: which data files are worth rewriting, and in which order rows go.

Iceberg's own rules for `rewrite_data_files` (its `BinPackRewriteFilePlanner`), from the
snapshot's live files:

- a data file is a **candidate** when it is outside the size range (below
  `min_file_size_ratio` x target or above `max_file_size_ratio` x target), or when deletes
  scoped to it alone (deletion vectors, file-scoped position deletes) delete at least
  `delete_ratio_threshold` of its rows; partition-scoped deletes are not attributed to one file;
- a partition's candidates are rewritten when there are at least `min_input_files` of
  them, when together (two or more) they exceed the target size, when one alone exceeds the
  maximum (it is split), or when one of them qualifies by its deletes;
- files of another partition spec than the output one are taken together as one
  "partition" (their rows belong to many partitions of the output spec), and written into
  it; the output spec is the current one unless `output_spec_id` names another;
- `rewrite_all` (Iceberg's `rewrite-all`) makes every data file in scope a candidate and
  every partition with one worth rewriting, whatever the sizes.

So a table whose partitions each hold one file near the target has nothing to do, and
the next plan after a COMPACT says so. Deletes are applied on the way (the rewrite reads
through Iceberg's scan tasks); a delete file whose every data file is rewritten goes in
the same commit, dangling ones (applying to no live file) with the first commit.

The layout: `binpack` keeps rows as they are; `sort` orders by the table's sort order;
`zorder` interleaves the bits of `zorder_columns` (see `ordering`); `auto` z-orders when
`zorder_columns` are given, else sorts when the table has a sort order, else bin-packs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    StringType,
    TimestampType,
    TimestamptzType,
)

from maintenance.errors import IcemaintError, UsageError
from maintenance.jobs.compact.options import CompactOptions
from maintenance.jobs.file_groups.deferral import HotPartitions, hot_partitions
from maintenance.jobs.file_groups.deletes import applied_deletes
from maintenance.jobs.file_groups.options import output_spec
from maintenance.jobs.file_groups.plan import RewritePlan
from maintenance.jobs.options import SIZE
from maintenance.jobs.spec import PlanInput
from maintenance.table.delete_rule import DeleteIndex, require_equality_columns
from maintenance.table.files import PartitionKey, SnapshotFiles, TableFile
from maintenance.table.row_filter import check_where, partition_matcher, scope_words
from maintenance.table.targets import PAGE_ROW_LIMIT_DEFAULT, data_file_target, parquet_page_row_limit

ZORDER_TYPES = (IntegerType, LongType, FloatType, DoubleType, DecimalType, DateType, TimestampType, TimestamptzType, StringType, BinaryType,
                BooleanType)


class LayoutError(IcemaintError):
    """The options ask for a layout the table cannot take (no sort order, an unknown or
    unorderable z-order column): the table's problem in a policy run, a usage error on the
    command line (`check_table`)."""


@dataclass(frozen=True)
class SortKey:
    """One field of a sort order, by column name (nested names dotted) and Iceberg transform."""

    column: str
    transform: str = "identity"  # Iceberg's spelling: identity, bucket[16], truncate[4], year, month, day, hour
    descending: bool = False
    nulls_first: bool = True


@dataclass(frozen=True)
class Layout:
    """How the rewrite orders rows; `keys` empty for binpack."""

    strategy: str  # binpack, sort, zorder
    keys: tuple[SortKey, ...] = ()
    zorder_types: tuple[str, ...] = ()  # for zorder: each column's type, as `ordering` reads values of it
    partition_keys: tuple[SortKey, ...] = ()  # the current spec's fields: rows of older specs are clustered by them first


@dataclass
class CompactPlan(RewritePlan):
    """The data files worth rewriting (`targets`); `deletes` are those that may apply to one
    of them, or to nothing live (dropped once every data file they reach is rewritten)."""

    layout: Layout = field(default_factory=lambda: Layout("binpack"))
    options: CompactOptions = field(default_factory=CompactOptions)

    @property
    def partitions(self) -> int:
        """Partitions with targets (as candidates are weighed: `_candidate_key`)."""
        return len({_candidate_key(t, self.output_spec_id) for t in self.targets})

    @property
    def empty(self) -> bool:
        return not self.targets

    def nothing_to_do(self) -> str:
        o, target = self.options, SIZE.show(self.target_size)
        where = scope_words(o.partitions, o.where, "of")
        if o.rewrite_all:
            return f"no partition{where} has data files"
        return (f"no partition{where} has data files outside {o.min_file_size_ratio:g}-{o.max_file_size_ratio:g} x the {target} target "
                f"in a number worth rewriting (at least {o.min_input_files}, or more than the target together), "
                f"nor one with at least {o.delete_ratio_threshold:g} of its rows deleted{self.deferred_words()}")

    def job_counters(self, detail: bool) -> dict[str, Any]:
        counters: dict[str, Any] = {"data_files_planned": len(self.targets), "partitions_planned": self.partitions,
                                    "delete_files_planned": len(self.deletes)}
        if detail:
            counters["strategy"] = self.layout.strategy
        return counters


def plan(inputs: PlanInput, options: CompactOptions) -> CompactPlan:
    table = inputs.table
    target = options.target_file_size or data_file_target(table.properties)
    return plan_compact(inputs.files, output_spec(table, options).spec_id, target, options, layout(table, options),
                        page_row_limit=parquet_page_row_limit(table.properties),
                        check=lambda deletes: require_equality_columns(table.schema(), deletes, str(inputs.ref)),
                        hot=lambda: hot_partitions(table, options, now_ms=inputs.now_ms))


def plan_compact(files: SnapshotFiles, output_spec_id: int, target_size: int, options: CompactOptions, chosen_layout: Layout, *,
                 page_row_limit: int = PAGE_ROW_LIMIT_DEFAULT, check: Callable[[list[TableFile]], None] | None = None,
                 hot: Callable[[], HotPartitions | None] | None = None) -> CompactPlan:
    """The candidates worth rewriting, the deletes that may go with them, and the groups a
    run rewrites (`RewritePlan.hold_groups`); `check` refuses deletes the run could not apply."""
    min_size, max_size = options.min_file_size_ratio * target_size, options.max_file_size_ratio * target_size
    wanted = set(options.partitions)
    matches = partition_matcher(options.where, files.schema, files.specs)
    scoped_deletes = _file_scoped_delete_records(files)
    by_partition: dict[PartitionKey, list[TableFile]] = defaultdict(list)
    for data in files.data:
        if (wanted and data.partition_path not in wanted) or not matches(data):
            continue
        deleted = scoped_deletes.get(data.path, 0)
        too_deleted = bool(data.records) and min(deleted, data.records) / data.records >= options.delete_ratio_threshold
        if options.rewrite_all or data.size < min_size or data.size > max_size or too_deleted:
            by_partition[_candidate_key(data, output_spec_id)].append(data)
    targets: list[TableFile] = []
    for candidates in by_partition.values():
        if _worth_rewriting(candidates, target_size, max_size, options, scoped_deletes):
            targets.extend(candidates)
    targets.sort(key=lambda f: (f.spec_id, str(f.partition), f.path))
    applied = applied_deletes(files, DeleteIndex(files)) if targets else {}
    deletes = _deletes_reaching(files, targets, applied)
    if check is not None:
        check(deletes)
    compact_plan = CompactPlan(
        snapshot_id=files.snapshot_id,
        sequence_number=files.sequence_number,
        output_spec_id=output_spec_id,
        target_size=target_size,
        page_row_limit=page_row_limit,
        targets=targets,
        deletes=deletes,
        layout=chosen_layout,
        options=options,
    )
    compact_plan.hold_groups(files, applied, hot)
    return compact_plan


def _candidate_key(data: TableFile, output_spec_id: int) -> PartitionKey:
    """Where a candidate is weighed: its partition, or one key for all files of older specs (written together)."""
    return data.partition_key if data.spec_id == output_spec_id else (-1, ())


def _worth_rewriting(candidates: Sequence[TableFile], target: int, max_size: float, options: CompactOptions, scoped_deletes: dict[str, int]) -> bool:
    if options.rewrite_all:
        return True
    total = sum(f.size for f in candidates)
    many = len(candidates) > 1 and len(candidates) >= options.min_input_files
    enough_content = len(candidates) > 1 and total > target
    too_much_content = total > max_size
    deleted = any(f.records and min(scoped_deletes.get(f.path, 0), f.records) / f.records >= options.delete_ratio_threshold for f in candidates)
    return many or enough_content or too_much_content or deleted


def _file_scoped_delete_records(files: SnapshotFiles) -> dict[str, int]:
    """Per data file, the rows deleted by deletes that name it alone (DVs, file-scoped v2
    files): an exact attribution; partition-scoped position deletes are not counted."""
    counts: dict[str, int] = defaultdict(int)
    for delete in files.position_deletes + files.deletion_vectors:
        if delete.referenced_data_file is not None:
            counts[delete.referenced_data_file] += delete.records
    return counts


def _deletes_reaching(files: SnapshotFiles, targets: Sequence[TableFile], applied: dict[str, list[TableFile]]) -> list[TableFile]:
    """The delete files a rewrite of `targets` may drop: those that may apply to a target
    (the engine drops one only once every data file it reaches is rewritten), and the
    dangling ones, which apply to nothing live (`applied`: data path -> deletes applying)."""
    if not targets:
        return []
    target_paths = {t.path for t in targets}
    reaching: dict[str, TableFile] = {}
    applying: set[str] = set()
    for path, deletes in applied.items():
        for delete in deletes:
            applying.add(delete.key)
            if path in target_paths:
                reaching.setdefault(delete.key, delete)
    dangling = [d for d in files.deletes if d.key not in applying]
    return sorted([*reaching.values(), *dangling], key=lambda d: d.key)


def check_table(table: Table, options: CompactOptions) -> None:
    """Before a command-line run takes its lease: the layout and `where` fit the table, or exit 2."""
    check_where(options.where, table.schema())
    try:
        layout(table, options)
    except LayoutError as exc:
        raise UsageError(str(exc)) from None


def layout(table: Table, options: CompactOptions) -> Layout:
    """The row layout the options ask for, checked against the table (a LayoutError if unfit)."""
    schema = table.schema()
    partition_keys = tuple(
        SortKey(schema.find_column_name(f.source_id) or "", str(f.transform)) for f in output_spec(table, options).fields if str(f.transform) != "void"
    )
    sort_order = table.sort_order()
    strategy = options.strategy
    if strategy == "auto":
        strategy = "zorder" if options.zorder_columns else "sort" if sort_order.fields else "binpack"
    if strategy != "zorder" and options.zorder_columns:
        raise LayoutError(f"zorder_columns is set but the strategy is {strategy}")
    if strategy == "binpack":
        return Layout("binpack", partition_keys=partition_keys)
    if strategy == "sort":
        if not sort_order.fields:
            raise LayoutError("COMPACT strategy sort needs a table sort order (ALTER TABLE ... WRITE ORDERED BY ...); or use binpack or zorder")
        keys = tuple(
            SortKey(schema.find_column_name(f.source_id) or "", str(f.transform), f.direction.name == "DESC", f.null_order.name == "NULLS_FIRST")
            for f in sort_order.fields
        )
        return Layout("sort", keys, partition_keys=partition_keys)
    columns = options.zorder_columns
    if not columns:
        raise LayoutError("COMPACT strategy zorder needs zorder_columns (--zorder-column COLUMN, repeatable)")
    types = tuple(_zorder_type(schema, column) for column in columns)
    return Layout("zorder", tuple(SortKey(c) for c in columns), types, partition_keys)


def _zorder_type(schema: Schema, column: str) -> str:
    try:
        field_type = schema.find_type(column)
    except ValueError:
        raise LayoutError(f"zorder column '{column}' is not a column of the table") from None
    if not isinstance(field_type, ZORDER_TYPES):
        raise LayoutError(f"zorder column '{column}' is of type {field_type}; z-order takes numbers, dates, timestamps, strings, binary and booleans")
    return type(field_type).__name__.removesuffix("Type").lower()
