"""Readers' scans of each table, summed per day, in the state database (issue 59).

Each batch of scan reports a daemon takes (`readers/endpoint.py`) adds to one row per table
and day: counts and sums only, so several daemons (behind one address, or a restarted one)
add to the same rows without reading them first: each addition is one upsert that adds
to what is there, and none is lost to another. The day is the database's (UTC), like every
time here. Rows older than `KEEP_DAYS` are deleted (once a day by each store), so the
summary is bounded: at most `KEEP_DAYS + 1` rows a table, whatever the readers do.

A table's summary weighs its days by age (half each `HALF_LIFE_DAYS`): a table read all last
month and not since reads as rarely read within a week or two. Today counts for the part of
it that has passed (at least an hour, so the first report of a day does not read as a day's
worth of scans in a minute).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from sqlalchemy import Engine, delete, select

from maintenance.readers.scan_reports import ScanFacts
from maintenance.state.database import db_now_ms, in_groups, unavailable_as_error
from maintenance.state.schema import ScanDayRow
from maintenance.state.upserts import upsert

scan_days = ScanDayRow.__table__
DAY_MS = 86_400_000
KEEP_DAYS = 28
HALF_LIFE_DAYS = 7.0
MIN_TODAY = 1 / 24  # of a day: today's exposure is at least an hour
SUMS = ("scans", "planning_us", "data_files", "delete_files", "equality_delete_files", "position_delete_files", "data_bytes", "delete_bytes", "manifests_read")


@dataclass(frozen=True)
class ReadSummary:
    """What readers' scans of one table cost, by recent days, weighed by age."""

    table: str
    scans_per_day: float
    planning_ms: float  # per scan, and so on below
    data_files: float
    delete_files: float
    equality_delete_files: float
    position_delete_files: float
    data_bytes: float
    delete_bytes: float
    manifests_read: float
    scans: int  # reported in the days kept, unweighed
    last_report_at_ms: int


def per_table(scans: Iterable[ScanFacts], names: tuple[str, ...]) -> dict[str, dict[str, int]]:
    """The named sums of a batch's scans, per table: `scans` counts them, `planning_us` is
    their planning time in microseconds, any other name a field of `ScanFacts` summed."""
    sums: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(names, 0))
    for scan in scans:
        table = sums[scan.table]
        for name in names:
            table[name] += 1 if name == "scans" else round(scan.planning_ms * 1000) if name == "planning_us" else getattr(scan, name)
    return sums


class ScanDayStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._now = db_now_ms(engine)
        self._pruned_day: int | None = None
        self._prune_lock = threading.Lock()

    def add(self, scans: Iterable[ScanFacts]) -> int:
        """Add the scans to their tables' rows of today, in one transaction; returns how many."""
        sums = per_table(scans, SUMS)
        if not sums:
            return 0
        with unavailable_as_error(), self.engine.begin() as conn:
            now_ms = int(conn.execute(select(self._now)).scalar_one())
            day = now_ms // DAY_MS
            for table in sorted(sums):  # one order for every daemon: no two transactions wait on each other's rows
                values = {"table_name": table, "day": day, "last_report_at_ms": now_ms, **sums[table]}
                conn.execute(upsert(self.engine, scan_days, ("table_name", "day"), values, added=SUMS))
        self._prune(day)
        return sum(table_sums["scans"] for table_sums in sums.values())

    def summaries(self, tables: Collection[str] | None = None) -> dict[str, ReadSummary]:
        """The summary of each table with reports in the days kept (of `tables`, else all)."""
        rows: dict[str, list[ScanDayRow]] = defaultdict(list)
        with unavailable_as_error(), self.engine.connect() as conn:
            now_ms = int(conn.execute(select(self._now)).scalar_one())
            since = now_ms // DAY_MS - KEEP_DAYS
            if tables is None:
                found = conn.execute(select(scan_days).where(scan_days.c.day >= since)).all()
            else:
                found = [row for names in in_groups(tables)
                         for row in conn.execute(select(scan_days).where(scan_days.c.table_name.in_(names), scan_days.c.day >= since))]
        for row in found:
            rows[row.table_name].append(row)
        return {table: _summary(table, days, now_ms) for table, days in rows.items()}

    def _prune(self, day: int) -> None:
        with self._prune_lock:
            if self._pruned_day == day:
                return
            self._pruned_day = day
        with unavailable_as_error(), self.engine.begin() as conn:
            conn.execute(delete(scan_days).where(scan_days.c.day < day - KEEP_DAYS))


def _summary(table: str, days: list[ScanDayRow], now_ms: int) -> ReadSummary:
    today = now_ms // DAY_MS
    first = min(row.day for row in days)
    weight = lambda day: 0.5 ** ((today - day) / HALF_LIFE_DAYS)  # noqa: E731
    exposure = sum(weight(day) for day in range(first, today)) + weight(today) * max(MIN_TODAY, (now_ms % DAY_MS) / DAY_MS)
    weighed = {name: sum(weight(row.day) * getattr(row, name) for row in days) for name in SUMS}
    scans = weighed["scans"] or 1.0
    per_scan = {name: weighed[name] / scans for name in SUMS}
    return ReadSummary(
        table=table,
        scans_per_day=weighed["scans"] / exposure,
        planning_ms=per_scan["planning_us"] / 1000,
        data_files=per_scan["data_files"],
        delete_files=per_scan["delete_files"],
        equality_delete_files=per_scan["equality_delete_files"],
        position_delete_files=per_scan["position_delete_files"],
        data_bytes=per_scan["data_bytes"],
        delete_bytes=per_scan["delete_bytes"],
        manifests_read=per_scan["manifests_read"],
        scans=sum(row.scans for row in days),
        last_report_at_ms=max(row.last_report_at_ms for row in days),
    )
