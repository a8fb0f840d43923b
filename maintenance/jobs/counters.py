"""Every counter a job reports, named `<thing>_<verb>` and described once.

A job's result (`--json`, the run history, the daemon's metrics) carries these counters.
The planned ones tell what a dry run or a noop found; the others what a run did.

One rule: a counter that one job reports is that job's own, described in its folder
(`jobs/<job>/counters.py`, the spec's `counters`), so a new job touches its folder and the
registry only; one that two jobs report, or that a module several jobs run reports
(`file_groups/`, `file_removal/`, `publish/`), is here. Tests check both: every job's run
reports nothing undescribed, and where each counter is spelled agrees with its home.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

COUNTERS: dict[str, str] = {
    # planning
    "data_files_planned": "data files the plan rewrites",
    "delete_files_planned": "delete files the plan eliminates",
    "position_delete_files_planned": "position delete files the plan combines",
    "partitions_planned": "partitions the plan writes into",
    "groups_planned": "file groups the run planned to rewrite (within max_bytes_per_run)",
    "groups_deferred": "file groups past max_bytes_per_run, left for a later run",
    "partitions_deferred_hot": "partitions left for a later run because writers are deleting from them (defer_hot_window)",
    # what a rewrite did
    "groups_rewritten": "file groups rewritten and committed",
    "groups_refused": "file groups left out of a commit because a concurrent commit conflicted with them (the next run plans them again)",
    "data_files_rewritten": "data files replaced by new ones",
    "data_files_added": "data files written",
    "delete_files_removed": "delete files no longer in the table (all kinds)",
    "position_delete_files_added": "position delete files written",
    "deletion_vectors_added": "deletion vectors written (format 3; all in one Puffin file per run)",
    "deletion_vectors_removed": "deletion vectors replaced by new ones holding their positions, or dropped as dangling",
    "deletion_vector_records_added": "positions the new deletion vectors hold",
    "deletion_vector_records_merged": "of those, positions carried over from the vectors and v2 position files they replace",
    "position_delete_records_read": "positions read from the files combined",
    "partitions_rewritten": "partitions whose data files were rewritten",
    "bytes_written": "bytes of all files written",
    "snapshots_published": "snapshots made current",
    # deleting files (EXPIRE, ORPHANS: jobs/file_removal/fenced.py)
    "files_deleted": "files deleted from storage (reported however the run ended, fenced included)",
    "files_already_gone": "files to delete that were already gone (a rerun after an interrupted run)",
    "files_referenced_since_planning": "files to delete that newer metadata references: kept",
    "files_deleted_per_second": "files deleted per second of deleting (reference checks and lease proofs included)",
    "would_delete_unnamed": "files a dry run of EXPIRE or ORPHANS would delete beyond the first 10,000 it names in would_delete",
}

# Dry runs list what they would do; these are lists, not counts.
LISTS: dict[str, str] = {
    "checkpoint_snapshot_ids": "per checkpoint key, the snapshot kept as the writer's resume point",
    "snapshot_ids_to_expire": "the snapshots a dry run of EXPIRE would remove",
    "would_delete": "the files a dry run of EXPIRE or ORPHANS would delete (the first 10,000; jobs/file_removal/candidates.py)",
    "hot_partitions_deferred": "the partitions MERGE or COMPACT left because writers are deleting from them (the first 100; any run, not only dry runs)",
    "groups": "the file groups a dry run of MERGE or COMPACT would rewrite, in order (partitions, data files, input bytes, expected output files, reader benefit, the files)",
}

# What the daemon's metrics add up.
FILES_REPLACED = ("data_files_rewritten", "delete_files_removed")
BYTES_WRITTEN = "bytes_written"
FILES_DELETED = "files_deleted"


def undocumented(counters: Mapping[str, object], own: Mapping[str, str] = MappingProxyType({})) -> list[str]:
    """The counters described neither here nor among the job's own (`own`)."""
    return sorted(k for k in counters if k not in COUNTERS and k not in LISTS and k not in own)
