"""The run store (`state/runs.py`) on every kind of state database: the run history round
trip, runs of a dead holder abandoned, and the queries that read many tables at once
against the one-table query they stand for."""

from __future__ import annotations

import time
import uuid

from maintenance.state.store import StateStore


def test_newest_of_many_tables_is_what_each_tables_own_listing_gives(state: StateStore) -> None:
    """Runs started within one millisecond included (the listing orders them by run id)."""
    prefix = f"cat.ns.{uuid.uuid4().hex[:8]}_"
    busy, quiet, idle = f"{prefix}busy", f"{prefix}quiet", f"{prefix}idle"
    for table, count in ((busy, 7), (quiet, 2)):
        for n in range(count):
            run_id = str(uuid.uuid4())
            state.runs.start(run_id, table, ("merge", "expire")[n % 2], holder_id="h", lease_epoch=n)
            state.runs.finish(run_id, ("committed", "failed", "noop")[n % 3], counters={"n": n})
            if n % 3 == 0:
                time.sleep(0.002)

    found = state.runs.newest_of([busy, quiet, idle], limit=5)

    assert set(found) == {busy, quiet, idle}
    for table in (busy, quiet):
        assert [r.run_id for r in found[table]] == [r.run_id for r in state.runs.list(table=table, limit=5)]
        assert found[table] == state.runs.list(table=table, limit=5)
    assert len(found[busy]) == 5 and len(found[quiet]) == 2 and found[idle] == []


def table() -> str:
    return f"cat.ns.t_{uuid.uuid4().hex[:8]}"


def test_run_history_round_trip(state: StateStore) -> None:
    run_id = str(uuid.uuid4())
    name = table()
    state.runs.start(run_id, name, "convert", holder_id="h", lease_epoch=3)
    assert state.runs.get(run_id).status == "running"
    state.runs.finish(run_id, "committed", snapshot_id=2**62 + 5, counters={"equality_delete_files_removed": 4})
    record = state.runs.get(run_id)
    assert record.status == "committed" and record.snapshot_id == 2**62 + 5
    assert record.counters == {"equality_delete_files_removed": 4}
    assert record.ended_at_ms >= record.started_at_ms
    assert [r.run_id for r in state.runs.list(table=name)] == [run_id]


def test_a_new_holder_marks_runs_of_a_dead_holder_abandoned(state) -> None:  # type: ignore[no-untyped-def]
    table = f"cat.ns.abandoned_{uuid.uuid4().hex[:8]}"
    first = state.leases.acquire(table, "holder-A", ttl_s=0.3)
    state.runs.start("run-of-a", table, "merge", holder_id="holder-A", lease_epoch=first.epoch)
    time.sleep(0.5)  # A died: its lease expires, nobody records its end
    second = state.leases.acquire(table, "holder-B", ttl_s=30)
    assert second is not None and second.epoch > first.epoch
    assert state.runs.abandon_running(table, taken_by="holder-B", epoch=second.epoch) == 1
    record = state.runs.get("run-of-a")
    assert record.status == "abandoned" and record.ended_at_ms is not None and "holder-B" in record.error
    state.leases.release(second)
