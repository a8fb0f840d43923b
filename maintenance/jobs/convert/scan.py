"""The Spark side of CONVERT: find the rows each equality delete deletes, write their positions.

Data files are read as they are on disk through Iceberg's own reader, with no delete
applied (`spark.raw_rows`): each row comes with its file, exactly as the table spells it,
and its position, and old files are read with their own types (a key promoted from int to
long still matches). Equality delete files are read the same way. Keys are joined with
NULL-safe equality, restricted by the exact scope rule of `maintenance.table.delete_rule`
(a lower data sequence number, and the same partition unless the delete is global).
Small delete sets are broadcast, large ones shuffled. Nothing but counters reaches the
driver: the executors write the positions, deduplicated and sorted by path and position,
one file per partition of the data files they point at (more only past the target size).

Every file is read once: the delete side is cached when it is counted, and the data
side's rows are counted by an observation on the same pass that writes the positions. On
format 2 the entries of the position delete files folded in (see `plan`) that still apply
join the positions found before they are written, in the same pass.

Why one file per partition keeps what every delete applies to (see `commit.py` for the
sequence number it takes): a position names exactly one row of exactly one data file, so
combining positions found for different equality deletes cannot make any of them apply to
another row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pyiceberg.schema import Schema
from pyiceberg.types import DoubleType, FloatType, PrimitiveType, StructType

from maintenance.errors import SparkJobError, UsageError
from maintenance.jobs.convert.plan import ConvertPlan
from maintenance.spark.errors import java_errors
from maintenance.spark.file_rows import check_complete, observed, row_counts
from maintenance.spark.jvm import JavaObject
from maintenance.spark.position_delete_writer import write_position_deletes
from maintenance.spark.position_entries import live_position_entries
from maintenance.spark.raw_rows import raw_rows
from maintenance.table.delete_rule import equality_scope_column
from maintenance.table.files import PartitionKey, TableFile

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

BROADCAST_DELETE_BYTES = 64 * 1024 * 1024
POSITION_BYTES_ON_DISK = 8  # a sorted (path, position) entry, dictionary-encoded path: for the file size bound


@dataclass
class ScanResult:
    partitions: list[PartitionKey]  # index = the partition id of an output group (the data files' partition)
    written: dict[int, list[str]]  # partition id -> position delete files
    data_rows_read: int
    delete_rows_read: int
    positions: dict[str, set[int]] = field(default_factory=dict)  # format 3: data file path -> positions found
    position_records_read: int = 0  # entries read from the position delete files folded in
    engine: str = "spark"  # what found them: "spark" (this module) or "driver" (`local_scan`)


@dataclass(frozen=True)
class KeyColumn:
    """An equality field as the join sees it: its column path (nested keys live in structs),
    and whether it is floating-point (then joined by its exact Java text, see `join_key`)."""

    path: tuple[str, ...]
    floating: bool = False

    def join_key(self) -> Column:
        """The value the join compares. Iceberg matches equality deletes with Java's
        `compareTo` (its `StructLikeSet`): -0.0 and 0.0 are different keys, every NaN is the
        same key. Spark's join normalises floating-point keys the other way (-0.0 = 0.0), so a
        float or double key is joined by its text instead: Spark casts it with Java's
        `toString`, which gives -0.0 and 0.0 different texts, every NaN the text "NaN", and
        every other value a text of its own. Files written before a float -> double
        promotion are read by Iceberg's reader as double on both sides (a widening that is
        exact), so an old delete still meets an old row."""
        from pyspark.sql import functions as F

        column = F.col(".".join(f"`{part}`" for part in self.path))
        return column.cast("string") if self.floating else column


def key_column(schema: Schema, field_id: int) -> KeyColumn:
    """An equality field of the current schema, checked to be a primitive type."""
    path = _path_to(schema.as_struct(), field_id)
    if path is None:
        raise UsageError(f"equality field id {field_id} is not in the table's current schema")
    leaf = schema.find_field(field_id)
    if not isinstance(leaf.field_type, PrimitiveType):
        raise UsageError(f"CONVERT cannot use the key column {'.'.join(path)} of type {leaf.field_type}")
    return KeyColumn(path, isinstance(leaf.field_type, (FloatType, DoubleType)))


def _path_to(struct: StructType, field_id: int) -> tuple[str, ...] | None:
    for child in struct.fields:
        if child.field_id == field_id:
            return (child.name,)
        if isinstance(child.field_type, StructType):
            below = _path_to(child.field_type, field_id)
            if below is not None:
                return (child.name, *below)
    return None


def find_positions(
    spark: SparkSession,
    table: JavaObject,
    plan: ConvertPlan,
    schema: Schema,
    java_targets: Mapping[str, JavaObject],
    java_deletes: Mapping[str, JavaObject],
    output_dir: str,
    target_size: int,
    *,
    collect: bool = False,
    iceberg_pairs: set[tuple[str, str]] | None = None,
) -> ScanResult:
    """Run the join and write position deletes under `output_dir`, one folder per partition;
    with `collect` (format 3), bring the positions to the driver instead, per data file, for
    its one deletion vector (the driver holds the positions found, about 60 bytes each,
    never the rows read). With `iceberg_pairs` ((data path, equality delete path) as
    Iceberg's planner associates them, see `needs_iceberg_pairs`), a match counts only
    within one of those pairs."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    partitions = plan.partition_ids()

    results: list[DataFrame] = []
    observations: list[tuple[Observation, DataFrame, int]] = []
    cached: list[DataFrame] = []
    delete_rows = 0
    with java_errors("CONVERT scan"), ExitStack() as reads:
        for field_ids, deletes, targets in plan.key_groups():
            paths = {d.path for d in deletes}
            columns = [(f"k{fid}", key_column(schema, fid)) for fid in field_ids]
            data_raw = reads.enter_context(raw_rows(spark, table, [java_targets[t.path] for t in targets]))
            delete_raw = reads.enter_context(raw_rows(spark, table, [java_deletes[d.path] for d in deletes], delete_files=True))
            # The delete side is small and may be broadcast (where observed metrics are not
            # delivered): it is cached, counted, and the join reads the cache.
            removed = _tagged(spark, _keyed(delete_raw, columns, "e"), deletes, partitions, "e", plan).cache()
            cached.append(removed)
            delete_counts = row_counts(removed, "e_seq")
            check_complete("equality delete", delete_counts, sum(d.records for d in deletes))
            delete_rows += delete_counts["rows"]
            if sum(d.size for d in deletes) <= BROADCAST_DELETE_BYTES:
                removed = F.broadcast(removed)
            # Data rows meet the keys first; only the rows that match one are tagged with
            # their file's sequence number and partition (every such row must map to its
            # file, or nothing is committed), then the scope rule filters them.
            data = _keyed(data_raw, columns, "d", with_position=True)
            data_obs = Observation()
            observed_data = data.observe(data_obs, F.count(F.lit(1)).alias("rows"))
            keyed = observed_data.join(removed, _null_safe_equal(observed_data, removed, [name for name, _ in columns]), "inner")
            candidates = _tagged(spark, keyed, targets, partitions, "d", plan)
            match_obs = Observation()
            observed_matches = candidates.observe(match_obs, F.count(F.lit(1)).alias("rows"), F.count("d_seq").alias("mapped"))
            in_scope = equality_scope_column(observed_matches.d_seq, observed_matches.d_part, observed_matches.e_seq, observed_matches.e_part, observed_matches.e_global)
            matched = observed_matches.where(in_scope)
            if iceberg_pairs is not None:
                matched = matched.join(F.broadcast(_pairs_frame(spark, iceberg_pairs, paths)), ["d_path", "e_path"], "left_semi")
            matched = matched.select(F.col("d_part").alias("part"), F.col("d_path").alias("file_path"), F.col("pos"))
            results.append(matched)
            observations.append((data_obs, match_obs, data, candidates, sum(t.records for t in targets)))
        folded = None
        if plan.position_deletes:
            folded = reads.enter_context(live_position_entries(spark, table, plan.snapshot_id, plan.position_deletes, plan.position_data, partitions))
        if folded is not None:
            results.append(folded.frame.select(F.col("part"), F.col("file_path"), F.col("pos")))

        if not results:
            return ScanResult(list(partitions), {}, 0, delete_rows)
        union = results[0]
        for more in results[1:]:
            union = union.unionByName(more)
        written: dict[str, list[str]] = {}
        positions: dict[str, set[int]] = {}
        if collect:
            by_file = union.groupBy("file_path").agg(F.collect_set("pos").alias("positions"))
            for row in by_file.collect():  # one action, so the observations below are delivered
                positions[row.file_path] = set(row.positions)
        else:
            records_per_file = max(1, target_size // POSITION_BYTES_ON_DISK)
            written = write_position_deletes(union, table.io(), "part", output_dir, max_records_per_file=records_per_file, deduplicate=True)

        data_rows = 0
        for data_obs, match_obs, data, candidates, data_expected in observations:
            rows = observed(data_obs, lambda frame=data: {"rows": frame.count()})["rows"]
            check_complete("data", {"rows": rows, "mapped": rows}, data_expected)
            matches = observed(match_obs, lambda frame=candidates: row_counts(frame, "d_seq"))
            if matches["mapped"] != matches["rows"]:
                raise SparkJobError(f"{matches['rows'] - matches['mapped']} data rows matching an equality delete did not map to their table file; "
                                    "nothing was committed")
            data_rows += rows
        position_records = folded.records_read() if folded is not None else 0
    for frame in cached:
        frame.unpersist()
    return ScanResult(list(partitions), {int(part): files for part, files in written.items()}, data_rows, delete_rows, positions, position_records)


def _keyed(raw: DataFrame, columns: Sequence[tuple[str, KeyColumn]], prefix: str, *, with_position: bool = False) -> DataFrame:
    """The join keys of raw rows (prefixed), their file (`<prefix>_path`) and, for data rows, `pos`."""
    from pyspark.sql import functions as F

    selected = [key.join_key().alias(f"{prefix}_{name}") for name, key in columns]
    selected.append(F.col("_file").alias(f"{prefix}_path"))
    if with_position:
        selected.append(F.col("_pos").alias("pos"))
    return raw.select(*selected)


def _tagged(spark: SparkSession, rows: DataFrame, files: Sequence[TableFile], partitions: dict[PartitionKey, int], prefix: str,
            plan: ConvertPlan) -> DataFrame:
    """Rows with their file's attributes (`<prefix>_seq`, `_part`, `_global`), joined on
    `<prefix>_path`; a row whose file is not among `files` gets NULL attributes, which the
    row counts catch."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    attributes = spark.createDataFrame(
        [(f.path, f.seq, partitions[f.partition_key], f.path in plan.global_deletes) for f in files],
        T.StructType([
            T.StructField(f"{prefix}_path", T.StringType()), T.StructField(f"{prefix}_seq", T.LongType()),
            T.StructField(f"{prefix}_part", T.IntegerType()), T.StructField(f"{prefix}_global", T.BooleanType()),
        ]),
    )
    return rows.join(F.broadcast(attributes), f"{prefix}_path", "left")


def needs_iceberg_pairs(schema: Schema, deletes: Sequence[TableFile]) -> bool:
    """Whether matches must be restricted to Iceberg's own pairs: with a floating-point key.

    The scope rule gives a superset of the pairs Iceberg's planner makes, and for every
    other key type the pairs it adds cannot hold a match (Iceberg rules a pair out by
    statistics only where no key can be equal). Floating-point bounds leave NaN out, and
    Iceberg's planner compares the bounds alone: an equality delete holding NaN does not
    reach a data file holding NaN whose other values lie outside the delete's bounds, so
    readers keep seeing that row, and so must CONVERT."""
    return any(key_column(schema, field_id).floating for delete in deletes for field_id in delete.equality_ids)


def _pairs_frame(spark: SparkSession, pairs: set[tuple[str, str]], delete_paths: set[str]) -> DataFrame:
    from pyspark.sql import types as T

    rows = [(data, delete) for data, delete in pairs if delete in delete_paths]
    return spark.createDataFrame(rows, T.StructType([T.StructField("d_path", T.StringType()), T.StructField("e_path", T.StringType())]))


def _null_safe_equal(data: DataFrame, removed: DataFrame, keys: Sequence[str]) -> Column:
    condition = None
    for key in keys:
        term = data[f"d_{key}"].eqNullSafe(removed[f"e_{key}"])
        condition = term if condition is None else condition & term
    if condition is None:
        raise SparkJobError("an equality delete without equality fields cannot be converted")
    return condition

