"""One file group rewritten: read through Iceberg (every delete applied), written toward the target size.

The group's files are read from exactly their planned scan tasks, staged with Iceberg's
`ScanTaskSetManager`, and written back through Iceberg's rewrite coordinator: nothing is
committed by the write; the new files are handed back for the executor's commit. They are
compressed as the table says, or with zstd where it names no codec
(`table.targets.rewrite_parquet_codec`).

- **bin-pack** (no ordering): each read split is sized to become one file near the target
  (see `grouping`), so nothing is shuffled; where whole files are too big to share out
  evenly, rows are dealt out by a round-robin shuffle instead.
- **ordered** (sort, z-order): rows are range-partitioned by the ordering's keys into the
  expected number of files and sorted within each, so every file holds one key range
  (small partitions combined into one group: dealt out whole, by hash of the partition);
  the table's own distribution and ordering are not applied on top (as Iceberg's sort
  rewrite does).
- **full files and the rest** (`OutputLayout` not even: no even count of files keeps them
  within 10% of the target): rows are first cut into `FINE_CUTS_PER_FILE` times as many
  even pieces as files (round robin, or the ordering's key ranges), consecutive pieces are
  then given to each file by its share of the rows, and a second shuffle brings each file's
  pieces to one task (ordered: sorted there). A file's rows are thus a number of pieces,
  within a 16th of a file of its share, and, ordered, one key range.
- A group whose rows go to several partitions (`spread`: small partitions combined, or an
  older spec's files written into the current spec): Iceberg's writer clusters its rows by
  the current partitioning (a hash shuffle, then a local sort by partition), or, when
  ordered, the ordering's keys start with the current partition fields. Either way each
  task meets its partitions one after another and keeps one file open (Iceberg's clustered
  writer, `fanout-enabled=false`): a fanout writer keeps a Parquet writer per partition
  open until the task ends, and 500 combined partitions ran a 1 GiB heap out of memory.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Protocol

from maintenance.jobs.file_groups.grouping import (
    FileGroup,
    OutputLayout,
    max_output_bytes,
    split_size,
)
from maintenance.spark.jvm import JavaObject, java_items, singleton
from maintenance.spark.planned_tasks import GroupTasks
from maintenance.spark.raw_rows import read_tasks, split_size_for
from maintenance.table.targets import SESSION_CODEC_CONF, rewrite_parquet_codec

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

FINE_CUTS_PER_FILE = 16  # pieces per file where files are cut by row count
COARSE_FILE_SHARE = 0.2  # a group whose files are this big next to a split is shuffled to size


class Ordering(Protocol):
    """How rows are ordered within the files a group writes."""

    name: str  # "sort", "zorder": for logs and counters

    def keys(self, frame: DataFrame, group: FileGroup) -> list[Column]:
        """The sort keys for this group's rows (they may depend on its data; for a group
        that is written into another spec, they start with that spec's partition fields)."""
        ...

    def partition_columns(self, group: FileGroup) -> list[Column]:
        """The current spec's partition values of the group's rows, when it is `spread`
        (empty otherwise): what a combined group is distributed by."""
        ...


