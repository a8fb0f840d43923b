"""Every counter a job reports, named `<thing>_<verb>` and described once.

A job's result (`--json`, the run history, the daemon's metrics) carries these counters.
The planned ones tell what a dry run or a noop found; the others what a run did. The ones
several jobs report are here; a job's own are in its `JobSpec.counters`, so a new job
touches its folder and the registry only. A test runs every job and checks that nothing it
reports is missing from either.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

COUNTERS: dict[str, str] = {
    # planning
    "data_files_planned": "data files the plan rewrites",
    "delete_files_planned": "delete files the plan eliminates",
    "equality_delete_files_planned": "equality delete files the plan converts",
    "position_delete_files_planned": "position delete files the plan combines",
    "partitions_planned": "partitions the plan writes into",
    "data_files_scanned": "data files read to find deleted rows",
    "data_bytes_scanned": "bytes of the data files read to find deleted rows",
    "key_bytes_scanned": "bytes of the key columns of those data files (what the scan needs of them)",
    "delete_bytes_scanned": "bytes of the delete files read (the equality deletes converted, the position delete files folded in)",
    "snapshots_planned": "snapshots the plan expires",
    "partitions_skipped": "partitions left alone because the job cannot read one of their files (e.g. Avro or ORC deletes)",
    # what a rewrite did
    "data_files_rewritten": "data files replaced by new ones",
    "data_files_added": "data files written",
    "delete_files_removed": "delete files no longer in the table (all kinds)",
    "equality_delete_files_removed": "equality delete files removed (part of delete_files_removed)",
    "equality_delete_records_removed": "rows of the equality delete files removed",
    "position_delete_files_added": "position delete files written",
    "position_delete_files_removed": "position delete files combined into new ones (part of delete_files_removed)",
    "position_delete_records_added": "positions written",
    "deletion_vectors_added": "deletion vectors written (format 3; all in one Puffin file per run)",
    "deletion_vectors_removed": "deletion vectors replaced by new ones holding their positions, or dropped as dangling",
    "deletion_vector_records_added": "positions the new deletion vectors hold",
    "deletion_vector_records_merged": "of those, positions carried over from the vectors and v2 position files they replace",
    "position_delete_records_read": "positions read from the files combined",
    "position_delete_records_written": "positions kept in the combined files",
    "dangling_records_dropped": "positions dropped because they applied to no live data file",
    "duplicate_records_dropped": "positions dropped because another file already held them",
    "data_rows_read": "data rows read to find deleted rows",
    "partitions_rewritten": "partitions whose data files were rewritten",
    "bytes_written": "bytes of all files written",
    "snapshots_published": "snapshots made current",
    # expiry and orphan cleanup
    "snapshots_expired": "snapshots removed from the metadata",
    "snapshots_retained": "snapshots kept",
    "checkpoint_snapshots_kept": "snapshots kept because they hold a writer's resume point",
    "refs_removed": "branches and tags removed by their max age",
    "content_files_unreferenced": "data and delete files only expired snapshots referenced",
    "manifests_unreferenced": "manifests only expired snapshots listed",
    "manifest_lists_unreferenced": "manifest lists of expired snapshots",
    "statistics_files_unreferenced": "statistics files of expired snapshots",
    "metadata_files_unreferenced": "metadata.json versions older than every listed one",
    "files_outside_location_kept": "unreferenced files outside the table location, left alone",
    "files_listed": "files under the table location",
    "files_referenced": "listed files some metadata references",
    "hidden_files_skipped": "listed files hidden by name (., _), left alone",
    "recent_files_kept": "unreferenced files younger than the age margin",
    "orphan_files_found": "unreferenced files older than the margin",
    "orphan_bytes_found": "their bytes",
    "metadata_versions_read": "metadata.json versions whose references were read",
    "files_deleted": "files deleted from storage (reported however the run ended, fenced included)",
    "files_already_gone": "files to delete that were already gone (a rerun after an interrupted run)",
    "files_referenced_since_planning": "files to delete that newer metadata references: kept",
    "listing_seconds": "how long listing the table location took",
}

# Dry runs list what they would do; these are lists, not counts.
LISTS: dict[str, str] = {
    "checkpoint_snapshot_ids": "per checkpoint key, the snapshot kept as the writer's resume point",
    "snapshot_ids_to_expire": "the snapshots a dry run of EXPIRE would remove",
    "would_delete": "the files a dry run of EXPIRE or ORPHANS would delete",
    "groups": "the file groups a dry run of MERGE or COMPACT would rewrite, in order (partitions, data files, input bytes, expected output files, reader benefit, the files)",
}

# What the daemon's metrics add up.
FILES_REPLACED = ("data_files_rewritten", "delete_files_removed")
BYTES_WRITTEN = "bytes_written"
FILES_DELETED = "files_deleted"


def undocumented(counters: Mapping[str, object], own: Mapping[str, str] = MappingProxyType({})) -> list[str]:
    """The counters described neither here nor among the job's own (`own`)."""
    return sorted(k for k in counters if k not in COUNTERS and k not in LISTS and k not in own)
