"""The run histories a daemon's evaluation decides on, kept between its cycles.

Reading each table's run history is a query per table and cycle (10,000 a cycle for a
fleet of 10,000 tables), yet a table's history changes only when one of its runs starts or
ends. So the histories are kept, and each cycle asks the state database once which tables
had a run start or end since the previous cycle asked (`RunStore.tables_with_runs_since`,
on the database's clock, with a margin for a row written just before that moment and
committed after it); only those tables' histories are read again. Rows deleted (the
demo forgets its table's runs as it recreates it, an operator cleans up) change no time,
so a table whose metadata location moved has its history read again too
(`schedule/kept.py`), and every history is read again every `FULL_REFRESH_S`.

What is kept of a history is what `decisions.decide` reads of it: for each job, its runs
newest first down to its newest run that counts for the schedule (committed or noop),
that run included. Whatever is older changes no decision (the backoff counts failures
since the newest such run; the schedule looks at that run alone).

Why a kept history can never make a run happen twice: a decision only chooses what to try;
the job runs after its lease is taken and `cycle.still_due` has read the table and its
history again from the database.
"""

from __future__ import annotations

from collections.abc import Iterable

from maintenance.schedule.decisions import DONE
from maintenance.state.runs import RunRecord
from maintenance.state.store import StateStore

HISTORY_LIMIT = 50  # runs read per table: enough for the longest backoff (`decisions.BACKOFF_MAX_S`)
MARGIN_MS = 60_000  # a run written this long before the previous question is asked about again
FULL_REFRESH_S = 600.0  # every history is read again this often (rows deleted change no time)


def decisive(history: Iterable[RunRecord]) -> list[RunRecord]:
    """Of a history (newest first), what a decision reads: per job, the runs down to and
    including its newest that counts for the schedule."""
    kept, settled = [], set()
    for run in history:
        if run.job in settled:
            continue
        kept.append(run)
        if run.status in DONE:
            settled.add(run.job)
    return kept


class RunHistories:
    """Each table's decisive history, read once and again only after its runs moved."""

    def __init__(self) -> None:
        self._by_table: dict[str, list[RunRecord]] = {}
        self._asked_at_ms: int | None = None  # the database's clock when the last cycle asked
        self._all_read_at_ms: int | None = None  # when every history was last forgotten (database clock)

    def refresh(self, state: StateStore) -> None:
        """At the start of a cycle: forget the histories of tables whose runs moved since the
        previous cycle asked (all of them on the first)."""
        now_ms = state.runs.database_now_ms()
        if self._asked_at_ms is None or self._all_read_at_ms is None or now_ms - self._all_read_at_ms >= FULL_REFRESH_S * 1000:
            self._by_table.clear()
            self._all_read_at_ms = now_ms
        else:
            for table in state.runs.tables_with_runs_since(self._asked_at_ms - MARGIN_MS):
                self._by_table.pop(table, None)
        self._asked_at_ms = now_ms

    def read_missing(self, state: StateStore, tables: Iterable[str]) -> None:
        """Read at once the histories of these tables that are not kept (`RunStore.newest_of`),
        so that `of` finds them: what `of` would read one query per table."""
        missing = [table for table in tables if table not in self._by_table]
        if not missing:
            return
        for table, history in state.runs.newest_of(missing, HISTORY_LIMIT).items():
            self._by_table[table] = decisive(history)

    def of(self, state: StateStore, table: str) -> list[RunRecord]:
        """The table's decisive history (read now if not kept)."""
        found = self._by_table.get(table)
        if found is None:
            found = self._by_table[table] = decisive(state.runs.list(table=table, limit=HISTORY_LIMIT))
        return found

    def forget(self, table: str) -> None:
        """Read the table's history again when next asked (its metadata moved: it may be a new
        table under the old name, whose old runs were deleted)."""
        self._by_table.pop(table, None)

    def keep_only(self, tables: set[str]) -> None:
        """Forget the tables no longer listed (dropped, or their catalog gone)."""
        for table in [t for t in self._by_table if t not in tables]:
            del self._by_table[table]