def rewrite_group(spark: SparkSession, table: JavaObject, group: FileGroup, tasks: GroupTasks, *, target_size: int, output_spec_id: int,
                  ordering: Ordering | None = None) -> list[JavaObject]:
    """Read the tasks (deletes applied) and write them toward the target size; returns the
    new data files, uncommitted. `table`: what the files are read and written through
    (`stream_reads.table_for_file_reads`)."""
    group_id = str(uuid.uuid4())
    cache, manager, coordinator = (singleton(spark, f"org.apache.iceberg.spark.{name}") for name in ("SparkTableCache", "ScanTaskSetManager", "FileRewriteCoordinator"))
    weights = tasks.sizes  # what Iceberg packs by: data plus its deletes
    splits = group.read_splits(target_size)
    split = split_size(weights, splits)
    try:
        cache.add(group_id, table)
        manager.stageTasks(table, group_id, tasks.java)
        reader = spark.read.format("iceberg").option("scan-task-set-id", group_id).option("file-open-cost", "0")
        writer_options = {"rewritten-file-scan-task-set-id": group_id, "output-spec-id": str(output_spec_id)}
        codec = rewrite_parquet_codec(table.properties(), spark.conf.get(SESSION_CODEC_CONF, None))
        if codec is not None:
            writer_options["compression-codec"] = codec
        layout = group.layout(target_size)
        if not layout.even:
            frame = reader.load(group_id)
            keys = ordering.keys(frame, group) if ordering is not None else []
            frame = _cut_by_rows(spark, frame, layout, keys)
            if keys:
                frame = frame.sortWithinPartitions(*keys)
            writer_options.update({"target-file-size-bytes": str(4 * max_output_bytes(target_size)), "distribution-mode": "none",
                                   "use-table-distribution-and-ordering": "false", "fanout-enabled": "true"})
        elif ordering is not None:
            frame = reader.load(group_id)
            keys = ordering.keys(frame, group)
            if group.spread and not group.moves_rows:
                # Small partitions combined, one file each: whole partitions are dealt out by
                # hash. Key ranges would cut partitions in two (more, smaller files) and cost
                # a sampling pass over the rows.
                frame = frame.repartition(splits, *ordering.partition_columns(group))
            else:
                frame = frame.repartitionByRange(splits, *keys)
            frame = frame.sortWithinPartitions(*keys)
            writer_options.update({"target-file-size-bytes": str(_rolling_size(group, split, target_size)), "use-table-distribution-and-ordering": "false",
                                   "fanout-enabled": "false"})
        else:
            coarse = splits > 1 and max(weights) > COARSE_FILE_SHARE * split
            readers = _readers(spark, group, weights, splits)
            if readers > 1:
                # One file to write from much to read: the reading (and every delete applied
                # on the way) is shared out over the cores, and one task writes the file.
                frame = reader.option("split-size", str(split_size_for(weights, readers))).load(group_id).repartition(1)
            else:
                frame = reader.option("split-size", str(sum(weights) + 1 if coarse else split)).load(group_id)
            if coarse and not group.spread:
                frame = frame.repartition(splits)  # whole files cannot be packed evenly: deal rows out
            writer_options.update({
                "target-file-size-bytes": str(_rolling_size(group, split, target_size)),
                "distribution-mode": "hash" if group.spread else "none",
                "fanout-enabled": "false" if group.spread else "true",  # one partition: no sort needed for one open file
            })
        frame.write.format("iceberg").options(**writer_options).mode("append").save(group_id)
        return java_items(coordinator.fetchNewFiles(table, group_id))
    finally:
        cache.remove(group_id)
        manager.removeTasks(table, group_id)
        coordinator.clearRewrite(table, group_id)


def _cut_by_rows(spark: SparkSession, frame: DataFrame, layout: OutputLayout, keys: list[Column]) -> DataFrame:
    """The rows dealt into `layout.files` Spark partitions, one per file, by the layout's
    shares of the rows (module docstring): even pieces (`keys`: key ranges), consecutive
    pieces per file, then one partition per file. The second shuffle is by a key per file
    chosen so that Spark's hash partitioning sends each file's key to a partition of its own."""
    from pyspark.sql import functions as F  # noqa: N812 (Spark's own spelling)

    pieces = FINE_CUTS_PER_FILE * layout.files
    frame = frame.repartitionByRange(pieces, *keys) if keys else frame.repartition(pieces)
    bounds, total = [], 0.0
    for share in layout.shares():
        total += share
        bounds.append(total)
    file_of_piece = [min(next(i for i, bound in enumerate(bounds) if (piece + 0.5) / pieces <= bound + 1e-9), layout.files - 1)
                     for piece in range(pieces)]
    keys_by_file = _partition_keys(spark, layout.files)
    piece_keys = F.array(*(F.lit(keys_by_file[f]).cast("long") for f in file_of_piece))  # the type Spark hashed
    column = "__icemaint_file"
    frame = frame.withColumn(column, F.element_at(piece_keys, F.spark_partition_id() + 1))
    return frame.repartition(layout.files, F.col(column)).drop(column)


def _partition_keys(spark: SparkSession, partitions: int) -> list[int]:
    """For each of `partitions` partitions, a long that Spark's hash partitioning (Murmur3,
    seed 42, as the SQL `hash`) sends there: asked of Spark itself, so it is its rule."""
    rows = spark.range(0, 64 * partitions).selectExpr("id", f"pmod(hash(id), {partitions}) AS partition").collect()
    first: dict[int, int] = {}
    for row in rows:
        first.setdefault(row.partition, row.id)
    if len(first) < partitions:
        raise RuntimeError(f"no key found for every one of {partitions} partitions")
    return [first[p] for p in range(partitions)]


def _readers(spark: SparkSession, group: FileGroup, weights: list[int], splits: int) -> int:
    """How many tasks read a group written by one task (1: the writing task reads it all):
    one file, or, for small files the writer sizes (`rolls`), as many as it rolls over to.
    Sharing the reading pays for its shuffle only when there is much to read
    (`raw_rows.read_tasks`)."""
    if splits != 1 or group.spread or len(weights) < 2:
        return 1
    return read_tasks(spark, weights)


def _rolling_size(group: FileGroup, split: int, target_size: int) -> int:
    """When the writer may start a new file. Parquet's writer measures a page it still
    buffers before compression, so for small targets it rolls over far too early: where each
    read split or range is sized to be one file, rolling is kept out of the way (four times
    the split); a group written into another spec relies on it, at 1.4x the target, and a
    group of small files whose size the writer measures well enough (`rolls`) at the target."""
    if group.rolls:
        return target_size
    return max_output_bytes(target_size) if group.spread else max(max_output_bytes(target_size), 4 * split)
