"""One data-file rewrite, start to finish: what MERGE and COMPACT both run.

From a plan's file groups (`plan`: made when the job was planned, ranked and within the
budget) and the delete files it may drop, it gets Iceberg's own scan tasks for the groups'
files (each with every delete Iceberg applies to it, so rows read are the rows readers
see), writes the groups concurrently (`writer`) and commits them every few groups
(`executor`), each commit dropping the delete files whose every data file it has now
rewritten (`deletes`). The new files keep the planning snapshot's data sequence number.
"""

from __future__ import annotations

import structlog

from maintenance import faults
from maintenance.jobs.file_groups.deletes import DroppableDeletes, coverable
from maintenance.jobs.file_groups.executor import GroupRewrite, run_groups
from maintenance.jobs.file_groups.grouping import FileGroup
from maintenance.jobs.file_groups.plan import RewritePlan
from maintenance.jobs.file_groups.sizing import OutputSizing
from maintenance.jobs.file_groups.writer import Ordering, rewrite_group
from maintenance.run.context import JobContext
from maintenance.run.outcome import JobOutcome
from maintenance.spark.errors import java_errors
from maintenance.spark.java_files import JavaFiles
from maintenance.spark.jvm import JavaObject
from maintenance.spark.planned_tasks import DeleteRecords, GroupTasks, PlannedTasks
from maintenance.spark.stream_reads import table_for_file_reads
from maintenance.spark.validators import no_new_partition_equality_deletes

log = structlog.get_logger(__name__)


def rewrite(ctx: JobContext, what: str, plan: RewritePlan, ordering: Ordering | None = None) -> JobOutcome:
    """Rewrite the plan's targets (`ordering`: rows sorted within what each group writes;
    None: bin-packed); `what` ("MERGE", "COMPACT") names the work in errors and logs."""
    files = ctx.metadata.files
    fenced = ctx.table
    groups = plan.groups
    tasks = PlannedTasks(ctx.spark, fenced.real, plan.snapshot_id, [f for group in groups for f in group.files], what, files.files)
    reach = plan.reach
    droppable = coverable(reach, set(tasks.paths))
    with java_errors(f"{what} planning"):
        java_deletes = java_delete_records(ctx, plan.snapshot_id, set(droppable), tasks)
    faults.watch("spark-write", f"{ctx.metadata.table.location().rstrip('/')}/data")
    moves_rows = any(group.moves_rows for group in groups)
    work = GroupRewrite(
        what=what,
        snapshot_id=plan.snapshot_id,
        sequence_number=plan.sequence_number,
        groups=groups,
        tasks=tasks,
        java_deletes=java_deletes,
        droppable=DroppableDeletes({path: reach[path] for path in droppable}),
        validate=no_new_partition_equality_deletes(fenced.java.io(), plan.snapshot_id, what) if moves_rows else None,
    )

    reads = table_for_file_reads(ctx.spark, fenced.real, files.files)

    sizing = OutputSizing(plan.target_size)

    def write(group: FileGroup, group_tasks: GroupTasks) -> list[JavaObject]:
        group = sizing.calibrated(group)
        written = rewrite_group(ctx.spark, reads, group, group_tasks, target_size=plan.target_size, output_spec_id=plan.output_spec_id,
                                ordering=ordering)
        resized = sizing.resized(group, [int(f.fileSizeInBytes()) for f in written])
        if resized is None:
            return written
        log.info("file group written again at its rows' size", partition=str(group.key), files=[int(f.fileSizeInBytes()) for f in written],
                 estimated_bytes=group.expected_output_bytes, written_bytes=resized.expected_output_bytes)
        ctx.discard_unpublished([str(f.location()) for f in written])
        return rewrite_group(ctx.spark, reads, resized, group_tasks, target_size=plan.target_size, output_spec_id=plan.output_spec_id,
                             ordering=ordering)

    outcome = run_groups(ctx, work, plan.options, write)
    outcome.counters = {**plan.counters(), **outcome.counters}
    return outcome


def java_delete_records(ctx: JobContext, snapshot_id: int, wanted: set[str], tasks: PlannedTasks) -> DeleteRecords:
    """The Java records of the deletes a run may drop (by record key, `TableFile.key`): those
    the scan tasks hold stay in the JVM; only deletes that apply to no data file (dangling)
    are looked up in the delete manifests."""
    held = wanted & tasks.delete_keys() if wanted else set()
    missing = wanted - held
    looked_up = JavaFiles(ctx.spark, ctx.table.real, snapshot_id).delete_files(missing) if missing else {}
    return DeleteRecords(tasks, frozenset(held), looked_up)
