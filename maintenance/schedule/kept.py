"""What a daemon's evaluation of a table keeps for its next cycle, while the table stays put.

A table's metadata file never changes once written, and it names everything evaluation
reads: properties, snapshots, and through their manifest lists (immutable too) every
manifest and file. So while the catalog names the same metadata location, the table's
health, the properties its policy is chosen by, and the plans that found nothing to do are
what they were, and evaluating it again reads nothing (no metadata file, no manifest).

What can change with no new metadata, and is therefore never kept:
- the time: the oldest snapshot's age moves with the clock (`Kept.health_at`), and
  `decisions.decide` reads the schedule (every, cron, quiet hours) and the backoff at `now`;
- the run history (`histories.RunHistories` says which tables' runs moved);
- the policies (chosen again from the kept properties every cycle);
- a due job's plan: made again, from the table loaded then (a plan may hold many files,
  and one may depend on the time: `JobSpec.plans_at_a_time`, EXPIRE's retention). Only a
  plan's "nothing to do" is kept, for the jobs whose plans do not depend on the time,
  keyed by their options.

Where the metadata location comes from: the SQL catalog lists every table and its location
in one query (`catalogs.catalog_listing`), so an unchanged table costs no read at all; other
catalogs (Hive, REST) say it only by loading the table (a REST catalog: one request a table,
with the metadata in its answer), so there the metadata is read and its manifests are not.
The kept evaluations live in the daemon's process, and are stored for the other daemons and
for `icemaint plan` and `run` in its state database (`schedule/stored.py`: a daemon that
takes over a share or restarts starts warm, and so does each cron tick; `--fresh` reads
every table); the re-check under a job's lease (`cycle.still_due`) never uses them.
Bounded: the tables its catalogs list.
"""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass, field

from maintenance.catalogs import TableRef
from maintenance.schedule.histories import RunHistories
from maintenance.table.health import TableHealth, oldest_snapshot_age_s


@dataclass
class Kept:
    """One table as its last evaluation saw it."""

    metadata_location: str
    properties: dict[str, str]  # those its policy is chosen by (`policy_properties`)
    health: TableHealth | None  # None: its policy left it alone, so no manifest was read
    oldest_snapshot_ms: int | None  # its oldest snapshot's time: its age at any moment, rounded once as `table_health` does
    nothing_to_do: dict[tuple[str, str], str] = field(default_factory=dict)  # (job, its options' repr) -> the plan's reason

    def health_at(self, now_s: float) -> TableHealth | None:
        """The kept health as it is at `now_s`: only the oldest snapshot's age moved."""
        if self.health is None or self.oldest_snapshot_ms is None:
            return self.health
        moved = copy.copy(self.health)  # what dataclasses.replace makes, without its checks (per table and cycle)
        moved.oldest_snapshot_age_s = oldest_snapshot_age_s(self.oldest_snapshot_ms, now_s)
        return moved


class KeptEvaluations:
    """The daemon's kept evaluations (by table) and run histories, from one cycle to the next."""

    def __init__(self) -> None:
        self._tables: dict[str, Kept] = {}
        self._stored: dict[str, tuple[str, int]] = {}  # table -> (metadata location, plans' "nothing to do") as the state database has it
        self.histories = RunHistories()
        self.reused = 0  # tables of the last cycle evaluated from what was kept (for logs and the bench)
        self._counting = threading.Lock()  # tables are evaluated on several threads (`overlap.in_order`)

    def count_reused(self) -> None:
        with self._counting:
            self.reused += 1

    def get(self, ref: TableRef, metadata_location: str | None) -> Kept | None:
        """What was kept of the table, if it was kept at this very metadata location."""
        found = self._tables.get(str(ref))
        if found is None or metadata_location is None or found.metadata_location != metadata_location:
            return None
        return found

    def keep(self, ref: TableRef, kept: Kept) -> None:
        previous = self._tables.get(str(ref))
        if previous is not None and previous.metadata_location != kept.metadata_location:
            self.histories.forget(str(ref))  # moved: perhaps a new table under the old name
        self._tables[str(ref)] = kept

    def adopt(self, ref: TableRef, kept: Kept) -> None:
        """Keep what another daemon (or this one before a restart) saw, as the database has it."""
        self.keep(ref, kept)
        self.stored_as(ref, kept)

    def unstored(self, refs: list[TableRef]) -> list[tuple[TableRef, Kept]]:
        """Of these tables, those whose kept evaluation the database lacks: new, moved, or
        with a plan's "nothing to do" found since (`stored_as` records what was written)."""
        found = []
        for ref in refs:
            kept = self._tables.get(str(ref))
            if kept is not None and self._stored.get(str(ref)) != _as_stored(kept):
                found.append((ref, kept))
        return found

    def stored_as(self, ref: TableRef, kept: Kept) -> None:
        """Record that the database has this kept evaluation of the table."""
        self._stored[str(ref)] = _as_stored(kept)

    def forget(self, ref: TableRef) -> None:
        self._tables.pop(str(ref), None)
        self._stored.pop(str(ref), None)

    def keep_only(self, tables: set[str]) -> None:
        """Forget every table not listed this cycle (dropped, or its catalog gone)."""
        for table in [t for t in self._tables if t not in tables]:
            del self._tables[table]
            self._stored.pop(table, None)
        self.histories.keep_only(tables)

    def __contains__(self, ref: TableRef) -> bool:
        return str(ref) in self._tables

    def __len__(self) -> int:
        return len(self._tables)


def _as_stored(kept: Kept) -> tuple[str, int]:
    """What tells one kept evaluation from a newer one of the same table: its metadata
    location and how many plans' "nothing to do" it holds (they are only ever added)."""
    return kept.metadata_location, len(kept.nothing_to_do)
