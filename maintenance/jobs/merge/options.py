"""MERGE's options: the partitions to work on, and how its file groups run."""

from __future__ import annotations

from dataclasses import dataclass

from maintenance.jobs.file_groups.options import GroupOptions
from maintenance.jobs.options import partitions_option, where_option


@dataclass(frozen=True)
class MergeOptions(GroupOptions):
    partitions: tuple[str, ...] = partitions_option()
    where: str | None = where_option()
