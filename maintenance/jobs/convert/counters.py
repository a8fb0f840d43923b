"""CONVERT's own counters: the ones no other job reports (the rule: `jobs/counters.py`)."""

COUNTERS: dict[str, str] = {
    "scan_engine": "what found the deleted rows' positions: the driver (a small conversion, see local_max_bytes) or spark",
    "equality_delete_files_planned": "equality delete files the plan converts",
    "data_files_scanned": "data files read to find deleted rows",
    "data_bytes_scanned": "bytes of the data files read to find deleted rows",
    "key_bytes_scanned": "bytes of the key columns of those data files (what the scan needs of them)",
    "delete_bytes_scanned": "bytes of the delete files read (the equality deletes converted, the position delete files folded in)",
    "equality_delete_files_removed": "equality delete files removed (part of delete_files_removed)",
    "equality_delete_records_removed": "rows of the equality delete files removed",
    "position_delete_files_removed": "position delete files combined into new ones (part of delete_files_removed)",
    "position_delete_records_added": "positions written",
    "data_rows_read": "data rows read to find deleted rows",
}
