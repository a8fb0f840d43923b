"""Readers' scans of the snapshot a run committed (`state/run_scans.py`) on every kind of
state database: credited to the committed run that made that snapshot current, and to no
other run, of its table or another."""

from __future__ import annotations

import uuid

from maintenance.readers.scan_reports import ScanFacts
from maintenance.run.outcome import COMMITTED, FAILED
from maintenance.state.store import StateStore


def scan(table: str, snapshot_id: int | None, data_files: int, equality: int) -> ScanFacts:
    return ScanFacts(table, 1.0, data_files, equality, equality, 0, 1000 * data_files, 10 * equality, 1, snapshot_id)


def finished(state: StateStore, table: str, status: str, snapshot_id: int | None) -> str:
    run_id = str(uuid.uuid4())
    state.runs.start(run_id, table, "merge", holder_id="h", lease_epoch=1)
    state.runs.finish(run_id, status, snapshot_id=snapshot_id)
    return run_id


def test_scans_of_the_snapshot_a_committed_run_made_are_its_own(state: StateStore) -> None:
    table, other = f"c.ns.t_{uuid.uuid4().hex[:8]}", f"c.ns.o_{uuid.uuid4().hex[:8]}"
    made, earlier, failed = finished(state, table, COMMITTED, 7_000_000_000_000_000_002), finished(state, table, COMMITTED, 11), finished(state, table, FAILED, 12)
    elsewhere = finished(state, other, COMMITTED, 7_000_000_000_000_000_002)  # the same id in another table is another snapshot
    writers = 13  # a writer's commit after the run: its scans say what the writer added

    assert state.run_scans.add([scan(table, 7_000_000_000_000_000_002, 2, 0), scan(table, 7_000_000_000_000_000_002, 4, 2),
                                scan(table, writers, 9, 9), scan(table, None, 9, 9), scan(table, 12, 9, 9)]) == 1
    assert state.run_scans.add([scan(table, 7_000_000_000_000_000_002, 3, 1), scan(table, 11, 5, 5)]) == 2

    found = state.run_scans.after([made, earlier, failed, elsewhere])
    assert set(found) == {made, earlier}
    assert found[made].scans == 3 and found[earlier].scans == 1
    assert (found[made].mean.data_files, found[made].mean.equality_delete_files, found[made].mean.data_bytes) == (3.0, 1.0, 3000.0)
