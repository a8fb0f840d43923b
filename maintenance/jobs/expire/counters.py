"""EXPIRE's own counters: the ones no other job reports (the rule: `jobs/counters.py`)."""

COUNTERS: dict[str, str] = {
    "snapshots_left_behind": "snapshots an earlier, interrupted expiry removed without deleting all their files; their files are deleted now",
    "snapshots_planned": "snapshots the plan expires",
    "snapshots_expired": "snapshots removed from the metadata",
    "snapshots_retained": "snapshots kept",
    "checkpoint_snapshots_kept": "snapshots kept because they hold a writer's resume point",
    "refs_removed": "branches and tags removed by their max age",
    "content_files_unreferenced": "data and delete files only expired snapshots referenced",
    "manifests_unreferenced": "manifests only expired snapshots listed",
    "manifest_lists_unreferenced": "manifest lists of expired snapshots",
    "statistics_files_unreferenced": "statistics files of expired snapshots",
    "metadata_files_unreferenced": "metadata.json versions older than every listed one",
    "specs_removed": "partition specs no retained snapshot used, removed (clean_expired_metadata)",
    "schemas_removed": "schemas no retained snapshot used, removed (clean_expired_metadata)",
    "files_outside_location_kept": "unreferenced files outside the table location, left alone",
}
