"""ORPHANS's own counters: the ones no other job reports (the rule: `jobs/counters.py`)."""

COUNTERS: dict[str, str] = {
    "staging_folders_found": "empty folders a killed run of ours left in its output folder (local disks)",
    "staging_folders_removed": "of those, removed",
    "files_listed": "files under the table location",
    "files_referenced": "listed files some metadata references",
    "hidden_files_skipped": "listed files hidden by name (., _), left alone",
    "recent_files_kept": "unreferenced files younger than the age margin",
    "orphan_files_found": "unreferenced files older than the margin",
    "orphan_bytes_found": "their bytes",
    "metadata_versions_read": "metadata.json versions whose references were read",
    "references_on_disk": "1 when the referenced paths passed half of memory_budget and moved to a temporary file (table/key_set.py)",
    "listing_seconds": "how long listing the table location (and sorting its files out) took",
    "files_listed_per_second": "files listed and sorted out per second",
    "inventory_age_seconds": "how old the S3 Inventory report the location was listed from is (with --inventory)",
}
