"""Readers' scans of the snapshot a run committed (issue 59).

What a run changed for readers is measured from their own reports: every scan whose
report names the snapshot a committed run made current (Iceberg's `ScanReport` says which
snapshot it read) is added to that run's row (sums only, added by one upsert: several
daemons lose nothing), and `schedule/value.py` compares their mean with the scan the
run's prediction rested on. Only those scans: a streaming writer's next commit adds delete
files again within a minute, and a scan of that snapshot says what the writer added, not
what the run removed (a window of ten minutes after the run, tried first, credited a run on
such a table mostly with scans of later snapshots; `benchmarks/budget_fleet.py`).
"""

from __future__ import annotations

from collections import defaultdict
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
        """Add the scans to the rows of the committed runs that made current the snapshots
        they read; returns how many runs were added to."""
        by_snapshot: dict[tuple[str, int], list[ScanFacts]] = defaultdict(list)
        for scan in scans:
            if scan.snapshot_id is not None:
                by_snapshot[(scan.table, scan.snapshot_id)].append(scan)
        if not by_snapshot:
            return 0
        tables = sorted({table for table, _ in by_snapshot})
        with unavailable_as_error(), self.engine.begin() as conn:
            now_ms = int(conn.execute(select(self._now)).scalar_one())
            made = sorted((r.run_id, r.table_name, r.snapshot_id) for names in in_groups(tables)
                          for r in conn.execute(select(runs.c.run_id, runs.c.table_name, runs.c.snapshot_id).where(
                              runs.c.table_name.in_(names), runs.c.status == COMMITTED, runs.c.snapshot_id.in_(sorted({s for _, s in by_snapshot}))))
                          if (r.table_name, r.snapshot_id) in by_snapshot)
            for run_id, table, snapshot_id in made:
                values = {"run_id": run_id, "last_report_at_ms": now_ms, **per_table(by_snapshot[(table, snapshot_id)], SUMS)[table]}
                conn.execute(upsert(self.engine, run_scans, ("run_id",), values, added=SUMS))
        return len(made)

    def after(self, run_ids: Collection[str]) -> dict[str, ScansAfter]:
        """The scans of the snapshot each run made current, of the runs that have any."""
        found: dict[str, ScansAfter] = {}
        with unavailable_as_error(), self.engine.connect() as conn:
            for ids in in_groups(run_ids):
                for row in conn.execute(select(run_scans).where(run_scans.c.run_id.in_(ids))):
                    n = max(row.scans, 1)
                    found[row.run_id] = ScansAfter(row.scans, ScanShape(row.data_files / n, row.data_bytes / n, row.equality_delete_files / n,
                                                                        row.position_delete_files / n))
        return found
