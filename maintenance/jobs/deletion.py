"""Deleting files under a lease (EXPIRE, ORPHANS): each file only while the lease is proven,
each batch only against references read right before it.

A commit can be made conditional on the table (the fence checks every attempt's base), a
deletion cannot: no store deletes "only if the lease is still mine". So deletions are
fenced in time.

**Why a holder that lost its lease deletes nothing (but the one file in flight).**
- Before each file, `Fence.time_left()` must be positive: the lease is proven on this
  host's monotonic clock until the send time of the last acquisition or renewal the
  database confirmed plus the TTL (`lease.keeper`), and a margin is kept. Another holder
  can take the lease only once the database clock has passed its expiry, which is later
  (an operator's forced release keeps that expiry, `state/leases.py`). So every deletion
  *starts* while no other holder can act on the table.
- Before each batch, the newest metadata is read (only what changed since the last look:
  `table.references.NewestReferences`) and every file it references is taken out; the
  table must carry no newer epoch and the database must still show the lease. A batch
  lasts at most `window_s` past that read: a pause longer than that (SIGSTOP, a GC, a
  stalled request) ends the batch, and the next one reads the references again.

What is left: a pause between one file's check and its deletion call can delete that file
late (one per worker thread); that loses data only if the file became live in between,
which only an import of existing files (`add_files`, a migration) can make happen. And a
file imported within `window_s` before its deletion can be lost, as with orphan cleanup by
any tool: do not import a table's old unreferenced files while ORPHANS runs on it (README).

Deletion goes through pyiceberg's FileIO (the one ORPHANS lists with and EXPIRE reads
manifests with), on a bounded thread pool for object stores, in the calling thread for
local files. A file already gone counts as such, not as an error: a rerun after a killed
run deletes what is left.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import structlog
from pyiceberg.io import FileIO
from pyiceberg.table import Table

from maintenance import faults
from maintenance.errors import IcemaintError
from maintenance.lease.fence import EPOCH_PROPERTY, Fence, FencedError, parse_epoch
from maintenance.table.paths import is_local, normalise

log = structlog.get_logger(__name__)
WINDOW_S = 2.0  # a batch deletes for at most this long after its references were read
BATCH_FILES = 10_000  # and at most this many files
REMOTE_CONCURRENCY = 16  # deletions in flight on an object store (latency-bound)
STALLED_BATCHES = 3  # batches in a row that deleted nothing because their window ran out


class References(Protocol):
    """What must not be deleted, as of the newest metadata."""

    def refresh(self) -> Table:
        """Read the newest metadata (adding what it references); return it."""
        ...

    def __contains__(self, path: str) -> bool: ...


class DeletionError(IcemaintError):
    """A file could not be deleted (permissions, the store refused): the run fails."""


@dataclass
class Deleted:
    """What a deletion did, whatever stopped it: reported in every outcome, fenced included."""

    files: int = 0
    already_gone: int = 0
    now_referenced: int = 0  # planned, but the newest metadata references them: kept

    def counters(self) -> dict[str, int]:
        return {"files_deleted": self.files, "files_already_gone": self.already_gone, "files_referenced_since_planning": self.now_referenced}


_DELETED, _GONE, _LATE = "deleted", "gone", "late"


class FencedDeleter:
    """Deletes paths phase by phase (a phase finishes before the next starts: expiry deletes
    manifest lists last), in batches fenced as the module docstring says."""

    def __init__(self, fence: Fence, references: References, *, progress: Callable[[int], None] = lambda deleted: None,
                 window_s: float = WINDOW_S, batch_files: int = BATCH_FILES) -> None:
        self.fence = fence
        self.references = references
        self.progress = progress
        self.window_s = window_s
        self.batch_files = batch_files
        self.done = Deleted()
        self._lock = threading.Lock()

    def delete(self, phases: Sequence[Sequence[str]]) -> Deleted:
        total = sum(map(len, phases))
        remote = any(not is_local(path) for phase in phases for path in phase)
        with ThreadPoolExecutor(max_workers=REMOTE_CONCURRENCY, thread_name_prefix="icemaint-delete") if remote else _InCallingThread() as pool:
            stalled = 0
            for phase in phases:
                pending = deque(phase)
                while pending:
                    io, deadline = self._before_batch()
                    batch = [pending.popleft() for _ in range(min(self.batch_files, len(pending)))]
                    kept = [path for path in batch if path not in self.references]
                    self.done.now_referenced += len(batch) - len(kept)
                    outcomes = list(pool.map(lambda path: self._delete_one(io, path, deadline), kept))
                    late = [path for path, outcome in zip(kept, outcomes) if outcome == _LATE]
                    pending.extendleft(reversed(late))  # to the next batch, after a fresh look
                    stalled = stalled + 1 if late and len(late) == len(kept) else 0
                    if stalled == STALLED_BATCHES:
                        raise DeletionError(f"deleting files stalled: {STALLED_BATCHES} batches in a row found their {self.window_s:g} s window "
                                            f"over before their first file (the catalog or the state database answers too slowly)")
                    self.progress(self.done.files)
                    log.debug("deletion batch done", deleted=self.done.files, of=total, late=len(late))
        return self.done

    def _before_batch(self) -> tuple[FileIO, float]:
        """Read the newest references, check the table token and the lease; the table's
        FileIO and the monotonic time this batch must end by."""
        newest = self.references.refresh()
        read_at = time.monotonic()
        self.fence.assert_table_token(parse_epoch(newest.metadata.properties.get(EPOCH_PROPERTY)), "deleting files")
        self.fence.assert_held("deleting files")
        if self.fence.time_left() <= 0:
            raise FencedError(f"deleting files refused: the lease on {self.fence.keeper.lease.table} is not proven for long enough "
                              f"(renewals are late; {self.done.files} files deleted)")
        return newest.io, read_at + self.window_s

    def _delete_one(self, io: FileIO, path: str, deadline: float) -> str:
        if self.fence.time_left() <= 0 or time.monotonic() >= deadline:
            return _LATE
        try:
            io.delete(path)
        except FileNotFoundError:
            with self._lock:
                self.done.already_gone += 1
            return _GONE
        except OSError as exc:
            raise DeletionError(f"could not delete {path}: {exc}") from exc
        if is_local(path):
            delete_checksum(path)
        with self._lock:
            self.done.files += 1
            first = self.done.files == 1
        if first:
            faults.point("deleting")
        return _DELETED


def delete_checksum(path: str) -> None:
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


def discard_unpublished(fence: Fence, io: FileIO, paths: Sequence[str]) -> int:
    """Delete files the run wrote and never published (a file group written again at another
    size); how many were deleted. Proof that no reference check is needed: their names are
    fresh (Iceberg's writer names each file with a new UUID) and no commit included them, so
    no snapshot, of this table or any other, can reference them. They are still deleted only
    while the lease is proven, because a holder that lost its lease deletes nothing: what is
    left then is orphan cleanup's."""
    deleted = 0
    for path in paths:
        if fence.time_left() <= 0:
            log.warning("unpublished files left for orphan cleanup: the lease is not proven", files=len(paths) - deleted)
            break
        try:
            io.delete(path)
        except FileNotFoundError:
            continue
        if is_local(path):
            delete_checksum(path)
        deleted += 1
    return deleted


class _InCallingThread:
    """A pool of one: the calling thread (local deletes are syscalls; threads only take turns at the GIL)."""

    def __enter__(self) -> _InCallingThread:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def map(self, function: Callable[[str], str], items: Sequence[str]) -> list[str]:
        return [function(item) for item in items]
