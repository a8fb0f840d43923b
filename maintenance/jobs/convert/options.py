"""CONVERT's options."""

from __future__ import annotations

from dataclasses import dataclass

from maintenance.jobs.options import INTEGER_AT_LEAST_1, SIZE, option, partitions_option

DEFAULT_LOCAL_MAX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class ConvertOptions:
    partitions: tuple[str, ...] = partitions_option()
    max_delete_files: int | None = option(None, INTEGER_AT_LEAST_1, "At most this many equality delete files per run, oldest first; the rest waits for the next run.")
    local_max_bytes: int = option(DEFAULT_LOCAL_MAX_BYTES, SIZE,
                                  "A conversion that reads at most this many bytes (the key columns of the data files, the delete files) runs in "
                                  "the driver without a Spark job; a bigger one runs on Spark.")
