"""CONVERT's options."""

from __future__ import annotations

from dataclasses import dataclass

from maintenance.jobs.options import INTEGER_AT_LEAST_1, option, partitions_option


@dataclass(frozen=True)
class ConvertOptions:
    partitions: tuple[str, ...] = partitions_option()
    max_delete_files: int | None = option(None, INTEGER_AT_LEAST_1, "At most this many equality delete files per run, oldest first; the rest waits for the next run.")
