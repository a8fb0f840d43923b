"""The Python model of a CDC table: which rows it must hold after each commit.

Batches are planned here the way a streaming upsert sink plans a flush: every event
appends a row version to the batch's data file for its partition; an update or delete
of a key that existed before the batch adds that key to the batch's equality deletes;
one of a key already written in this batch adds a position delete on that earlier row.
Everything is derived from the seed, so a workload is reproducible.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from decimal import Decimal

from maintenance.workload.shape import TableShape

Key = tuple[int, ...]
Row = tuple  # values in COLUMN_NAMES order
_STATUSES = ("new", "paid", "shipped", "returned", "cancelled")
_EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)


@dataclass
class PartitionBatch:
    """What one commit writes into one partition."""

    rows: list[Row] = field(default_factory=list)
    equality_deletes: list[Key] = field(default_factory=list)
    position_deletes: list[int] = field(default_factory=list)  # positions in `rows`


@dataclass(frozen=True)
class Change:
    """One event of the stream: `row` is the key's new version (for a delete, the version
    deleted); `previous` the version it supersedes (None for an insert)."""

    kind: str  # "insert" | "update" | "delete"
    key: Key
    row: Row
    previous: Row | None


@dataclass
class Batch:
    """One commit: its events grouped by partition path ('' when unpartitioned)."""

    partitions: dict[str, PartitionBatch] = field(default_factory=dict)
    inserts: int = 0
    updates: int = 0
    deletes: int = 0

    def partition(self, path: str) -> PartitionBatch:
        if path not in self.partitions:
            self.partitions[path] = PartitionBatch()
        return self.partitions[path]


class CdcModel:
    """The live rows by key, plus what is needed to pick keys uniformly and mint new ones."""

    def __init__(self, shape: TableShape, partition_path: Callable[[Row], str], seed: str) -> None:
        self.shape = shape
        self.partition_path = partition_path
        self.rng = random.Random(seed)
        self.rows: dict[Key, Row] = {}
        self._keys: list[Key] = []
        self._key_index: dict[Key, int] = {}
        self._next_id: dict[int, int] = {}
        self._clock = 0

    # -- state -----------------------------------------------------------------------
    def load(self, rows: Iterable[Row]) -> None:
        """Start from rows already in the table (when extending one)."""
        for row in rows:
            self._put(self.key_of(row), row)
            region = row[1] if self.shape.key == "composite" else 0
            self._next_id[region] = max(self._next_id.get(region, 0), row[0] + 1)

    def key_of(self, row: Row) -> Key:
        return (row[1], row[0]) if self.shape.key == "composite" else (row[0],)

    def _put(self, key: Key, row: Row) -> None:
        if key not in self.rows:
            self._key_index[key] = len(self._keys)
            self._keys.append(key)
        self.rows[key] = row

    def _drop(self, key: Key) -> None:
        del self.rows[key]
        index = self._key_index.pop(key)
        last = self._keys.pop()
        if index < len(self._keys):
            self._keys[index] = last
            self._key_index[last] = index

    # -- generation --------------------------------------------------------------------
    def next_change(self, update_ratio: float, delete_ratio: float) -> Change:
        """The next event, applied to the model: a new key, a new version of a live key, or a
        live key deleted (drawn uniformly among the live keys)."""
        draw = self.rng.random()
        if not self._keys or draw >= delete_ratio + update_ratio:
            key = self._new_key()
            row = self._new_row(key, 1)
            self._put(key, row)
            return Change("insert", key, row, None)
        key = self._keys[self.rng.randrange(len(self._keys))]
        previous = self.rows[key]
        if draw < delete_ratio:
            self._drop(key)
            return Change("delete", key, previous, previous)
        row = self._new_row(key, previous[6] + 1)
        self._put(key, row)
        return Change("update", key, row, previous)

    def plan_changes(self, events: int, update_ratio: float, delete_ratio: float) -> list[Change]:
        """The events of a stream, in order (what a streaming writer sends)."""
        return [self.next_change(update_ratio, delete_ratio) for _ in range(events)]

    def plan_batch(self, events: int, update_ratio: float, delete_ratio: float) -> Batch:
        batch = Batch()
        written: dict[Key, tuple[str, int]] = {}  # key -> (partition, position) of its live row in this batch
        for _ in range(events):
            change = self.next_change(update_ratio, delete_ratio)
            if change.previous is not None:
                self._supersede(batch, written, change.key, change.previous)
            if change.kind == "delete":
                written.pop(change.key, None)
                batch.deletes += 1
                continue
            if change.kind == "insert":
                batch.inserts += 1
            else:
                batch.updates += 1
            path = self.partition_path(change.row)
            part = batch.partition(path)
            written[change.key] = (path, len(part.rows))
            part.rows.append(change.row)
        for part in batch.partitions.values():
            part.position_deletes.sort()
        return batch

    def _supersede(self, batch: Batch, written: dict[Key, tuple[str, int]], key: Key, previous: Row) -> None:
        """Delete the key's previous version: by position if this batch wrote it, else by equality."""
        if key in written:
            path, position = written[key]
            batch.partition(path).position_deletes.append(position)
        else:
            batch.partition(self.partition_path(previous)).equality_deletes.append(key)

    def _new_key(self) -> Key:
        if self.shape.key == "composite":
            region = self.rng.randrange(self.shape.partitions)
            next_id = self._next_id.get(region, 1)
            self._next_id[region] = next_id + 1
            return (region, next_id)
        next_id = self._next_id.get(0, 1)
        self._next_id[0] = next_id + 1
        return (next_id,)

    def _new_row(self, key: Key, version: int) -> Row:
        if self.shape.key == "composite":
            region, row_id = key
        else:
            (row_id,) = key
            region = row_id % self.shape.partitions
        self._clock += 1
        rng = self.rng
        return (
            row_id,
            region,
            f"customer-{rng.randrange(5000):04d}",
            Decimal(rng.randrange(0, 100_000_00)) / 100,
            rng.choice(_STATUSES),
            _EPOCH + timedelta(milliseconds=self._clock),
            version,
        )
