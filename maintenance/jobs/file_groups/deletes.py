"""Which delete files a commit of rewritten groups may drop.

A delete file may go once every live data file it applies to has been rewritten with it
applied: the rows it deletes are then gone from the data, and it applies to nothing live.
The new files keep the planning snapshot's data sequence number, which is at least every
planned delete's own, so no equality delete of the plan applies to them (it needs a
strictly lower number), and a position delete names old paths only. A delete that applies
to no live file at planning (dangling) goes with the first commit.

"Applies to" is the one rule's (`maintenance.table.delete_rule`), a superset of Iceberg's own:
a delete may be kept longer than needed, never dropped early. Partial progress relies on
this: after a commit that rewrote some of a delete's files, the delete stays, and keeps
applying to the others only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from maintenance.table.delete_rule import DeleteIndex
from maintenance.table.files import SnapshotFiles, TableFile


def applied_deletes(files: SnapshotFiles, index: DeleteIndex) -> dict[str, list[TableFile]]:
    """Live data file path -> the deletes of `index` that apply to it (the one rule)."""
    return {data.path: index.deletes_for(data) for data in files.data}


def delete_reach(files: SnapshotFiles, deletes: Sequence[TableFile], applied: Mapping[str, Sequence[TableFile]] | None = None) -> dict[str, set[str]]:
    """Delete record key (`TableFile.key`) -> every live data file path it applies to (empty:
    dangling); from `applied` (data path -> the deletes that apply to it) when the plan has it."""
    reach: dict[str, set[str]] = {d.key: set() for d in deletes}
    if applied is None:
        applied = applied_deletes(files, DeleteIndex(files, deletes))
    for path, applying in applied.items():
        for delete in applying:
            if delete.key in reach:
                reach[delete.key].add(path)
    return reach


class DroppableDeletes:
    """Tracks, across a run's commits, the deletes (by record key) whose every data file has been rewritten."""

    def __init__(self, reach: dict[str, set[str]]) -> None:
        self._remaining = {path: set(data) for path, data in reach.items()}

    def covered_by(self, rewritten: Iterable[str]) -> list[str]:
        """The deletes that may go once `rewritten` data files (cumulatively, with the
        rewrites `committed` before) are rewritten; nothing is marked until `committed`, so
        a commit that is refused and tried again with fewer groups asks again."""
        done = set(rewritten)
        return sorted(path for path, data in self._remaining.items() if not data - done)

    def committed(self, rewritten: Iterable[str], dropped: Iterable[str]) -> None:
        """A commit rewrote `rewritten` and dropped `dropped` (deletes a writer removed
        meanwhile count as dropped: they are gone either way)."""
        done = set(rewritten)
        for path in dropped:
            self._remaining.pop(path, None)
        for data in self._remaining.values():
            data -= done

    @property
    def kept(self) -> list[str]:
        return sorted(self._remaining)


def coverable(reach: dict[str, set[str]], rewritten: set[str]) -> list[str]:
    """The deletes a run that rewrites `rewritten` drops by its end."""
    return sorted(path for path, data in reach.items() if data <= rewritten)
