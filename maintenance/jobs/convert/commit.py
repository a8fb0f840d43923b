"""Committing CONVERT: the planned equality deletes are replaced by the position deletes
found for them, in one snapshot.

One `RewriteFiles` removes every planned equality delete and adds one position delete file
per partition of the data files (more only past the target size), each with a data sequence
number of its own (`addFile(deleteFile, seq)`; each manifest entry keeps its own): the
highest among the equality deletes whose positions it can hold.

Why that keeps what every delete applies to. A position (path, pos) in a file with sequence
number S deletes that one row iff the data file at `path` has a data sequence number <= S
(and the file is in the data file's partition, or names only it). Each position written
was found for an equality delete E that applies to its data file D: D's number is below
E's, which is at most S, so the row stays deleted. And a position names one row of one
file, so a higher S cannot make it delete anything else: no row that was visible becomes
deleted. (Iceberg's RewriteFiles asks the same of a rewritten delete file: the highest
number of the files it replaces.) Rewriting only delete files runs no conflict check of its own, so
concurrent appends and equality deletes never make it fail; a validator adds the one check
that matters (`spark.validators.still_live`): every data file the new position deletes may
point at, and every equality delete removed, is still live in the metadata the commit
replaces.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from maintenance.jobs.convert.plan import ConvertPlan
from maintenance.jobs.convert.scan import ScanResult
from maintenance.jobs.publish import Change
from maintenance.spark.content_files import ContentFiles
from maintenance.spark.jvm import JavaObject
from maintenance.spark.rewrites import delete_file_rewrite
from maintenance.spark.validators import still_live


@dataclass
class ConvertCommit:
    change: Change
    position_delete_files_added: int
    position_delete_records_added: int
    bytes_written: int


def convert_commit(table: JavaObject, spark: Any, plan: ConvertPlan, scan: ScanResult, java_deletes: dict[str, JavaObject], java_targets: dict[str, JavaObject]) -> ConvertCommit:
    """The change CONVERT publishes: the planned equality deletes out, their position deletes in."""
    partition_of = _output_partitions(plan, scan, java_deletes, java_targets)
    builder = ContentFiles(spark, table)
    added: list[tuple[JavaObject, int]] = []
    for part, locations in sorted(scan.written.items()):
        spec_id, partition = partition_of[part]
        seq = plan.sequence_number_for(scan.partitions[part])
        added += [(builder.position_delete_file(location, spec_id, partition), seq) for location in locations]
    build = delete_file_rewrite(spark, plan.snapshot_id, [java_deletes[d.path] for d in plan.deletes], added)
    validate = still_live(table.io(), plan.snapshot_id, {t.path for t in plan.targets}, {d.path for d in plan.deletes}, "CONVERT")
    return ConvertCommit(
        change=Change("CONVERT", build, validate),
        position_delete_files_added=len(added),
        position_delete_records_added=sum(int(f.recordCount()) for f, _ in added),
        bytes_written=sum(int(f.fileSizeInBytes()) for f, _ in added),
    )


def _output_partitions(plan: ConvertPlan, scan: ScanResult, java_deletes: dict[str, JavaObject], java_targets: dict[str, JavaObject]) -> dict[int, tuple[int, Any]]:
    """Partition id -> (spec id, Java partition), taken from a file of that partition (so
    every transform's value is exact)."""
    result: dict[int, tuple[int, Any]] = {}
    for part, key in enumerate(scan.partitions):
        spec_id, values = key
        if not values:
            result[part] = (spec_id, None)
            continue
        same = next((d for d in plan.deletes if d.partition_key == key), None)
        source = java_deletes[same.path] if same is not None else java_targets[next(t.path for t in plan.targets if t.partition_key == key)]
        result[part] = (spec_id, source.partition())
    return result
