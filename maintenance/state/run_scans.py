"""Readers' scans of a table in the minutes after a run committed on it (issue 59).

What a run changed for readers is measured from their own reports: every scan of a table
reported within `AFTER_RUN_MS` of a committed run's end is added to that run's row (sums
only, added by one upsert: several daemons lose nothing), and `schedule/value.py` compares
their mean with the scan the run's prediction rested on. The window is short on purpose:
a streaming table gathers delete files again within minutes, and the scans right after
the run are the ones that show what it removed.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from sqlalchemy import Engine, select

from maintenance.readers.scan_reports import ScanFacts
from maintenance.run.outcome import COMMITTED
from maintenance.state.database import db_now_ms, in_groups, unavailable_as_error
from maintenance.state.scan_days import per_table
from maintenance.state.schema import RunRow, RunScanRow
from maintenance.state.upserts import upsert
from maintenance.table.reader_cost import ScanShape

run_scans = RunScanRow.__table__
runs = RunRow.__table__
AFTER_RUN_MS = 10 * 60 * 1000
SUMS = ("scans", "data_files", "data_bytes", "equality_delete_files", "position_delete_files")


@dataclass(frozen=True)
class ScansAfter:
    scans: int
    mean: ScanShape  # one scan, on average


class RunScanStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._now = db_now_ms(engine)

    def add(self, scans: Iterable[ScanFacts]) -> int:
        """Add the scans to the rows of the runs that committed on their tables within
        `AFTER_RUN_MS`; returns how many runs were added to."""
        sums = per_table(scans, SUMS)
        if not sums:
            return 0
        with unavailable_as_error(), self.engine.begin() as conn:
            now_ms = int(conn.execute(select(self._now)).scalar_one())
            recent = [(r.run_id, r.table_name) for names in in_groups(sums)
                      for r in conn.execute(select(runs.c.run_id, runs.c.table_name).where(
                          runs.c.table_name.in_(names), runs.c.status == COMMITTED, runs.c.ended_at_ms >= now_ms - AFTER_RUN_MS))]
            for run_id, table in sorted(recent):
                values = {"run_id": run_id, "last_report_at_ms": now_ms, **sums[table]}
                conn.execute(upsert(self.engine, run_scans, ("run_id",), values, added=SUMS))
        return len(recent)

    def after(self, run_ids: Collection[str]) -> dict[str, ScansAfter]:
        """The scans reported after each run, of the runs that have any."""
        found: dict[str, ScansAfter] = {}
        with unavailable_as_error(), self.engine.connect() as conn:
            for ids in in_groups(run_ids):
                for row in conn.execute(select(run_scans).where(run_scans.c.run_id.in_(ids))):
                    n = max(row.scans, 1)
                    found[row.run_id] = ScansAfter(row.scans, ScanShape(row.data_files / n, row.data_bytes / n, row.equality_delete_files / n,
                                                                        row.position_delete_files / n))
        return found
