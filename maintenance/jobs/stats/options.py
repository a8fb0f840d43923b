"""STATS' options: which columns get NDV sketches, and whether partition statistics are written."""

from __future__ import annotations

from dataclasses import dataclass

from maintenance.jobs.options import FLAG, STRINGS, option


@dataclass(frozen=True)
class StatsOptions:
    columns: tuple[str, ...] = option((), STRINGS, "Columns whose distinct counts are sketched (theta sketches in a Puffin file, as Iceberg's "
                                                   "compute_table_stats writes them); default: the identifier fields and the columns the sort "
                                                   "order and the partition spec are built from, else every top-level primitive column.",
                                      flag="--column", repeatable=True, metavar="COLUMN")
    partition_stats: bool = option(True, FLAG, "Also write a partition statistics file (Iceberg 1.10's compute_partition_stats) on "
                                               "partitioned tables: per partition, its files and rows, which makes planning and partition "
                                               "listing cheap for engines that read it.")
