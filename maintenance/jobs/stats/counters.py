"""STATS' own counters: the ones no other job reports (the rule: `jobs/counters.py`)."""

COUNTERS: dict[str, str] = {
    "stats_columns_planned": "columns whose distinct counts the plan sketches",
    "table_statistics_planned": "1 when the plan writes a table statistics (Puffin) file for the current snapshot",
    "partition_statistics_planned": "1 when the plan writes a partition statistics file for the current snapshot",
    "statistics_files_written": "statistics and partition statistics files registered for the snapshot",
    "statistics_bytes_written": "their bytes",
    "stats_columns": "the columns a dry run would sketch",
}
