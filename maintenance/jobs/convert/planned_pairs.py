"""Which equality deletes Iceberg's own planner applies to which data files (`planFiles`).

`maintenance.table.delete_rule` answers the same question from metadata, as a superset of
Iceberg's answer; CONVERT asks Iceberg itself only where a superset is not enough
(floating-point keys: `jobs.convert.scan.needs_iceberg_pairs`). Each pair costs Py4J round
trips, which is why this is not the everyday path.
"""

from __future__ import annotations

from collections.abc import Iterable

from maintenance.spark.jvm import JavaObject

EQUALITY_DELETES = "EQUALITY_DELETES"


def equality_pairs(table: JavaObject, snapshot_id: int, data_paths: Iterable[str]) -> set[tuple[str, str]]:
    """(data file path, equality delete path) for every equality delete Iceberg's planner
    attaches to one of `data_paths` in `snapshot_id`."""
    wanted = set(data_paths)
    pairs: set[tuple[str, str]] = set()
    tasks = table.newScan().useSnapshot(snapshot_id).planFiles()
    try:
        iterator = tasks.iterator()
        while iterator.hasNext():
            task = iterator.next()
            data = str(task.file().location())
            if data not in wanted:
                continue
            for delete in task.deletes():
                if str(delete.content().name()) == EQUALITY_DELETES:
                    pairs.add((data, str(delete.location())))
    finally:
        tasks.close()
    return pairs
