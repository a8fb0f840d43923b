"""REWRITE's own counters: the ones no other job reports (the rule: `jobs/counters.py`)."""

COUNTERS: dict[str, str] = {
    "dangling_deletion_vectors_planned": "deletion vectors whose data file is no longer live (format 3), dropped",
    "duplicated_deletion_vectors_planned": "deletion vectors of data files that have more than one (format 3), merged into one each",
    "partitions_skipped": "partitions left alone because the job cannot read one of their files (e.g. Avro or ORC deletes)",
    "position_delete_records_written": "positions kept in the combined files",
    "dangling_records_dropped": "positions dropped because they applied to no live data file",
    "duplicate_records_dropped": "positions dropped because another file already held them",
}
