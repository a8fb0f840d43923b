"""Carrying a writer's position deletes over to the files a rewrite wrote (the rebase).

A writer's merge-on-read UPDATE, DELETE or MERGE INTO that commits while a rewrite runs
writes position deletes (a DV on format 3) against data files the rewrite is replacing.
Iceberg then refuses the rewrite ("found new position delete for replaced data file";
on format 3 "Can't index multiple DVs", because the validation indexes the writer's new DV
beside the one it replaced), and without a rebase all its work is lost, again and again
while the writer keeps writing. Before each commit, when the table moved on since the
planning snapshot P to a current snapshot B:

1. every position delete and DV added by the snapshots after P up to B is read for the
   commit's replaced files (`java/ConcurrentPositionDeletes.java`);
2. each deleted row that was live at P is found in the files its group wrote
   (`spark/moved_rows.py`);
3. one delete file per written file that holds such rows is written (a DV on format 3,
   else a v2 position delete file naming that one file), and added by the same commit,
   which now validates from B instead of P; delete files the writer removed since P (it
   replaces a file's file-scoped deletes with one holding them and its own) are no longer
   the commit's to drop.

Why the commit then shows exactly the rows B shows (the proof). Let W(f) be the rows a
group wrote for its replaced files f, the multiset of f's rows live at P (the scan tasks
applied P's deletes). In B, f's live rows are those of P minus D, the rows B's position
deletes added since P remove (positions deleted only accumulate; a position already
deleted at P is skipped, having no row in W), minus what equality deletes committed since P
remove. After the commit: W minus the rebased delete, which removes for each row of D one
distinct row of W equal to it in every column (and its `_row_id` on format 3, which the
rewrite keeps: the very row), so exactly the
multiset W minus D; the written files keep P's data sequence number, so every equality
delete committed since P applies to them as it applied to f (sequence numbers are greater
than P's), and the rebased delete gets the commit's own number, greater than the written
files', so it applies to them and, naming them only, to nothing else. Deletes added after B
are Iceberg's to find: the commit validates from B, and a refusal rebases again from the
newer state (`executor`). A verified run proves it again: the verification compares B's
rows with the staged snapshot's over every file the change touches, the rebased deletes
included. When main moved while that ran, the change is built again on the newest state
(`publish/publisher.py`) and `Rebaser.refresh` carries over, by the same rule, what landed
meanwhile (rows found before are not looked up again); that part rests on this proof alone,
as the rest of such a commit rests on Iceberg's validations.

The writers' delete files of replaced files go in the same commit (`remove_writer_deletes`):
one that names a single replaced file would delete nothing after it; a partition-scoped one
is replaced by a copy without the replaced files' entries, with its partition and data
sequence number, so it deletes in every other file exactly what it deleted before. (Iceberg's
RewriteFiles adds delete files only where it also removes some; this gives it some.) A row
with no `_row_id` (a table just upgraded to format 3) is matched by its content alone: any
equal copy will do, as the multiset argument above needs no more. If P is no longer an
ancestor of B, or a carried-over position vanished from the table (a rollback), nothing is
rebased: the commit validates from P as before, or the groups are left out (RebaseError).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import structlog

from maintenance.errors import IcemaintError
from maintenance.jobs.file_groups.grouping import FileGroup
from maintenance.run.context import JobContext
from maintenance.spark.concurrent_deletes import ConcurrentPositionDeletes
from maintenance.spark.content_files import ContentFiles
from maintenance.spark.deletion_vectors import DeletionVectorWriter
from maintenance.spark.jvm import JavaObject, java_long
from maintenance.spark.moved_rows import UnmatchedRowsError, moved_positions
from maintenance.spark.planned_tasks import PlannedTasks
from maintenance.table.parquet_files import write_parquet
from maintenance.table.position_deletes import POSITION_DELETE_SCHEMA

log = structlog.get_logger(__name__)

PASSES = 5  # readings of the table per refresh, until one finds nothing new

Finished = Sequence[tuple[FileGroup, list[JavaObject]]]  # groups written, with the data files each wrote


class RebaseError(IcemaintError):
    """Deletes committed meanwhile could not be carried over (a deleted row found in no
    written file, a writer's delete files that span other files): the groups of the files
    it names are left out of the commit. Not a ConflictError: trying again cannot help."""


@dataclass(frozen=True)
class Rebased:
    """Deletes carried over to written files, for one commit that validates from `base_snapshot_id`."""

    base_snapshot_id: int
    delete_files: list[JavaObject] = field(default_factory=list)  # to add in the commit
    rows: int = 0  # rows deleted meanwhile that were live at planning, now deleted in written files
    gone: frozenset[str] = frozenset()  # record keys of delete files writers removed since planning: not the commit's to drop
    writer_deletes: int = 0  # the writers' live delete files deleting in replaced files: the commit removes them (`remove_writer_deletes`)


class Rebaser:
    """The rebase of one commit's groups, brought up to the table's current snapshot by
    `refresh` as often as the commit is tried: rows already found are not looked up again,
    and the delete files are written again only when there is more to carry over."""

    def __init__(self, ctx: JobContext, planning_snapshot_id: int, tasks: PlannedTasks, finished: Finished) -> None:
        self._ctx = ctx
        self._planning = planning_snapshot_id
        self._tasks = tasks
        self._finished = finished
        self._replaced = {f.path for group, _ in finished for f in group.files}
        self._trimmed: dict[str, JavaObject | None] = {}  # a writer's partition-scoped delete file -> its copy without replaced files
        self._lineage = ctx.metadata.table.format_version >= 3
        self._since = ConcurrentPositionDeletes(ctx.spark, self._replaced)
        self._looked_up: set[tuple[str, int]] = set()  # (replaced file, position) already looked up
        self._carried_from: set[str] = set()  # replaced files some carried-over row came from
        self._moved: dict[str, set[int]] = {}  # written file location -> positions to delete there
        self._rows = 0
        self.current: Rebased | None = None

    def refresh(self) -> Rebased | None:
        """The rebase up to the current snapshot (module docstring); None when the table is
        still at the planning snapshot or the history no longer leads back to planning (the
        commit then validates from planning, as without a rebase). A table that moved gives a
        rebase even with nothing to carry over: the commit validates from what was read.
        Finding rows takes a Spark job, during
        which a steady writer may commit again: the table is read again until a reading
        finds nothing more (at most `PASSES` times), so the commit validates from a snapshot
        read an instant before it."""
        changed = False
        for _ in range(PASSES):
            found = self._pass()
            if found is None:
                self.current = None
                return None
            base, gone, new = found
            if base == self._planning:
                return None
            changed = changed or bool(new)
            # Even with nothing to carry over, the commit validates from `base`: every position
            # delete added since planning was read for the replaced files, so none that Iceberg
            # would flag (by its bounds, a partition-scoped one may seem to apply) deletes in them.
            self.current = Rebased(base, self.current.delete_files if self.current else [], self._rows, frozenset(gone),
                                   self._since.writer_deletes())
            if not new:
                break
        assert self.current is not None
        if changed:
            self.current = Rebased(self.current.base_snapshot_id, self._write(), self._rows, self.current.gone, self.current.writer_deletes)
            log.info("deletes committed since planning carried over to the written files", base_snapshot_id=self.current.base_snapshot_id,
                     rows=self._rows, delete_files=len(self.current.delete_files))
        return self.current

    def remove_writer_deletes(self, operation: JavaObject, drops_planned: bool) -> JavaObject:
        """`operation` (the commit's RewriteFiles) without the writers' deletes of replaced
        files (as of the last reading), which would delete nothing after it: a delete file
        naming one replaced file is removed; a partition-scoped one is replaced by a copy
        without those entries (`_trimmed`: same partition, same data sequence number, so it
        deletes exactly what it deleted in every other file). Iceberg's RewriteFiles adds
        delete files only where it also removes some; this gives it some whenever a row was
        carried over."""
        assert self.current is not None
        operation = self._since.remove_file_scoped(operation)
        scoped = self._since.partition_scoped()
        for delete_file in scoped:
            key = str(delete_file.location())
            if key not in self._trimmed:
                self._trimmed[key] = _trimmed(self._ctx, delete_file, self._replaced)
            operation = operation.deleteFile(delete_file)
            if self._trimmed[key] is not None:
                operation = operation.addFile(self._trimmed[key], java_long(self._ctx.spark, int(delete_file.dataSequenceNumber())))
        if self.current.delete_files and not (drops_planned or self.current.writer_deletes or scoped):
            raise RebaseError("deletes committed meanwhile cannot be carried over (no delete file for the commit to replace) in "
                              + ", ".join(sorted(self._carried_from)))
        return operation

    def _pass(self) -> tuple[int, set[str], dict[str, list[int]]] | None:
        """One reading of the table: (the snapshot read, the delete files removed since
        planning, the positions newly found and now carried over by replaced file); None when
        planning is no longer an ancestor."""
        ctx = self._ctx
        table = ctx.table.real
        table.refresh()
        current = table.currentSnapshot()
        if current is None or int(current.snapshotId()) == self._planning:
            return self._planning, set(), {}
        base = int(current.snapshotId())
        since = self._since.read(table, self._planning, base)
        if since is None:
            log.warning("the planning snapshot is no longer an ancestor of the current one; nothing rebased", planning=self._planning, current=base)
            return None
        deleted, gone = set(since.positions), set(since.gone)
        if self._looked_up - deleted:
            # Deleted positions only accumulate; these vanished (the table was rolled back past
            # a writer's commit): what was carried over may no longer hold.
            raise RebaseError(f"deletes carried over are no longer in the table (first: {min(self._looked_up - deleted)[0]})")
        new: dict[str, list[int]] = {}
        for path, position in sorted(deleted - self._looked_up):
            new.setdefault(path, []).append(position)
        if new:
            self._carry_over(new)
        return base, gone, new

    def _carry_over(self, new: dict[str, list[int]]) -> None:
        """Find the rows at these (replaced file, positions) in the written files."""
        for group, written in self._finished:
            ours = {f.path: new[f.path] for f in group.files if f.path in new}
            if not ours:
                continue
            try:
                found, rows = moved_positions(self._ctx.spark, self._ctx.table.real, self._tasks.for_group(list(ours)), written, ours,
                                              row_lineage=self._lineage)
            except UnmatchedRowsError as exc:
                raise RebaseError(f"deletes committed meanwhile cannot be carried over: {exc}") from exc
            for location, positions in found.items():
                self._moved.setdefault(location, set()).update(positions)
            if rows:
                self._carried_from.update(ours)
            self._rows += rows
        self._looked_up.update((path, p) for path, positions in new.items() for p in positions)

    def _write(self) -> list[JavaObject]:
        """The delete files of everything carried over so far, written afresh (one DV per
        data file: the spec allows no more). The ones they supersede were never made
        current; a staged snapshot may name them, so they are left to orphan cleanup, as
        the files of groups a commit leaves out are."""
        by_location = {str(f.location()): f for _, written in self._finished for f in written}
        return _write_deletes(self._ctx, [(by_location[path], sorted(positions)) for path, positions in sorted(self._moved.items())], self._lineage)


def _write_deletes(ctx: JobContext, moved: list[tuple[JavaObject, list[int]]], deletion_vectors: bool) -> list[JavaObject]:
    """One delete file per written file: a DV (format 3), or a v2 position delete file."""
    if not moved:
        return []
    operation = _rebase_operation(ctx)
    if deletion_vectors:
        writer = DeletionVectorWriter(ctx.spark, ctx.table.real, operation)
        for data_file, positions in moved:
            writer.add(data_file, positions)
        return writer.close()
    return [_position_delete_file(ctx, operation, data_file, pa.table({"file_path": [str(data_file.location())] * len(positions), "pos": positions},
                                                                     schema=POSITION_DELETE_SCHEMA), str(data_file.location()))
            for data_file, positions in moved]


def _trimmed(ctx: JobContext, delete_file: JavaObject, replaced: set[str]) -> JavaObject | None:
    """A copy of a writer's partition-scoped position delete file without its entries for
    replaced files (after the commit they would delete nothing), for the same partition and
    data sequence number; None when nothing else is left."""
    with ctx.metadata.table.io.new_input(str(delete_file.location())).open() as stream:
        entries = pq.read_table(stream, columns=["file_path", "pos"])
    kept = entries.filter(pc.invert(pc.is_in(entries["file_path"], value_set=pa.array(sorted(replaced), pa.string()))))
    if kept.num_rows == 0:
        return None
    return _position_delete_file(ctx, _rebase_operation(ctx), delete_file, kept.cast(POSITION_DELETE_SCHEMA), None)


def _rebase_operation(ctx: JobContext) -> str:
    """The prefix of the files one rebase writes: the run's id, so orphan cleanup and a
    reader of the warehouse can tell whose they are."""
    return f"{ctx.run_id}-rebase-{uuid.uuid4().hex[:8]}"


def _position_delete_file(ctx: JobContext, operation: str, like: JavaObject, entries: pa.Table, referenced_data_file: str | None) -> JavaObject:
    """A v2 position delete file of `entries`, in the spec and partition of content file `like`."""
    table = ctx.table.real
    spec = table.specs().get(like.specId())
    location = str(table.locationProvider().newDataLocation(spec, like.partition(), f"{operation}-{uuid.uuid4().hex}-deletes.parquet"))
    write_parquet(ctx.metadata.table.io, location, entries)
    return ContentFiles(ctx.spark, table).position_delete_file(location, int(like.specId()), like.partition(), referenced_data_file=referenced_data_file)
