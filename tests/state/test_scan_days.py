"""Readers' scans summed per table and day (`state/scan_days.py`) on every kind of state
database: batches add up, concurrent batches from several daemons lose nothing, old days
are dropped, and a summary weighs days by age."""

from __future__ import annotations

import threading
import uuid

from sqlalchemy import insert, select

from maintenance.readers.scan_reports import ScanFacts
from maintenance.state.scan_days import DAY_MS, HALF_LIFE_DAYS, KEEP_DAYS, SUMS, ScanDayStore, scan_days
from maintenance.state.store import StateStore


def scan(table: str, data_files: int = 3, delete_files: int = 2, planning_ms: float = 1.5) -> ScanFacts:
    return ScanFacts(table=table, planning_ms=planning_ms, data_files=data_files, delete_files=delete_files, equality_delete_files=1,
                     position_delete_files=delete_files - 1, data_bytes=1000 * data_files, delete_bytes=100 * delete_files, manifests_read=2)


def name() -> str:
    return f"cat.ns.t_{uuid.uuid4().hex[:8]}"


def today(state: StateStore) -> int:
    with state.engine.connect() as conn:
        return int(conn.execute(select(state.scans._now)).scalar_one()) // DAY_MS  # noqa: SLF001 (the database's day)


def test_batches_add_up_per_table(state: StateStore) -> None:
    read, other = name(), name()

    assert state.scans.add([scan(read, 4, 2), scan(read, 2, 0), scan(other)]) == 3
    assert state.scans.add([scan(read, 6, 4, planning_ms=4.5)]) == 1

    found = state.scans.summaries([read, other, name()])
    assert set(found) == {read, other}
    mine = found[read]
    assert mine.scans == 3
    assert mine.data_files == (4 + 2 + 6) / 3 and mine.delete_files == (2 + 0 + 4) / 3
    assert mine.data_bytes == 4000 and mine.delete_bytes == 200 and mine.manifests_read == 2
    assert abs(mine.planning_ms - 2.5) < 1e-9
    assert found[other].scans == 1
    assert mine.scans_per_day >= 3  # three scans in at most the part of today that passed (an hour at least)


def test_daemons_adding_at_once_lose_no_scan(state: StateStore) -> None:
    """Four stores (as four daemons would have) add to one table's row of today at once:
    each addition adds to what is there, so every scan is counted."""
    table = name()
    stores = [ScanDayStore(state.engine) for _ in range(4)]
    failures: list[BaseException] = []

    def add(store: ScanDayStore) -> None:
        try:
            for _ in range(25):
                store.add([scan(table), scan(table)])
        except BaseException as exc:  # noqa: BLE001 (reported below)
            failures.append(exc)

    threads = [threading.Thread(target=add, args=(store,)) for store in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)

    assert failures == []
    assert state.scans.summaries([table])[table].scans == 4 * 25 * 2


def test_old_days_are_dropped_and_days_weigh_by_age(state: StateStore) -> None:
    table, day = name(), today(state)
    old = {name: 0 for name in SUMS}
    with state.engine.begin() as conn:
        for back, scans in ((KEEP_DAYS + 3, 50), (14, 40)):  # one day past keeping, one two half-lives ago
            conn.execute(insert(scan_days).values(table_name=table, day=day - back, last_report_at_ms=0, **{**old, "scans": scans}))
    fresh = ScanDayStore(state.engine)  # prunes with its first batch of a day

    fresh.add([scan(table)])

    with state.engine.connect() as conn:
        days = sorted(r.day for r in conn.execute(select(scan_days.c.day).where(scan_days.c.table_name == table)))
    assert days == [day - 14, day]
    summary = fresh.summaries([table])[table]
    assert summary.scans == 41
    weight = 0.5 ** (14 / HALF_LIFE_DAYS)
    exposure_low = sum(0.5 ** (d / HALF_LIFE_DAYS) for d in range(1, 15))  # the 14 days before today, today adds up to one more
    assert weight * 40 / (exposure_low + 1) <= summary.scans_per_day <= (weight * 40 + 1) / (exposure_low + 1 / 24)
