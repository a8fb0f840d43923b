"""Removing files from storage under a lease (EXPIRE, ORPHANS): each file deleted only while the lease is proven,
each batch only against references read, and a lease row read, less than `window_s` before.

A commit can be made conditional on the table (the fence checks every attempt's base), a
deletion cannot: no store deletes "only if the lease is still mine". So deletions are
fenced in time.

**Why a holder deletes no live file and, once its lease is lost, nothing (but the one file
in flight).**
- Before each file, `Fence.time_left()` must be positive: the lease is proven on this
  host's monotonic clock until the send time of the last acquisition or renewal the
  database confirmed plus the TTL (`lease.keeper`), and a margin is kept. Another holder
  can take the lease only once the database clock has passed its expiry, which is later
  (an operator's forced release keeps that expiry, `state/leases.py`). So every deletion
  *starts* while no other holder can act on the table.
- Each batch first takes the time (`opened`), then reads the newest metadata (only what
  changed since the last look: `table.references.NewestReferences`) and takes out every
  file it references, then checks that the table carries no newer epoch and reads the
  lease row in the database (holder, epoch, unexpired by the database clock:
  `Fence.assert_held`; the keeper's last renewal alone proves nothing about a forced
  release). A file of the batch is deleted only if its deletion starts before `opened +
  window_s`.

The premise: the batch's clock starts before anything the batch relies on is read; it is
the host's monotonic clock, which keeps counting while the process is stopped (SIGSTOP, a
GC, a stalled call; not while the whole host is suspended, which Linux's CLOCK_MONOTONIC
leaves out); and a load returns the metadata the catalog held at some moment during it (no
cache in between: `catalogs.load_table` keeps none). So for every deletion, started at t:
the references name the table as the catalog had it at some moment after `opened`, the
lease row said "ours" at some moment after `opened`, and t < `opened` + `window_s`. A pause anywhere in a batch (in the metadata's
load, in reading what it names, in the checks, between files) only uses up its window: one
longer than it ends the batch, and the next one reads the references and the lease row
again. Hence a file that became live (an import) at least `window_s` before its deletion
would start is in the references and kept, and a forced release (or any loss of the lease)
fences the holder from its next batch on, at most `window_s` after the last lease row it read.

What is left: a pause between one file's check and its deletion call can delete that file
late (one per worker thread); that loses data only if the file became live in between,
which only an import of existing files (`add_files`, a migration) can make happen. And a
file imported less than `window_s` before its deletion can be lost, as with orphan cleanup
by any tool: do not import a table's old unreferenced files while ORPHANS runs on it (README).
A batch whose look at the references and the lease takes longer than `window_s` deletes
nothing (its files go to the next batch); `STALLED_BATCHES` such batches in a row fail the run.

Deletion goes through pyiceberg's FileIO (the one ORPHANS lists with and EXPIRE reads
manifests with), on a bounded thread pool for object stores, in the calling thread for
local files; objects on S3 go 1,000 keys a request (`table/bulk_removal.py`), each request
started under the same checks as a single deletion. A file already gone counts as such, not as an error: a rerun after a killed
run deletes what is left.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Protocol

import structlog
from pyiceberg.io import FileIO
from pyiceberg.table import Table

from maintenance import faults
from maintenance.backoff import doubling
from maintenance.errors import IcemaintError
from maintenance.lease.fence import Fence, FencedError
from maintenance.table.bulk_removal import chunks, delete_objects
from maintenance.table.marks import EPOCH_PROPERTY, parse_epoch
from maintenance.table.paths import is_local, is_s3, local_uri_path, normalise

log = structlog.get_logger(__name__)
WINDOW_S = 2.0  # a batch deletes for at most this long after it began reading its references
BATCH_FILES = 10_000  # and at most this many files
REMOTE_CONCURRENCY = 16  # deletions (or S3 bulk requests) in flight on an object store (latency-bound)
BULK_ROUNDS = 4  # an S3 bulk request's transiently failed keys are sent again up to 3 times
STALLED_BATCHES = 3  # batches in a row that deleted nothing because their window ran out


class References(Protocol):
    """What must not be deleted, as of the newest metadata."""

    def refresh(self) -> Table:
        """Read the newest metadata (adding what it references); return it."""
        ...

    def unreferenced(self, paths: list[str]) -> list[str]:
        """Those of `paths` no metadata read so far names (looked up together)."""
        ...


class RemovalError(IcemaintError):
    """A file could not be deleted (permissions, the store refused): the run fails."""


@dataclass
class Removed:
    """What a deletion did, whatever stopped it: reported in every outcome, fenced included."""

    files: int = 0
    already_gone: int = 0
    now_referenced: int = 0  # planned, but the newest metadata references them: kept
    seconds: float = 0.0  # spent deleting, so far

    def counters(self) -> dict[str, int]:
        rate = round(self.files / self.seconds) if self.seconds else 0
        return {"files_deleted": self.files, "files_already_gone": self.already_gone, "files_referenced_since_planning": self.now_referenced,
                "files_deleted_per_second": rate}


_DELETED, _GONE, _LATE = "deleted", "gone", "late"


class FencedRemover:
    """Deletes paths phase by phase (a phase finishes before the next starts: expiry deletes
    manifest lists last), in batches fenced as the module docstring says."""

    def __init__(self, fence: Fence, references: References, *, progress: Callable[[int], None] = lambda deleted: None,
                 window_s: float = WINDOW_S, batch_files: int = BATCH_FILES, checksums: bool = True) -> None:
        """`checksums=False`: the caller deletes local files' `.NAME.crc` itself (ORPHANS
        lists them, and an orphan's checksum is an orphan too), so none is looked for."""
        self.fence = fence
        self.checksums = checksums
        self.references = references
        self.progress = progress
        self.window_s = window_s
        self.batch_files = batch_files
        self.done = Removed()
        self.looked_s = 0.0  # how long the last batch's look at the references and the lease took
        self._lock = threading.Lock()

    def remove(self, phases: Sequence[Iterable[str]], total: int | None = None) -> Removed:
        """`phases` may be streams (the orphans a plan spooled): each is read a batch at a
        time. `total`, when known, is for progress reports only."""
        started = time.monotonic()
        try:
            self._delete(phases, total)
        finally:
            self.done.seconds = time.monotonic() - started
        return self.done

    def _delete(self, phases: Sequence[Iterable[str]], total: int | None) -> None:
        pool: ThreadPoolExecutor | _InCallingThread | None = None
        try:
            stalled = 0
            for phase in phases:
                pending = iter(phase)
                late: list[str] = []
                while batch := late + list(islice(pending, max(self.batch_files - len(late), 0))):
                    pool = pool or _pool_for(batch)
                    io, deadline = self._before_batch()
                    kept = self.references.unreferenced(batch)
                    self.done.now_referenced += len(batch) - len(kept)
                    late = self._delete_batch(pool, io, kept, deadline)  # to the next batch, after a fresh look
                    stalled = stalled + 1 if late and len(late) == len(kept) else 0
                    if stalled == STALLED_BATCHES:
                        raise RemovalError(f"deleting files stalled: {STALLED_BATCHES} batches in a row found their {self.window_s:g} s window "
                                            f"over before their first file (the catalog or the state database answers too slowly: "
                                            f"the last look at the references and the lease took {self.looked_s:.1f} s)")
                    self.progress(self.done.files)
                    log.debug("deletion batch done", deleted=self.done.files, of=total, late=len(late), looked_s=round(self.looked_s, 3))
        finally:
            if pool is not None:
                pool.shutdown()

    def _before_batch(self) -> tuple[FileIO, float]:
        """Open a batch (the module docstring's proof, in its order): the time first, then the
        newest references, the table token and the lease row; the table's FileIO and the
        monotonic time by which the batch's deletions must have started."""
        opened = time.monotonic()  # before the metadata is loaded: time spent below shortens the window
        newest = self.references.refresh()
        self.fence.assert_table_token(parse_epoch(newest.metadata.properties.get(EPOCH_PROPERTY)), "deleting files")
        self.fence.assert_held("deleting files")  # the lease row, read now: a forced release fences this batch
        if self.fence.time_left() <= 0:
            raise FencedError(f"deleting files refused: the lease on {self.fence.keeper.lease.table} is not proven for long enough "
                              f"(renewals are late; {self.done.files} files deleted)")
        self.looked_s = time.monotonic() - opened
        return newest.io, opened + self.window_s

    def _delete_batch(self, pool: ThreadPoolExecutor | _InCallingThread, io: FileIO, paths: list[str], deadline: float) -> list[str]:
        """Delete a batch's paths; the ones whose window ran out first. Objects on S3 go in
        bulk requests (`table/bulk_removal.py`), the rest one by one."""
        if paths and all(is_s3(path) for path in paths):
            return [path for late in pool.map(lambda chunk: self._delete_chunk(io, chunk, deadline), chunks(paths)) for path in late]
        outcomes = list(pool.map(lambda path: self._delete_one(io, path, deadline), paths))
        return [path for path, outcome in zip(paths, outcomes) if outcome == _LATE]

    def _delete_chunk(self, io: FileIO, chunk: list[str], deadline: float) -> list[str]:
        """One DeleteObjects request (up to 1,000 keys of a bucket), started only while the
        lease is proven and the batch's window is open, like a single deletion; keys S3
        reports as transiently failed are sent again (in the window) a few times."""
        pending = chunk
        for attempt in range(BULK_ROUNDS):
            if self.fence.time_left() <= 0 or time.monotonic() >= deadline:
                return pending
            try:
                failed = delete_objects(getattr(io, "properties", {}), pending)
            except OSError as exc:
                raise RemovalError(f"could not delete {len(pending)} objects (first: {pending[0]}): {exc}") from exc
            with self._lock:
                first = self.done.files == 0 and len(failed) < len(pending)
                self.done.files += len(pending) - len(failed)
            if first:
                faults.point("deleting")
            refused = next((f for f in failed if not f.transient), None)
            if refused is not None:
                raise RemovalError(f"could not delete {refused.path}: {refused.code}")
            pending = [f.path for f in failed]
            if not pending:
                return []
            time.sleep(doubling(0.2, attempt + 1))
        raise RemovalError(f"S3 kept refusing to delete {len(pending)} objects (first: {pending[0]}, {failed[0].code})")

    def _delete_one(self, io: FileIO, path: str, deadline: float) -> str:
        if self.fence.time_left() <= 0 or time.monotonic() >= deadline:
            return _LATE
        local = _plain_local_file(path)
        try:
            if local is not None:
                os.unlink(local)  # what the FileIO would do, without parsing the location again
            else:
                io.delete(path)
        except FileNotFoundError:
            with self._lock:
                self.done.already_gone += 1
            return _GONE
        except OSError as exc:
            raise RemovalError(f"could not delete {path}: {exc}") from exc
        if self.checksums:
            if local is not None:
                _unlink_checksum(local)
            elif is_local(path):
                remove_checksum(path)
        with self._lock:
            self.done.files += 1
            first = self.done.files == 1
        if first:
            faults.point("deleting")
        return _DELETED


