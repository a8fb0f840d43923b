"""Readers' scans just after a run (`state/run_scans.py`) on every kind of state database:
credited to the committed runs of their table that ended within the window, and to no other."""

from __future__ import annotations

import uuid

from sqlalchemy import update

from maintenance.readers.scan_reports import ScanFacts
from maintenance.run.outcome import COMMITTED, FAILED
from maintenance.state.run_scans import AFTER_RUN_MS
from maintenance.state.schema import RunRow
from maintenance.state.store import StateStore


def scan(table: str, data_files: int, equality: int) -> ScanFacts:
    return ScanFacts(table, 1.0, data_files, equality, equality, 0, 1000 * data_files, 10 * equality, 1)


def finished(state: StateStore, table: str, status: str, ended_ago_ms: int = 0) -> str:
    run_id = str(uuid.uuid4())
    state.runs.start(run_id, table, "merge", holder_id="h", lease_epoch=1)
    state.runs.finish(run_id, status)
    if ended_ago_ms:
        with state.engine.begin() as conn:
            conn.execute(update(RunRow.__table__).where(RunRow.__table__.c.run_id == run_id)
                         .values(ended_at_ms=RunRow.__table__.c.ended_at_ms - ended_ago_ms))
    return run_id


def test_scans_after_a_committed_run_are_its_own(state: StateStore) -> None:
    table, other = f"c.ns.t_{uuid.uuid4().hex[:8]}", f"c.ns.o_{uuid.uuid4().hex[:8]}"
    just_now, failed, long_ago = finished(state, table, COMMITTED), finished(state, table, FAILED), finished(state, table, COMMITTED, AFTER_RUN_MS + 60_000)
    elsewhere = finished(state, other, COMMITTED)

    assert state.run_scans.add([scan(table, 2, 0), scan(table, 4, 2), scan(table, 3, 1)]) == 1
    assert state.run_scans.add([scan(table, 3, 1)]) == 1

    found = state.run_scans.after([just_now, failed, long_ago, elsewhere])
    assert set(found) == {just_now}
    assert found[just_now].scans == 4
    assert (found[just_now].mean.data_files, found[just_now].mean.equality_delete_files, found[just_now].mean.data_bytes) == (3.0, 1.0, 3000.0)
