"""Committing CONVERT: the planned equality deletes are replaced by the position deletes
found for them, in one snapshot.

One `RewriteFiles` removes every planned equality delete (and, on format 2, the position
delete files folded in: see `plan`) and adds one position delete file per partition of the
data files (more only past the target size), each with a data sequence number of its own
(`addFile(deleteFile, seq)`; each manifest entry keeps its own): the highest among the
deletes whose positions it can hold.

Why that keeps what every delete applies to. A position (path, pos) in a file with sequence
number S deletes that one row iff the data file at `path` has a data sequence number <= S
(and the file is in the data file's partition, or names only it). Each position written
was found for an equality delete E that applies to its data file D: D's number is below
E's, which is at most S, so the row stays deleted. A position carried over from a folded
position delete file F was kept only where F applied to D (`spark.position_entries`): D's
number is at most F's, which is at most S, and D lies in the partition of the new file. And a position names one row of one
file, so a higher S cannot make it delete anything else: no row that was visible becomes
deleted. (Iceberg's RewriteFiles asks the same of a rewritten delete file: the highest
number of the files it replaces.) Rewriting only delete files runs no conflict check of its own, so
concurrent appends and equality deletes never make it fail; a validator adds the one check
that matters (`spark.validators.still_live`): every data file the new position deletes may
point at, and every equality delete removed, is still live in the metadata the commit
replaces.

On format 3 (`dv_commit`) the positions become deletion vectors instead, one per data
file, each merged with what already deleted rows of that file (`jobs.deletion_vectors`);
the DVs they replace leave in the same commit, and a second validator refuses the commit
if a concurrent writer added a DV for one of those files meanwhile.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from maintenance.jobs.convert.plan import ConvertPlan
from maintenance.jobs.convert.scan import ScanResult
from maintenance.jobs.deletion_vectors.build import DvChange, NewDeletes, build_dvs
from maintenance.publish.publisher import Change
from maintenance.publish.verifier import DELETED_ROWS
from maintenance.spark.content_files import ContentFiles
from maintenance.spark.jvm import JavaObject
from maintenance.spark.rewrite_files import delete_file_rewrite
from maintenance.spark.validators import all_of, no_new_dvs_for, still_live
from maintenance.table.files import SnapshotFiles


@dataclass
class ConvertCommit:
    change: Change
    position_delete_files_added: int
    position_delete_records_added: int
    bytes_written: int


def convert_commit(table: JavaObject, spark: Any, plan: ConvertPlan, scan: ScanResult, java_deletes: Mapping[str, JavaObject], java_targets: Mapping[str, JavaObject]) -> ConvertCommit:
    """The change CONVERT publishes: the planned equality deletes out, their position deletes in."""
    partition_of = _output_partitions(plan, scan, java_deletes, java_targets)
    builder = ContentFiles(spark, table)
    added: list[tuple[JavaObject, int]] = []
    for part, locations in sorted(scan.written.items()):
        spec_id, partition = partition_of[part]
        seq = plan.sequence_number_for(scan.partitions[part])
        added += [(builder.position_delete_file(location, spec_id, partition), seq) for location in locations]
    removed = [*plan.deletes, *plan.position_deletes]
    build = delete_file_rewrite(spark, plan.snapshot_id, [java_deletes[d.path] for d in removed], added)
    validate = still_live(table.io(), plan.snapshot_id, {t.path for t in plan.targets}, removed, "CONVERT")
    return ConvertCommit(
        change=Change("CONVERT", build, validate, proof=DELETED_ROWS),
        position_delete_files_added=len(added),
        position_delete_records_added=sum(int(f.recordCount()) for f, _ in added),
        bytes_written=sum(int(f.fileSizeInBytes()) for f, _ in added),
    )


def dv_commit(table: JavaObject, spark: Any, io: Any, files: SnapshotFiles, plan: ConvertPlan, scan: ScanResult,
              java_deletes: Mapping[str, JavaObject], java_targets: Mapping[str, JavaObject], operation_id: str) -> tuple[Change, DvChange]:
    """The change CONVERT publishes on format 3: the planned equality deletes and the DVs
    replaced out, one new DV per data file with positions in."""
    seqs = {d.path: d.seq for d in plan.deletes}
    new = {path: NewDeletes(positions, max(seqs[e] for e in plan.applies_to[path])) for path, positions in scan.positions.items()}
    dvs = build_dvs(spark, table, io, files, new, java_targets, operation_id)
    build = delete_file_rewrite(spark, plan.snapshot_id, [*(java_deletes[d.path] for d in plan.deletes), *dvs.replaced_java], dvs.added)
    validate = all_of(
        still_live(table.io(), plan.snapshot_id, {t.path for t in plan.targets}, [*plan.deletes, *dvs.replaced], "CONVERT"),
        no_new_dvs_for(table.io(), plan.snapshot_id, dvs.data_paths, "CONVERT"),
    )
    return Change("CONVERT", build, validate, proof=DELETED_ROWS), dvs


def _output_partitions(plan: ConvertPlan, scan: ScanResult, java_deletes: Mapping[str, JavaObject], java_targets: Mapping[str, JavaObject]) -> dict[int, tuple[int, Any]]:
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
