"""The run store's queries that read many tables at once, against the one-table query they
stand for, on every kind of state database."""

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
