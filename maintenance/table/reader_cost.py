"""What delete files and small files cost a reader, in bytes it handles beyond a clean table's.

One model for the planner's ranking of tables (`schedule.planner.reader_cost`) and for the
ranking of a rewrite's file groups (`jobs.file_groups.plan`): an opened file costs Spark's
open cost (`spark.sql.files.openCostInBytes`, 4 MiB), and every delete file a data file's
scan task applies costs that task an open plus its entries (each position or key is read
and held: `DELETE_RECORD_BYTES` apiece), once per data file it applies to.
"""

from __future__ import annotations

OPEN_COST_BYTES = 4 * 1024 * 1024  # spark.sql.files.openCostInBytes
DELETE_RECORD_BYTES = 48  # a position (path, pos) or key held per applicable data file
TARGET_FILE_BYTES = 128 * 1024 * 1024


def deletes_read_cost(files: int, records: int) -> float:
    """What delete files (or deletion vectors) cost the scan tasks they apply to: `files`
    and `records` counted once per data file each applies to."""
    return files * OPEN_COST_BYTES + records * DELETE_RECORD_BYTES