def _plain_local_file(path: str) -> str | None:
    """The file a local location names, as pyiceberg's FileIO resolves it (the URI's path,
    not unquoted), for the plain spellings `/x`, `file:/x`, `file:///x`; None otherwise."""
    return None if "?" in path or "#" in path else local_uri_path(path)


def _unlink_checksum(local: str) -> None:
    """`remove_checksum` for a file known by its local path (no location to parse again)."""
    folder, _, name = local.rpartition("/")
    try:
        os.unlink(f"{folder}/.{name}.crc")
    except FileNotFoundError:
        pass


def _pool_for(batch: Sequence[str]) -> ThreadPoolExecutor | _InCallingThread:
    """Object stores (and HDFS) are latency-bound: many deletions in flight. Local disks: the
    calling thread, measured: 100,000 empty files in 100 folders unlinked in 0.9-1.2 s in one
    thread, 5.9-6.4 s on 4 threads, 8.0-8.8 s on 8 (ext4, 2 cores; an unlink is a short
    syscall, and threads add their hand-offs and the directory's lock). Chosen by the first
    batch (a table's files are on one kind of store)."""
    if all(is_local(path) for path in batch):
        return _InCallingThread()
    return ThreadPoolExecutor(max_workers=REMOTE_CONCURRENCY, thread_name_prefix="icemaint-delete")


