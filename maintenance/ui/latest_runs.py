"""The newest run of every (table, job), kept between views of the overview.

The overview lists failing tables first, so every view needs every table's newest runs:
40,000 rows for 10,000 tables and four jobs, read and turned into records at every view
(80% of an 0.8 s view, docs/benchmarks.md). Yet a table's newest runs change only when one
of its runs starts or ends, or, while a run is running, as it reports its progress step. So they
are kept, and each view asks the state database which tables had a run start or end since
the previous view asked (`RunStore.tables_with_runs_since`, the daemon's question and its
margin: `schedule/histories.py`), and reads again only those tables and the tables whose
kept newest run is still running. Deleted rows change no time, so everything is read again
every `FULL_REFRESH_S`, as the daemon's histories are.

Beside the newest runs it keeps each (table, job)'s newest *verdict*: its newest run that
ended saying whether the job works (`VERDICTLESS` passed over: running, skipped,
interrupted). A table is failing while a verdict is a failure, so a failed run stops
counting once a later run of that job succeeds, and an interrupted one never counts.
"""

from __future__ import annotations

import threading

from maintenance.schedule.histories import FULL_REFRESH_S, MARGIN_MS
from maintenance.state.runs import RUNNING, VERDICTLESS, RunRecord
from maintenance.state.store import StateStore

MOST_AT_ONCE = 500  # tables read again by name; more, and everything is read (one query either way)


class LatestRuns:
    """Every table's newest run per job, read in full once and then only where runs moved."""

    def __init__(self) -> None:
        self._by_table: dict[str, dict[str, RunRecord]] = {}
        self._verdicts: dict[str, dict[str, RunRecord]] = {}
        self._asked_at_ms: int | None = None  # the database's clock when the last view asked
        self._all_read_at_ms: int | None = None
        self._lock = threading.Lock()  # views are served on several threads

    def read(self, state: StateStore) -> dict[str, dict[str, RunRecord]]:
        """table -> job -> its newest run that was not skipped, as the database has them now."""
        return self.read_with_verdicts(state)[0]

    def read_with_verdicts(self, state: StateStore) -> tuple[dict[str, dict[str, RunRecord]], dict[str, dict[str, RunRecord]]]:
        """(the newest runs, the newest verdicts), each table -> job -> run, as of one read."""
        with self._lock:
            now_ms = state.runs.database_now_ms()
            if self._asked_at_ms is None or self._all_read_at_ms is None or now_ms - self._all_read_at_ms >= FULL_REFRESH_S * 1000:
                self._read_all(state)
                self._all_read_at_ms = now_ms
            else:
                moved = state.runs.tables_with_runs_since(self._asked_at_ms - MARGIN_MS)
                moved |= {table for table, jobs in self._by_table.items() if any(run.status == RUNNING for run in jobs.values())}
                if len(moved) > MOST_AT_ONCE:
                    self._read_all(state)
                elif moved:
                    fresh = _by_table(state.runs.latest_per_job(moved))
                    verdicts = _by_table(state.runs.latest_per_job(moved, ignoring=VERDICTLESS))
                    for table in moved:
                        self._by_table.pop(table, None)
                        self._verdicts.pop(table, None)
                    self._by_table.update(fresh)
                    self._verdicts.update(verdicts)
            self._asked_at_ms = now_ms
            return dict(self._by_table), dict(self._verdicts)  # the view's own: another view may update the kept ones meanwhile

    def _read_all(self, state: StateStore) -> None:
        self._by_table = _by_table(state.runs.latest_per_job())
        self._verdicts = _by_table(state.runs.latest_per_job(ignoring=VERDICTLESS))


def _by_table(records: list[RunRecord]) -> dict[str, dict[str, RunRecord]]:
    out: dict[str, dict[str, RunRecord]] = {}
    for run in records:
        out.setdefault(run.table, {})[run.job] = run
    return out
