"""Running a rewrite's file groups: several at once on the shared Spark session, committed every few groups.

Up to `max_concurrent_groups` groups are written at the same time, each from its own
thread (Spark schedules their jobs side by side; every thread joins the run's job group, so
a lost lease cancels them all). Finished groups are committed from the calling thread, every
`commit_every_groups` of them and once at the end, while the others keep writing: each
commit is one `RewriteFiles` through `JobContext.publish` (staged and verified when the run
verifies) that replaces those groups' files, keeps the planning snapshot's data sequence
number, and drops the delete files whose every data file is now rewritten (`deletes`).

Partial progress: when a group fails, no new group starts, the running ones finish, the
finished ones are committed, and the run fails with the first error; what was committed
stays (a rerun plans from the new state). Commits are independent: each replaces files no
other commit touches, and every one validates from the planning snapshot.

Rebase: position deletes and DVs a writer committed since planning against files a commit
replaces are carried over to the files its groups wrote, in the same commit (`rebase`,
which holds the proof); each attempt rebases from the table as it is then.

Conflict-scoped retry: when Iceberg refuses a commit because a writer committed meanwhile
something that conflicts with some of its groups (a position delete or DV on a file they
replace that landed after the rebase read the table, a file they replace already gone), the
refusal names the data file. A delete is rebased again from the newer state, up to
`REBASE_ATTEMPTS` times; a file gone, or a delete still conflicting after that, leaves out
the groups holding a file it names, and the others are committed at once. Their files are
replaced by nothing, so the next run plans them again from the table as it is then; their
written files were never committed and stay for orphan cleanup. Only when every group of a
commit is refused, or the refusal names none of their files, does the commit fail as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

import structlog

from maintenance import faults
from maintenance.errors import ConflictError
from maintenance.jobs.file_groups.deletes import DroppableDeletes
from maintenance.jobs.file_groups.grouping import FileGroup
from maintenance.jobs.file_groups.options import GroupOptions
from maintenance.jobs.file_groups.rebase import Rebased, RebaseError, Rebaser
from maintenance.publish.publisher import Change
from maintenance.run.context import JobContext
from maintenance.run.outcome import COMMITTED, JobOutcome, attach_partial
from maintenance.spark.errors import java_errors
from maintenance.spark.jvm import JavaObject
from maintenance.spark.planned_tasks import DeleteRecords, GroupTasks, PlannedTasks
from maintenance.spark.rewrite_files import data_file_rewrite
from maintenance.spark.validators import Validator

log = structlog.get_logger(__name__)

REBASE_ATTEMPTS = 5  # a staged commit refused for a delete committed after its rebase read the table is staged again this often
COMMITS_ON_NEWER_STATE = 5  # a verified commit applied again on a moved table: rebased and committed again this often
GONE = "Missing required files to delete"  # Iceberg's refusal when a replaced file is no longer live: nothing to rebase onto

WriteGroup = Callable[[FileGroup, GroupTasks], list[JavaObject]]  # (group, its scan tasks) -> new data files


@dataclass
class GroupRewrite:
    """What one run rewrites: its groups, their scan tasks, and how deletes may be dropped."""

    what: str  # "MERGE", "COMPACT"
    snapshot_id: int  # planning snapshot
    sequence_number: int  # the new files' data sequence number (the planning snapshot's)
    groups: Sequence[FileGroup]
    tasks: PlannedTasks  # every group's data files' scan tasks (with the deletes that apply)
    java_deletes: DeleteRecords  # every delete the run may drop, by record key (`TableFile.key`)
    droppable: DroppableDeletes
    validate: Validator | None = None


@dataclass
class _Committed:
    snapshot_id: int | None = None
    snapshots: int = 0
    groups: int = 0
    groups_refused: int = 0
    rows_rebased: int = 0
    deletes_rebased: int = 0
    writer_deletes_removed: int = 0
    data_files_rewritten: int = 0
    data_files_added: int = 0
    delete_files_removed: int = 0
    bytes_written: int = 0
    input_bytes: int = 0  # of the groups committed (progress)
    partitions: set[Any] = field(default_factory=set)

    def counters(self, planned: int) -> dict[str, Any]:
        return {
            "groups_planned": planned,
            "groups_rewritten": self.groups,
            **({"groups_refused": self.groups_refused} if self.groups_refused else {}),
            **({"rows_rebased": self.rows_rebased, "deletes_rebased": self.deletes_rebased} if self.deletes_rebased else {}),
            **({"writer_deletes_removed": self.writer_deletes_removed} if self.writer_deletes_removed else {}),
            "data_files_rewritten": self.data_files_rewritten,
            "data_files_added": self.data_files_added,
            "delete_files_removed": self.delete_files_removed,
            "bytes_written": self.bytes_written,
            "partitions_rewritten": len(self.partitions),
            "snapshots_published": self.snapshots,
        }


def run_groups(ctx: JobContext, work: GroupRewrite, options: GroupOptions, write: WriteGroup) -> JobOutcome:
    """Write every group (concurrently) and commit them in batches; the outcome of the last commit."""
    ctx.phase("write")  # each group is read and written in one pass
    committed = _Committed()
    pending: list[tuple[FileGroup, list[JavaObject]]] = []
    failure: BaseException | None = None
    queue = list(work.groups)
    running: dict[Future[list[JavaObject]], FileGroup] = {}
    # The one commit's verification reads early (`publish/read_ahead.py`): the parent's side while
    # the groups are written, each group's new files once written; with several commits, each
    # later commit's parent is the one before.
    read_ahead = ctx.verify and len(work.groups) <= options.commit_every_groups

    def commit_pending() -> None:
        if pending:
            _commit(ctx, work, pending, committed)
            pending.clear()

    with ThreadPoolExecutor(max_workers=options.max_concurrent_groups, thread_name_prefix=f"icemaint-{work.what.lower()}-group") as pool:
        try:
            while queue or running:
                while queue and failure is None and len(running) < options.max_concurrent_groups:
                    group = queue.pop(0)
                    running[pool.submit(_write_in_run, ctx, write, group, work.tasks.for_group([f.path for f in group.files]))] = group
                    if read_ahead:
                        ctx.verifier.read_ahead(work.snapshot_id, frozenset(f.path for f in group.files))
                if not running:
                    break
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    group = running.pop(future)
                    try:
                        pending.append((group, future.result()))
                        if read_ahead:
                            ctx.verifier.read_written(pending[-1][1])
                    except BaseException as exc:  # noqa: BLE001 (the first failure is raised below, after committing what finished)
                        failure = failure or exc
                        log.error("file group failed", partitions=len(group.partitions), first_partition=str(group.key), files=len(group.files), error=str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
                read = committed.input_bytes + sum(group.input_bytes for group, _ in pending)
                ctx.progress("groups written", groups_written=committed.groups + len(pending), groups_planned=len(work.groups),
                             mib_read=round(read / 2**20), mib_planned=round(sum(g.input_bytes for g in work.groups) / 2**20))
                if len(pending) >= options.commit_every_groups:
                    commit_pending()
            commit_pending()
            if not work.groups:
                _commit(ctx, work, [], committed)  # only dangling deletes were planned: they are dropped on their own
        except BaseException as exc:
            # A commit failed (or we were interrupted): the groups still writing are wasted work.
            ctx.spark.sparkContext.cancelJobGroup(ctx.run_id)
            attach_partial(exc, JobOutcome(COMMITTED, committed.snapshot_id, committed.counters(len(work.groups))))
            raise
        finally:
            if read_ahead:
                ctx.verifier.stop_reading_ahead()
    outcome = JobOutcome(COMMITTED, committed.snapshot_id, committed.counters(len(work.groups)))
    if failure is not None:
        attach_partial(failure, outcome)
        raise failure
    return outcome


def _write_in_run(ctx: JobContext, write: WriteGroup, group: FileGroup, tasks: GroupTasks) -> list[JavaObject]:
    """One group, in a worker thread that joins the run's Spark job group."""
    ctx.spark_in_this_thread(threading.current_thread().name)
    with java_errors(f"{ctx.job.upper()} rewrite of {len(tasks.sizes)} files"):
        return write(group, tasks)


