"""A set of path keys that moves to a temporary SQLite file past a memory budget.

Orphan cleanup and expiry hold every file a table references (ORPHANS: every snapshot of
every metadata version the log lists; EXPIRE: the retained snapshots' live files). As
Python strings in a set that is about 150 bytes a file, so 10 million referenced files
would take 1.5 GB. Up to its budget a `KeySet` is a plain set (as fast as one); past it,
every key moves into a private on-disk SQLite database (a B-tree on the key: lookups stay
logarithmic, the page cache is bounded by the same budget) and the set is dropped.

Adds after the spill wait in a small buffer and go to the database, sorted, when it fills
or before the next read, so every read sees every key added before it.
"""

from __future__ import annotations

import sqlite3
import sys
import threading
from collections.abc import Iterable, Iterator

_SLOT_BYTES = 40  # a set's slots per key, amortised over its growth (a set stays under 60% full)
_BUFFER_KEYS = 50_000  # adds buffered after the spill before they are written
_QUERY_KEYS = 500  # keys per IN (...) lookup: under SQLite's bound on host parameters (999 in old builds)


class KeySet:
    """A set of strings in at most about `budget_bytes` of memory (more keys spill to disk).

    Supports what the reference readers use of a set: `add`, `update`, `in`, `len`,
    iteration, and `present` (which of many keys are members, one query per few hundred
    once spilled). Thread-safe: manifests are read on a pool, and a deletion's workers may
    ask while the caller refreshes."""

    def __init__(self, budget_bytes: int = 128 * 1024**2) -> None:
        self.budget_bytes = budget_bytes
        self._held: set[str] = set()
        self._held_bytes = 0
        self._db: sqlite3.Connection | None = None
        self._buffer: set[str] = set()
        self._stored = 0  # keys in the database
        self._lock = threading.RLock()

    @property
    def spilled(self) -> bool:
        return self._db is not None

    def add(self, key: str) -> None:
        self.update((key,))

    def update(self, keys: Iterable[str]) -> None:
        with self._lock:
            for key in keys:
                if self._db is not None:
                    self._buffer.add(key)
                    if len(self._buffer) >= _BUFFER_KEYS:
                        self._flush()
                elif key not in self._held:
                    self._held.add(key)
                    self._held_bytes += sys.getsizeof(key) + _SLOT_BYTES
                    if self._held_bytes > self.budget_bytes:
                        self._spill()

    def __contains__(self, key: object) -> bool:
        with self._lock:
            if self._db is None:
                return key in self._held
            self._flush()
            return self._db.execute("SELECT 1 FROM keys WHERE key = ?", (key,)).fetchone() is not None

    def present(self, keys: list[str]) -> set[str]:
        """The members among `keys`."""
        with self._lock:
            if self._db is None:
                return {key for key in keys if key in self._held}
            self._flush()
            found: set[str] = set()
            for start in range(0, len(keys), _QUERY_KEYS):
                chunk = keys[start : start + _QUERY_KEYS]
                rows = self._db.execute(f"SELECT key FROM keys WHERE key IN ({','.join('?' * len(chunk))})", chunk)
                found.update(row[0] for row in rows)
            return found

    def __len__(self) -> int:
        with self._lock:
            if self._db is None:
                return len(self._held)
            self._flush()
            return self._stored

    def __iter__(self) -> Iterator[str]:
        """Every key (held: a copy taken when iteration starts; spilled: in key order, read a
        page at a time, keys added meanwhile after the current one included)."""
        with self._lock:
            if self._db is None:
                return iter(list(self._held))
            self._flush()
            return self._stream()

    def outside(self, prefix: str) -> Iterator[str]:
        """The keys that do not start with `prefix` (a range query once spilled: the keys of
        another store, usually none, without reading the table's own)."""
        with self._lock:
            if self._db is None:
                return iter([key for key in self._held if not key.startswith(prefix)])
            self._flush()
            if not prefix:
                return iter([])
            upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)  # the first string after every one starting with prefix
            rows = self._db.execute("SELECT key FROM keys WHERE key < ? OR key >= ? ORDER BY key", (prefix, upper))
            return iter([row[0] for row in rows])

    def discard_present(self, keys: Iterable[str]) -> None:
        """Remove each of `keys` that is a member."""
        with self._lock:
            if self._db is None:
                self._held.difference_update(keys)
                return
            self._flush()
            before = self._db.total_changes
            self._db.executemany("DELETE FROM keys WHERE key = ?", ((key,) for key in keys))
            self._stored -= self._db.total_changes - before

    def close(self) -> None:
        """Drop the keys (the database file goes with its connection)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
            self._held, self._buffer, self._held_bytes, self._stored = set(), set(), 0, 0

    def _stream(self) -> Iterator[str]:
        """Every key, a page at a time by key order (a large set is never read whole)."""
        last: str | None = None
        while True:
            with self._lock:
                assert self._db is not None
                self._flush()
                if last is None:
                    rows = self._db.execute("SELECT key FROM keys ORDER BY key LIMIT ?", (_BUFFER_KEYS,)).fetchall()
                else:
                    rows = self._db.execute("SELECT key FROM keys WHERE key > ? ORDER BY key LIMIT ?", (last, _BUFFER_KEYS)).fetchall()
            if not rows:
                return
            yield from (row[0] for row in rows)
            last = rows[-1][0]

    def _spill(self) -> None:
        """Move every held key to a new private on-disk database ("" is SQLite's temporary
        file, deleted when the connection closes)."""
        db = sqlite3.connect("", check_same_thread=False, isolation_level=None)
        cache_kib = max(self.budget_bytes // 1024 // 2, 2048)
        for pragma in ("journal_mode = OFF", "synchronous = OFF", f"cache_size = -{cache_kib}", "temp_store = FILE"):
            db.execute(f"PRAGMA {pragma}")
        db.execute("CREATE TABLE keys (key TEXT PRIMARY KEY) WITHOUT ROWID")
        self._db = db
        self._buffer, self._held, self._held_bytes = self._held, set(), 0
        self._flush()

    def _flush(self) -> None:
        if not self._buffer or self._db is None:
            return
        before = self._db.total_changes
        self._db.execute("BEGIN")
        self._db.executemany("INSERT OR IGNORE INTO keys VALUES (?)", ((key,) for key in sorted(self._buffer)))
        self._db.execute("COMMIT")
        self._stored += self._db.total_changes - before
        self._buffer = set()