def remove_checksum(path: str) -> None:
    """The `.NAME.crc` Hadoop's local file system keeps beside a file goes with it, as its
    own `delete` does. Executors in other JVMs (a cluster on a shared disk) write them for the
    files they stage; this process writes none (`spark.session._local_disks_without_forks`),
    so without this every file a job deleted would leave its checksum for ORPHANS. Not
    counted as a file deleted: it was never a file of the table."""
    local = Path(normalise(path))
    try:
        local.with_name(f".{local.name}.crc").unlink()
    except FileNotFoundError:
        pass


def discard_unpublished(fence: Fence, io: FileIO, paths: Sequence[str], window_s: float = WINDOW_S) -> int:
    """Delete files the run wrote and never published (a file group written again at another
    size); how many were deleted. Proof that no reference check is needed: their names are
    fresh (Iceberg's writer names each file with a new UUID) and no commit included them, so
    no snapshot, of this table or any other, can reference them, however long ago they were
    written. They are still deleted only as a batch of `FencedRemover` is, because a holder
    that lost its lease deletes nothing: each only while the lease is proven (else what is left
    is orphan cleanup's), and each less than `window_s` after a read of the lease row said it is
    ours (read first, and again once that is over), so a forced release fences these too."""
    deleted = 0
    opened = time.monotonic()
    fence.assert_held("discarding unpublished files")
    for path in paths:
        if fence.time_left() <= 0:
            log.warning("unpublished files left for orphan cleanup: the lease is not proven", files=len(paths) - deleted)
            break
        if time.monotonic() >= opened + window_s:
            opened = time.monotonic()
            fence.assert_held("discarding unpublished files")
        try:
            io.delete(path)
        except FileNotFoundError:
            continue
        if is_local(path):
            remove_checksum(path)
        deleted += 1
    return deleted


class _InCallingThread:
    """A pool of one: the calling thread (local deletes are syscalls; threads only take turns at the GIL)."""

    def shutdown(self) -> None:
        return None

    def map(self, function: Callable[[str], str], items: Sequence[str]) -> list[str]:
        return [function(item) for item in items]