def _commit(ctx: JobContext, work: GroupRewrite, finished: list[tuple[FileGroup, list[JavaObject]]], committed: _Committed) -> None:
    """Commit the finished groups, rebasing deletes committed meanwhile; the groups a
    concurrent commit still conflicts with are left out and the others committed (module
    docstring, "Rebase" and "Conflict-scoped retry")."""
    rebases = 0
    rebaser = Rebaser(ctx, work.snapshot_id, work.tasks, finished) if finished else None
    while True:
        try:
            _commit_groups(ctx, work, finished, committed, rebaser)
            return
        except (ConflictError, RebaseError) as exc:
            refused = refused_groups(finished, str(exc))
            if refused and GONE not in str(exc) and not isinstance(exc, RebaseError) and rebases < REBASE_ATTEMPTS:
                rebases += 1
                log.info("a delete committed after the rebase read the table conflicts; rebasing again", attempt=rebases, error=str(exc))
                continue
            if not refused or len(refused) == len(finished):
                raise
            log.warning("a concurrent commit conflicts with some file groups; committing the others", groups_refused=len(refused),
                        groups_left=len(finished) - len(refused), error=str(exc))
            committed.groups_refused += len(refused)
            finished = [item for item in finished if all(item is not other for other in refused)]
            rebaser = Rebaser(ctx, work.snapshot_id, work.tasks, finished)


