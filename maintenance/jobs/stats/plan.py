"""What STATS would write: NDV sketches of the wanted columns and a partition statistics
file, for the current snapshot, unless that snapshot already has them.

Statistics belong to one snapshot (the spec's `statistics` and `partition-statistics`
lists): engines use the newest snapshot's, so what a plan made for an older snapshot does
not count. Sketches of fewer columns than wanted are written again for all of them (a
snapshot has one statistics file).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyiceberg.schema import Schema
from pyiceberg.table import Table

from maintenance.errors import UsageError
from maintenance.jobs.spec import PlanInput
from maintenance.jobs.stats.options import StatsOptions

THETA_SKETCH = "apache-datasketches-theta-v1"  # the blob type Iceberg's NDV sketches are stored as


@dataclass
class StatsPlan:
    snapshot_id: int | None
    columns: tuple[str, ...]  # the columns to sketch (empty: the snapshot's sketches cover them)
    partition_stats: bool  # a partition statistics file to write

    @property
    def empty(self) -> bool:
        return not self.columns and not self.partition_stats

    def nothing_to_do(self) -> str:
        if self.snapshot_id is None:
            return "the table has no snapshot: no statistics to compute"
        return f"snapshot {self.snapshot_id} already has the statistics asked for"

    def counters(self, detail: bool = False) -> dict[str, Any]:
        counters: dict[str, Any] = {"stats_columns_planned": len(self.columns), "table_statistics_planned": int(bool(self.columns)),
                                    "partition_statistics_planned": int(self.partition_stats)}
        return {**counters, "stats_columns": list(self.columns)} if detail else counters


def plan(inputs: PlanInput, options: StatsOptions) -> StatsPlan:
    table = inputs.table
    snapshot_id = table.metadata.current_snapshot_id
    if snapshot_id is None:
        return StatsPlan(None, (), False)
    wanted = wanted_columns(table, options)
    ids = {table.schema().find_field(name).field_id for name in wanted}
    sketched: set[int] = set()
    for stats in table.metadata.statistics:
        if stats.snapshot_id == snapshot_id:
            sketched |= {field for blob in stats.blob_metadata if blob.type == THETA_SKETCH for field in blob.fields}
    partitioned = any(spec.fields for spec in table.metadata.partition_specs)
    has_partition_stats = any(p.snapshot_id == snapshot_id for p in table.metadata.partition_statistics)
    return StatsPlan(snapshot_id, () if ids <= sketched else tuple(wanted), options.partition_stats and partitioned and not has_partition_stats)


def wanted_columns(table: Table, options: StatsOptions) -> list[str]:
    """The options' columns; else the identifier fields and the sources of the sort order and
    the partition spec; else every top-level primitive column (Iceberg's own default)."""
    schema = table.schema()
    if options.columns:
        return list(options.columns)
    ids = [*schema.identifier_field_ids, *(f.source_id for f in table.sort_order().fields), *(f.source_id for f in table.spec().fields)]
    names: list[str] = []
    for field_id in ids:
        name = schema.find_column_name(field_id)
        if name is not None and name not in names and _primitive(schema, name):
            names.append(name)
    return names or [f.name for f in schema.fields if f.field_type.is_primitive]


def check_table(table: Table, options: StatsOptions) -> None:
    """Columns that are not in the table, or not primitive, are a usage error."""
    schema = table.schema()
    for name in options.columns:
        try:
            schema.find_field(name)
        except ValueError:
            raise UsageError(f"STATS: no column '{name}' in {table.name()[-1]} (columns: {', '.join(f.name for f in schema.fields)})") from None
        if not _primitive(schema, name):
            raise UsageError(f"STATS: column '{name}' is not of a primitive type; distinct counts are sketched for primitive columns only")


def _primitive(schema: Schema, name: str) -> bool:
    return bool(schema.find_field(name).field_type.is_primitive)
