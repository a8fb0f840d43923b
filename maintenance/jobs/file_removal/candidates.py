"""The files a plan would delete (ORPHANS' orphans, EXPIRE's files of expired snapshots),
in the order found: in memory up to a share of the memory budget, then spooled to a
temporary file, so that tens of millions of them cost disk, not memory, between planning
and deleting. A dry run names the first `DETAIL_LIMIT` and counts the rest."""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import IO, Any

from maintenance.table.listing import ListedFile

_LIST_SLOT = 8  # the list's pointer to each held file
DETAIL_LIMIT = 10_000  # paths a dry run's `would_delete` names; the rest are counted (`would_delete_unnamed`)


def named(paths: Iterable[str], count: int) -> dict[str, Any]:
    """A dry run's `would_delete` (the first `DETAIL_LIMIT` of `paths`) and `would_delete_unnamed`
    (the rest of `count`)."""
    first = list(islice(paths, DETAIL_LIMIT))
    return {"would_delete": first, "would_delete_unnamed": count - len(first)}


class Candidates:
    """Locations to delete. `count` and `bytes` cover every one added; iteration yields them
    in the order added (held ones, or all of them from the spool once it was started)."""

    def __init__(self, budget_bytes: int) -> None:
        self.budget_bytes = budget_bytes
        self.count = 0
        self.bytes = 0
        self._held: list[ListedFile] = []
        self._held_bytes = 0
        self._spool: IO[str] | None = None

    @property
    def spooled(self) -> bool:
        return self._spool is not None

    def __len__(self) -> int:
        return self.count

    def add(self, file: ListedFile) -> None:
        self.count += 1
        self.bytes += file.size
        if self._spool is not None:
            self._spool.write(json.dumps([file.location, file.size]) + "\n")  # JSON: a key may hold a newline
            return
        self._held.append(file)
        self._held_bytes += _LIST_SLOT + sys.getsizeof(file) + sys.getsizeof(file.location) + sys.getsizeof(file.relative)
        if self._held_bytes > self.budget_bytes:
            self._spool = tempfile.NamedTemporaryFile("w", encoding="utf-8", prefix="icemaint-orphans-")  # removed when closed
            self._spool.writelines(json.dumps([held.location, held.size]) + "\n" for held in self._held)
            self._held, self._held_bytes = [], 0

    def __iter__(self) -> Iterator[str]:
        return (file.location for file in self.files())

    def files(self) -> Iterator[ListedFile]:
        """The candidates with their sizes (a spooled one's `relative` and `mtime_ms` are not kept)."""
        if self._spool is None:
            yield from list(self._held)
            return
        self._spool.flush()
        with open(self._spool.name, encoding="utf-8") as spooled:  # its own offset: adds still append
            for line in spooled:
                location, size = json.loads(line)
                yield ListedFile(location, "", 0, size)

    def add_path(self, location: str) -> None:
        """A file known by its location only (EXPIRE's, from a manifest: no listing)."""
        self.add(ListedFile(location, "", 0, 0))

    def close(self) -> None:
        if self._spool is not None:
            self._spool.close()
            self._spool = None
        self._held = []
