"""The rows proof (MERGE, COMPACT): the content fingerprint of the files a change can affect.

The scope (`publish/change_scope.py` says which data files, and proves that comparing them
is comparing the whole table) is read in the parent and in the staged snapshot, each
through Iceberg's scan tasks planned on that snapshot, every delete applied
(`spark/fingerprint.py`); the fingerprint is a sum over rows, so the sides are equal
exactly when the table's content is.

**What is read first.** Most of the time goes to two things that do not depend on each
other: Iceberg's diff of the staged snapshot against its parent (it reads every manifest
the change rewrote: all of a streaming table's manifests when one partition is compacted)
and reading the scope's files. So, while the diff runs in another thread, the files the
scope is sure or likely to hold are read in one Spark job: the data files the staged
snapshot added (always in the scope) and, on the parent's side, the data files the change
says it removes (`Change.removes`, a hint: a file counts only if the diff puts it in the
scope, else that side is read again in full). The rest of the scope is read once the diff
has told what it is. When a rewrite commits its groups in one change, both sides are read
sooner still (`publish/read_ahead.py`): the parent's files it removes while the groups are
written, and the files each group wrote while the change is staged (used only where the
staged snapshot holds them as read and no delete may apply to them there). Every file is
read by the verification itself, through scan tasks it planned, never taken from the job: a
fault in how the job read its files (a task missing, a row dropped on the way) shows as a
difference.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import structlog
from pyiceberg.table import Table

from maintenance.progress import Progress
from maintenance.publish.change_scope import change_scope, entry_of
from maintenance.publish.proofs import Evidence
from maintenance.publish.read_ahead import WRITTEN, ReadAhead, Reading
from maintenance.spark.fenced_table import Staged
from maintenance.spark.fingerprint import Fingerprint, files_fingerprints, schema_json
from maintenance.spark.snapshot_diff import removed_keys
from maintenance.table.delete_rule import DeleteIndex
from maintenance.table.files import Content, SnapshotFiles, TableFile, child_snapshot_files, snapshot_files

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = structlog.get_logger(__name__)


def rows_evidence(spark: SparkSession, staged: Staged, name: str, removes: frozenset[str], ahead: ReadAhead,
                  parent_and_added: Callable[[], tuple[Table, SnapshotFiles, list[TableFile]]], progress: Progress) -> Evidence:
    """The fingerprints of the change's scope on both sides, read through the staged change's
    view; `removes`: the data files the change says it removes (read first); `ahead`: what
    was read ahead (`publish/read_ahead.py`); `parent_and_added`: the table knowing the
    staged snapshot, the parent's files and the files the staged snapshot added."""
    started = time.perf_counter()
    java = staged.view
    parent_id, staged_id = staged.parent_id, staged.snapshot_id
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="icemaint-verification") as pool:
        # Iceberg's diff and pyiceberg's read of the staged snapshot run while what was read
        # ahead is awaited: none of the three waits for another.
        removed = pool.submit(removed_keys, spark, java, staged_id)
        loaded = pool.submit(parent_and_added)
        schema = schema_json(spark, java)
        read_ahead, read_early = ahead.take(parent_id, removes, schema)
        table, before, added = loaded.result()
        added_data = [f for f in added if f.content == Content.DATA]
        written = ahead.take_each(WRITTEN, frozenset(f.path for f in added_data), schema)
        written_paths = {path for reading in written for path in reading.paths}
        now = ([f for f in before.data if f.path in removes and f.path not in read_ahead], [f for f in added_data if f.path not in written_paths])
        progress("verifying", data_files_to_read=len(now[0]) + len(now[1]), mib_to_read=round(_bytes(*now) / 2**20))
        read_first = files_fingerprints(spark, java, name, [(parent_id, now[0]), (staged_id, now[1])], [*before.files, *added])
        derived = child_snapshot_files(table, before, staged_id, removed.result(), added)
    after = derived if derived is not None else snapshot_files(table, staged_id, reuse=before)
    first = ([f for f in before.data if f.path in removes], now[1])
    if read_early is not None:
        read_first[0] = read_first[0].plus(read_early)
    for reading in _written_as_staged(written, after, added_data):
        first = (first[0], [*first[1], *(f for f in added_data if f.path in reading.paths)])
        read_first[1] = read_first[1].plus(reading.fingerprint)
    first_done = time.perf_counter()
    scope = change_scope(before, after)
    sides = [(parent_id, scope.before), (staged_id, scope.after)]
    rest, partial = [], []
    for (snapshot_id, files), early, fingerprint in zip(sides, first, read_first):
        in_scope = {entry_of(f) for f in files}
        if all(entry_of(f) in in_scope for f in early):
            read = {entry_of(f) for f in early}
            rest.append((snapshot_id, [f for f in files if entry_of(f) not in read]))
            partial.append(fingerprint)
        else:  # the hint named a file outside the scope: this side is read in full
            rest.append((snapshot_id, files))
            partial.append(Fingerprint(name, snapshot_id, 0, "0"))
    if any(files for _, files in rest):
        progress("verifying", data_files_to_read=sum(len(f) for _, f in rest), mib_to_read=round(_bytes(*(f for _, f in rest)) / 2**20))
    readable = {f.key: f for f in (*before.files, *after.files)}.values()
    fingerprints = files_fingerprints(spark, java, name, rest, readable)
    fingerprint_before, fingerprint_after = (done.plus(more) for done, more in zip(partial, fingerprints))
    evidence = Evidence(fingerprint_before, fingerprint_after, data_files=scope.data_files, bytes=scope.bytes, table_bytes=scope.table_bytes)
    log.info("verification read", data_files=scope.data_files, bytes=scope.bytes, first_s=round(first_done - started, 3),
             rest_s=round(time.perf_counter() - first_done, 3))
    return evidence


def _written_as_staged(readings: list[Reading], staged: SnapshotFiles, added_data: list[TableFile]) -> list[Reading]:
    """The readings of written files that stand for reading them in the staged snapshot:
    each file read exactly once over all the readings (a file its writer listed twice, or
    two groups listed, was summed twice but is added once), added there as it was read, and
    no delete of the staged snapshot may apply to it (`publish/read_ahead.py`); the files of the
    others are read in the staged snapshot."""
    if not readings:
        return []
    as_added = {(f.path, f.spec_id, f.records, f.size): f for f in added_data}
    times_read = Counter(path for reading in readings for path, *_ in reading.written)
    index = DeleteIndex(staged)
    standing = []
    for reading in readings:
        files = [as_added.get(entry) for entry in reading.written]
        once = all(times_read[path] == 1 for path, *_ in reading.written)
        if once and all(f is not None and not index.deletes_for(f) for f in files):
            standing.append(reading)
        else:
            log.info("files written were read early but not as the staged snapshot reads them; they are read again", files=len(reading.paths))
    return standing


def _bytes(*sides: list[TableFile]) -> int:
    return sum(f.size for side in sides for f in side)
