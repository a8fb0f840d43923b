"""COMPACT's options: which files are worth rewriting, how rows are ordered, and how its file groups run."""

from __future__ import annotations

from dataclasses import dataclass

from maintenance.jobs.file_groups.options import GroupOptions
from maintenance.jobs.options import (
    FLAG,
    FRACTION,
    INTEGER_AT_LEAST_1,
    SIZE,
    STRINGS,
    Choice,
    Ratio,
    option,
    partitions_option,
    where_option,
)

STRATEGIES = ("auto", "binpack", "sort", "zorder")


@dataclass(frozen=True)
class CompactOptions(GroupOptions):
    partitions: tuple[str, ...] = partitions_option()
    where: str | None = where_option()
    strategy: str = option("auto", Choice("binpack|sort|zorder|auto", STRATEGIES),
                           "How rows are laid out: binpack (as they are), sort (the table's sort order), zorder (zorder_columns); "
                           "auto: zorder when zorder_columns are given, else sort when the table has a sort order, else binpack.")
    zorder_columns: tuple[str, ...] = option((), STRINGS, "The columns a zorder strategy interleaves (2 to 4 work best).", flag="--zorder-column",
                                             repeatable=True, metavar="COLUMN")
    target_file_size: int | None = option(None, SIZE, "Bytes per written file; default the table's write.target-file-size-bytes (512MiB).",
                                          iceberg="target-file-size-bytes")
    min_file_size_ratio: float = option(0.75, FRACTION, "Files below this share of the target size are rewritten.")
    max_file_size_ratio: float = option(1.8, Ratio("number > 1", above=1.0), "Files above this multiple of the target size are rewritten (split).")
    min_input_files: int = option(5, INTEGER_AT_LEAST_1, "A partition is rewritten once it has this many files worth rewriting "
                                                         "(or when together they exceed the target size).", iceberg="min-input-files")
    rewrite_all: bool = option(False, FLAG, "Rewrite every data file in scope, whatever its size, in every partition that has one.",
                               iceberg="rewrite-all")
    delete_ratio_threshold: float = option(0.3, FRACTION, "A data file whose rows are deleted at least this much by deletes scoped to it "
                                                          "(deletion vectors, file-scoped position deletes) is rewritten.", iceberg="delete-ratio-threshold")
