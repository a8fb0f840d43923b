"""The MERGE job: rewrite every data file the chosen deletes touch, and drop those deletes.

The target files are read through Iceberg's own reader (so every delete that applies is
applied) from exactly their planned scan tasks, staged with Iceberg's `ScanTaskSetManager`,
and written back toward the target file size through Iceberg's rewrite coordinator
(nothing is committed by the write), in bounded file groups run concurrently and committed
every few groups (`jobs.file_groups`: how files are grouped and sized, how older partition
specs are written into the current one, partial progress). Each commit is one
`RewriteFiles` that replaces its groups' data files and removes the delete files whose every
data file is now rewritten, with `dataSequenceNumber(planning snapshot's)`: equality deletes committed meanwhile keep applying to the new files, so
neither side must retry, and Iceberg ignores them when it validates. A position delete
committed meanwhile on a replaced file makes the commit fail cleanly; a rerun replans.
When files of older specs are written into the current spec, rows change partition and that
argument no longer holds for partition-scoped equality deletes: such a MERGE fails cleanly
if one was committed meanwhile (`spark.validators.no_new_partition_equality_deletes`).

Iceberg's stock `rewrite_data_files` keeps the delete files (apache/iceberg #4127, #8743,
#6126) and gives new files a new sequence number unless told otherwise; here the delete
files are removed explicitly, which is safe because every data file they may apply to is
among those rewritten.
"""

from __future__ import annotations

from collections import defaultdict

import structlog

from maintenance import faults
from maintenance.errors import UsageError
from maintenance.jobs.context import JobContext
from maintenance.jobs.file_groups.deletes import DroppableDeletes, coverable, delete_reach
from maintenance.jobs.file_groups.executor import GroupRewrite, run_groups
from maintenance.jobs.file_groups.grouping import FileGroup, plan_groups, within_budget
from maintenance.jobs.file_groups.writer import rewrite_group
from maintenance.jobs.merge.plan import MergePlan
from maintenance.jobs.outcome import JobOutcome
from maintenance.jobs.spec import SCAN_BYTES_PER_S
from maintenance.spark.errors import java_errors
from maintenance.spark.java_files import JavaFiles
from maintenance.spark.jvm import JavaObject, jvm
from maintenance.spark.validators import no_new_partition_equality_deletes
from maintenance.table.files import Content, PartitionKey, SnapshotFiles
from maintenance.table.health import TableHealth

log = structlog.get_logger(__name__)


def run(ctx: JobContext, plan: MergePlan) -> JobOutcome:
    assert ctx.metadata is not None
    fenced = ctx.table
    options = plan.options
    groups = plan_groups(plan.targets, plan.current_spec_id, _live_fraction(ctx.metadata.files, plan), max_group_bytes=options.max_group_bytes)
    groups = within_budget(groups, options.max_bytes_per_run)
    tasks = _scan_tasks(fenced.java, [f.path for group in groups for f in group.files], plan.snapshot_id)
    reach = delete_reach(ctx.metadata.files, plan.deletes)
    droppable = coverable(reach, set(tasks))
    with java_errors("MERGE planning"):
        java_deletes = _java_deletes(ctx, plan.snapshot_id, set(droppable), list(tasks.values()))
    faults.watch("spark-write", f"{ctx.metadata.table.location().rstrip('/')}/data")
    moves_rows = any(group.reshuffle for group in groups)
    work = GroupRewrite(
        what="MERGE",
        snapshot_id=plan.snapshot_id,
        sequence_number=plan.sequence_number,
        groups=groups,
        tasks=tasks,
        java_deletes=java_deletes,
        droppable=DroppableDeletes({path: reach[path] for path in droppable}),
        validate=no_new_partition_equality_deletes(fenced.java.io(), plan.snapshot_id, "MERGE") if moves_rows else None,
    )

    def write(group: FileGroup, group_tasks: list[JavaObject]) -> list[JavaObject]:
        return rewrite_group(ctx.spark, fenced.java, group, group_tasks, target_size=plan.target_size, output_spec_id=plan.current_spec_id)

    outcome = run_groups(ctx, work, options, write)
    outcome.counters = {**plan.counters(), **outcome.counters}
    return outcome


def estimate(health: TableHealth) -> float:
    """Reads and writes the data of every partition with deletes."""
    volume = 2 * sum(p.data_bytes for p in health.partitions if p.delete_files)
    return 5.0 + volume / SCAN_BYTES_PER_S


def _java_deletes(ctx: JobContext, snapshot_id: int, wanted: set[str], tasks: list[JavaObject]) -> dict[str, JavaObject]:
    """The Java records of the deletes the run may drop, taken from the scan tasks that
    already hold them; only deletes that apply to no data file (dangling) are looked up in
    the manifests."""
    found: dict[str, JavaObject] = {}
    distinct = jvm(ctx.spark).java.util.HashSet()  # tasks share their delete records: one Py4J call per task
    for task in tasks:
        distinct.addAll(task.deletes())
    iterator = distinct.iterator()
    while iterator.hasNext():
        delete = iterator.next()
        location = str(delete.location())
        if location in wanted:
            found.setdefault(location, delete)
    missing = wanted - set(found)
    if missing:
        found.update(JavaFiles(ctx.spark, ctx.table.java, snapshot_id).delete_files(missing))
    return found


def _live_fraction(files: SnapshotFiles, plan: MergePlan) -> dict[PartitionKey, float]:
    """Per partition, the share of rows the planned deletes leave (each delete record is
    taken to remove one row), to estimate how much the rewrite writes."""
    deleted: dict[PartitionKey, int] = defaultdict(int)
    for d in plan.deletes:
        if d.content == Content.POSITION_DELETES or not files.is_global(d.spec_id):
            deleted[d.partition_key] += d.records
    rows: dict[PartitionKey, int] = defaultdict(int)
    for f in plan.targets:
        rows[f.partition_key] += f.records
    return {key: max(0.05, 1 - deleted[key] / total) for key, total in rows.items() if total}


def _scan_tasks(table: JavaObject, paths: list[str], snapshot_id: int) -> dict[str, JavaObject]:
    """Iceberg's own scan tasks (each with the deletes that apply to it) for the target files."""
    wanted = set(paths)
    found: dict[str, JavaObject] = {}
    with java_errors("MERGE planning"):
        tasks = table.newScan().useSnapshot(snapshot_id).planFiles()
        try:
            iterator = tasks.iterator()
            while iterator.hasNext() and len(found) < len(wanted):
                task = iterator.next()
                location = str(task.file().location())
                if location in wanted:
                    found[location] = task
        finally:
            tasks.close()
    missing = wanted - set(found)
    if missing:
        raise UsageError(f"MERGE could not plan {sorted(missing)[0]}: not in the snapshot's scan")
    return found
