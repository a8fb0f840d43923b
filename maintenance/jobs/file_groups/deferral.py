"""Hot partitions wait: a rewrite leaves out the partitions writers are deleting from right now.

The rebase (`rebase.py`) keeps a rewrite from failing because of a writer; this keeps the
writer from failing because of a rewrite. Iceberg fails a merge-on-read statement whose
data files a commit replaced while it ran (`table/writer_activity.py`), and nothing in the
table says which statements are in flight. What the table does say is how often writers
committed deletes into each partition lately: a partition with at least
`defer_hot_commits` such commits within `defer_hot_window` is *hot*, and a run leaves its
files out (they stay exactly as they are; the next run looks again).

A hot partition waits at most `defer_hot_at_most`, counted from when the oldest of its
files the run would rewrite was added (its `file_seq`'s snapshot; a file whose snapshot is
no longer in the metadata counts as older than any bound): a partition that stays hot is
still rewritten that often, so its readers' cost stays bounded. Files of a partition
icemaint rewrote are as old as that rewrite, so under a steady writer this is about one
rewrite per `defer_hot_at_most`.

Off unless `defer_hot_window` is set (`GroupOptions`). Deferring only removes targets before
grouping: the deletes that reach a deferred file are not dropped (the executor drops a
delete only once every file it reaches is rewritten, `deletes.DroppableDeletes`).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from pyiceberg.table import Table

from maintenance.jobs.file_groups.options import GroupOptions
from maintenance.table.files import PartitionKey, TableFile
from maintenance.table.writer_activity import WriterActivity, writer_activity

NAMED_PARTITIONS = 100  # a run's counters name at most this many deferred partitions (the count is always there)


@dataclass(frozen=True)
class HotPartitions:
    """The rule above, with what the metadata says of writers as of planning."""

    activity: WriterActivity
    min_commits: int
    at_most_s: float
    now_ms: int

    def split(self, targets: Sequence[TableFile]) -> tuple[list[TableFile], list[TableFile]]:
        """`targets` as (rewritten now, deferred): a hot partition's files are deferred together."""
        by_partition: dict[PartitionKey, list[TableFile]] = defaultdict(list)
        for target in targets:
            by_partition[target.partition_key].append(target)
        deferred = {key for key, files in by_partition.items() if self._waits(key, files)}
        return ([t for t in targets if t.partition_key not in deferred], [t for t in targets if t.partition_key in deferred])

    def _waits(self, partition: PartitionKey, files: Sequence[TableFile]) -> bool:
        if self.activity.recent_commits(partition) < self.min_commits:
            return False
        added = [self.activity.committed_ms.get(f.file_seq) if f.file_seq is not None else None for f in files]
        known = [ms for ms in added if ms is not None]
        if len(known) < len(added):
            return False  # added by a snapshot no longer known: waited longer than any bound
        return self.now_ms - min(known) < self.at_most_s * 1000


def hot_partitions(table: Table, options: GroupOptions, *, now_ms: int | None = None) -> HotPartitions | None:
    """The deferral a run plans with, or None when its options leave it off."""
    if options.defer_hot_window is None:
        return None
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    activity = writer_activity(table, since_ms=now_ms - int(options.defer_hot_window * 1000))
    return HotPartitions(activity, options.defer_hot_commits, options.defer_hot_at_most, now_ms)


def deferred_partition_names(deferred: Sequence[TableFile]) -> list[str]:
    """The deferred partitions as a run's counters name them (sorted, at most NAMED_PARTITIONS)."""
    return sorted({f.partition_path or "(unpartitioned)" for f in deferred})[:NAMED_PARTITIONS]