def refused_groups(finished: list[tuple[FileGroup, list[JavaObject]]], refusal: str) -> list[tuple[FileGroup, list[JavaObject]]]:
    """The finished groups holding a data file Iceberg's refusal names (its messages name the
    file as the table spells it: "found new position delete for replaced data file:
    GenericDataFile{… file_path=…}", "Can't index multiple DVs for …", "Found concurrently
    added DV for …", "Missing required files to delete: …")."""
    return [item for item in finished if any(f.path in refusal for f in item[0].files)]


def _commit_groups(ctx: JobContext, work: GroupRewrite, finished: list[tuple[FileGroup, list[JavaObject]]], committed: _Committed,
                   rebaser: Rebaser | None) -> None:
    """One RewriteFiles for the finished groups, dropping the deletes they complete (with no
    groups: the dangling deletes alone, if there are any), carrying over the deletes writers
    committed meanwhile (`rebaser`, kept across attempts: what it found is not looked up again)."""
    paths = [f.path for group, _ in finished for f in group.files]
    added = [new for _, files in finished for new in files]
    covered = work.droppable.covered_by(paths)
    if not finished and not covered:
        return
    rebased = rebaser.refresh() if rebaser else None
    built = 0

    def still_there(rebased: Rebased | None) -> list[str]:
        """The covered deletes this commit drops: not those a writer replaced since planning."""
        return [key for key in covered if rebased is None or key not in rebased.gone]

    def build(table: JavaObject) -> JavaObject:
        nonlocal rebased, built
        built += 1
        if rebaser is not None and built > 1:  # applied again on a newer state: carry over what landed meanwhile
            rebased = rebaser.refresh()
        drop = still_there(rebased)
        operation = data_file_rewrite(ctx.spark, rebased.base_snapshot_id if rebased else work.snapshot_id, work.sequence_number,
                                      lambda operation: work.tasks.remove_data_files(operation, paths), added,
                                      lambda operation: work.java_deletes.remove(operation, drop), rebased.delete_files if rebased else ())(table)
        return rebaser.remove_writer_deletes(operation, bool(drop)) if rebaser is not None and rebased is not None else operation

    committed.snapshot_id = ctx.publish(Change(work.what, build, work.validate, removes=frozenset(paths),
                                               commits_on_newer_state=COMMITS_ON_NEWER_STATE if rebaser else 1))
    drop = still_there(rebased)  # as the build that committed dropped them
    work.droppable.committed(paths, covered)
    if rebased is not None:
        committed.rows_rebased += rebased.rows
        committed.deletes_rebased += len(rebased.delete_files)
        committed.writer_deletes_removed += rebased.writer_deletes
    committed.snapshots += 1
    committed.groups += len(finished)
    committed.input_bytes += sum(group.input_bytes for group, _ in finished)
    committed.data_files_rewritten += len(paths)
    committed.data_files_added += len(added)
    committed.delete_files_removed += len(drop)
    committed.bytes_written += sum(int(f.fileSizeInBytes()) for f in added)
    committed.partitions.update(key for group, _ in finished for key in group.partitions)
    log.info("file groups committed", groups=len(finished), snapshot_id=committed.snapshot_id, delete_files_removed=len(drop))
    faults.point("groups-committed")
