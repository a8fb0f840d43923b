"""Reading the parent's side of a verification while the change is still being written.

A rewrite of one partition writes with one Spark task, so while it runs a core idles. What
verification will read on the parent's side is known before the change is staged: the
data files the job is about to remove, in the snapshot it planned on. So the verifier reads
them then, in a thread of its own, as it reads everything: its own scan tasks, planned by
Iceberg on that snapshot, through its own reader (`spark.fingerprint.files_fingerprints`),
never the job's (a fault in how the job read its files must still show as a difference).

Why a read done early may stand for one done at verification:
- a snapshot is immutable, so the rows of its files, every delete applied, are the same
  whenever they are read;
- the fingerprint is a sum over rows, so the fingerprints of disjoint sets of files add up
  to the fingerprint of their union (`Fingerprint.plus`);
- a reading is used only for a change whose staged parent is the very snapshot it read (a
  writer that commits first makes it useless, never wrong), and only for files the change
  names as removed, which the verifier then checks against the diff's scope like any file
  it reads early (`publish/proofs/rows.py`);
- rows are hashed in the table's current schema, which can change without a new snapshot
  (a column added while the job writes): a reading is used only under the very schema
  the verification hashes the other side in;
- a reading that failed is not used: those files are read again.

The staged side is read early too: the data files a group has just written, as they are on
disk (no delete applied), while the change is being staged. Such a reading stands for
reading them in the staged snapshot only when, there,
- each file's entry is the one that was read (path, spec, record count, size: the commit
  adds the very records the writer returned, and the reading used their spec and partition
  values, as a snapshot's reader does for identity-partition columns), and was read exactly
  once (a writer may list a file twice, or two groups the same file: Iceberg adds it once,
  while the reading summed its rows twice, which could stand for rows that were lost), and
- no delete may apply to it by the one rule (`table/delete_rule.py`, a superset of what
  Iceberg's planner applies), so a snapshot's read of it is its rows as they are on disk;
else its files are read in the staged snapshot (`publish/proofs/rows.py` checks both).
What is left unused when the run's changes are published (or it fails) is cancelled.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

import structlog

from maintenance.spark.fingerprint import Fingerprint

log = structlog.get_logger(__name__)

WRITTEN = "written"  # the key of readings of files a rewrite wrote (else: the snapshot read)
WrittenEntry = tuple[str, int, int, int]  # a written file as it was read: path, spec id, records, bytes


@dataclass(frozen=True)
class Reading:
    """What one reading read: which of the paths it was asked for, their fingerprint, the
    schema it hashed the rows in (Iceberg's schema JSON), and for written files what each
    file was when read."""

    paths: frozenset[str]
    fingerprint: Fingerprint
    schema: str
    written: tuple[WrittenEntry, ...] = ()  # one per file read, as the writer listed them (a file listed twice was read twice)


@dataclass(frozen=True)
class _Started:
    key: Hashable
    paths: frozenset[str]
    result: Future[Reading]


class ReadAhead:
    """Readings of some data files (of a snapshot, by its id; or just written, by `WRITTEN`),
    done two at a time in threads of their own (a group's files written need not wait for
    the parent's side still being read), each taken at most once."""

    CANCEL_EVERY_S = 0.25

    def __init__(self, cancel: Callable[[], None]) -> None:
        self._cancel = cancel  # cancels the Spark jobs of the readings still running
        self._pool: ThreadPoolExecutor | None = None
        self._readings: list[_Started] = []

    def start(self, key: Hashable, paths: frozenset[str], read: Callable[[], Reading]) -> None:
        """Begin `read` of these data files (after the readings already asked for)."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="icemaint-read-ahead")
        self._readings.append(_Started(key, paths, self._pool.submit(read)))

    def take(self, key: Hashable, paths: frozenset[str], schema: str) -> tuple[frozenset[str], Fingerprint | None]:
        """The fingerprint of what was read ahead of `paths` under `key` in `schema` (waiting
        for readings still running), and which of the paths it holds; each reading is taken once."""
        covered: set[str] = set()
        total: Fingerprint | None = None
        for read in self.take_each(key, paths, schema):
            covered |= read.paths
            total = read.fingerprint if total is None else total.plus(read.fingerprint)
        return frozenset(covered), total

    def take_each(self, key: Hashable, paths: frozenset[str], schema: str) -> list[Reading]:
        """The readings under `key` of some of `paths` that succeeded in `schema` (waiting for
        those still running); each reading is taken once."""
        taken: list[Reading] = []
        for reading in [r for r in self._readings if r.key == key and r.paths <= paths]:
            self._readings.remove(reading)
            try:
                read = reading.result.result()
            except Exception as exc:  # noqa: BLE001 (a failed reading is only not used: verification reads those files itself)
                log.info("a verification read ahead failed; its files are read again", files=len(reading.paths), error=str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
                continue
            if read.schema != schema:
                log.info("the table's schema changed since a verification read ahead; its files are read again", files=len(read.paths))
                continue
            taken.append(read)
        return taken

    def stop(self) -> None:
        """Cancel the readings nobody took and wait for the thread to end. A reading still
        planning has no Spark job to cancel yet, so the cancel is repeated until it ends."""
        if self._pool is None:
            return
        for reading in self._readings:
            reading.result.cancel()
        running = [reading.result for reading in self._readings if not reading.result.done()]
        while running:
            self._cancel()
            running = list(wait(running, timeout=self.CANCEL_EVERY_S).not_done)
        self._pool.shutdown(wait=True)
        self._pool, self._readings = None, []
