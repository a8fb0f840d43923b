"""Where writers are deleting rows right now: their recent merge-on-read commits per partition, from metadata.

A merge-on-read UPDATE, DELETE or MERGE INTO (Spark's, or any writer's `RowDelta` that
calls `validateDataFilesExist`) fails when a snapshot committed after the one it read
removed a data file it deletes from, and a rewrite's `replace` counts (Iceberg's
`MergingSnapshotProducer.validateDataFilesExist`). So a rewrite committed into a partition
such a writer is working on can fail the writer's next statement; a partition it committed
to often within the last minutes is likely to have one in flight.

What counts as one such commit in a partition: a snapshot within the window, not made by
icemaint (no `icemaint.job` in its summary), that added a position delete file or deletion
vector of the partition reaching a data file the commit did not add itself. Read from the
manifests each such snapshot wrote (`files.added_files`; a commit whose summary says it
added no position deletes is not read), whether or not those deletes are still live: a
writer deleting again from the same data file replaces its delete (Iceberg merges
file-scoped deletes and DVs), and that must count as a commit too, or a partition of one
data file could never read hot. Left out on purpose:
- a delete of rows of the writer's own new file (a CDC writer's duplicates within its
  batch): such a commit references only the files it adds, which no rewrite can have
  removed before it;
- equality deletes: they name no data file, so no rewrite can fail them.
Counted although it may not conflict: a partition-scoped position delete file (no single
referenced data file), since it may reach any of the partition's older files.

Cost: one manifest list and the manifests it added, per deleting writer commit in the
window, side by side; at most the newest `MAX_COMMITS_READ` of them (a manifest list
names every manifest of the table, so on a table of thousands of manifests each read is
megabytes). Past that bound a partition reached only by the older commits reads cooler
than it is: the error is toward rewriting, never toward deferring without evidence.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot

from maintenance.table.files import Content, PartitionKey, added_files
from maintenance.table.marks import SUMMARY_JOB
from maintenance.table.pool import parallel_map

MAX_COMMITS_READ = 50  # the newest deleting writer commits of the window that are read (module docstring)


@dataclass(frozen=True)
class WriterActivity:
    """Writers' recent deleting commits per partition, and when every known snapshot was committed."""

    commits: dict[PartitionKey, frozenset[int]]  # partition -> sequence numbers of writers' deleting commits in the window
    committed_ms: dict[int, int] = field(default_factory=dict)  # sequence number -> commit time, for every snapshot in the metadata

    def recent_commits(self, partition: PartitionKey) -> int:
        return len(self.commits.get(partition, ()))


def writer_activity(table: Table, *, since_ms: int) -> WriterActivity:
    """Writers' deleting commits since `since_ms` per partition (module docstring)."""
    committed_ms: dict[int, int] = {}
    writers: list[Snapshot] = []
    for snapshot in table.metadata.snapshots:
        if snapshot.sequence_number is None:
            continue
        committed_ms[snapshot.sequence_number] = snapshot.timestamp_ms
        if snapshot.timestamp_ms >= since_ms and _may_be_a_writers_delete(snapshot):
            writers.append(snapshot)
    writers = sorted(writers, key=lambda s: s.timestamp_ms)[-MAX_COMMITS_READ:]
    commits: dict[PartitionKey, set[int]] = defaultdict(set)
    for snapshot, added in zip(writers, parallel_map(lambda s: added_files(table, s.snapshot_id), writers), strict=True):
        own = {f.path for f in added if f.content == Content.DATA}
        for delete in added:
            if delete.content == Content.POSITION_DELETES and delete.referenced_data_file not in own:
                commits[delete.partition_key].add(int(snapshot.sequence_number or 0))
    return WriterActivity({key: frozenset(seqs) for key, seqs in commits.items()}, committed_ms)


def _may_be_a_writers_delete(snapshot: Snapshot) -> bool:
    """Not icemaint's, and its summary counts position delete files or DVs added (Iceberg
    sets these keys only when nonzero; a snapshot without a summary is read to see)."""
    summary = snapshot.summary
    if summary is None:
        return True
    if summary.get(SUMMARY_JOB) is not None:
        return False
    return any(summary.get(key) not in (None, "0") for key in ("added-position-delete-files", "added-dvs"))
