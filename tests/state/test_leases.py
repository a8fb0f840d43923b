"""Leases on SQLite, PostgreSQL and MariaDB (`state/leases.py`): exclusive, expiring by database
time, owner-bound."""

from __future__ import annotations

import time
import uuid

import pytest

from maintenance.state.store import StateStore
from tests.support import lease_workers
from tests.support.lease_workers import SPAWN, run_workers


def table() -> str:
    return f"cat.ns.t_{uuid.uuid4().hex[:8]}"


@pytest.mark.process
@pytest.mark.slow  # on every database kind: one of the slowest, make test-integration runs it
def test_sixteen_workers_race_exactly_one_wins_each_round(state: StateStore) -> None:
    url = state.engine.url.render_as_string(hide_password=False)
    state.leases.forget("cat.ns.raced")
    rounds, workers = 12, 16
    barrier = SPAWN.Barrier(workers)
    wins = sorted(run_workers(lease_workers.race_rounds, [(url, w, rounds, barrier) for w in range(workers)], timeout=240))
    assert [w[0] for w in wins] == list(range(rounds))  # exactly one winner per round
    epochs = [w[2] for w in wins]
    assert epochs == sorted(epochs) and len(set(epochs)) == rounds  # strictly increasing


@pytest.mark.process
@pytest.mark.slow_on_servers
def test_contending_holders_never_overlap(state: StateStore) -> None:
    url = state.engine.url.render_as_string(hide_password=False)
    state.leases.forget("cat.ns.contended")
    intervals = sorted(run_workers(lease_workers.contend, [(url, w, 4.0) for w in range(8)], timeout=120))
    assert len(intervals) >= 20
    assert len({i[3] for i in intervals}) >= 2  # several workers won
    for (start_a, end_a, epoch_a, _), (start_b, _, epoch_b, _) in zip(intervals, intervals[1:]):
        assert end_a <= start_b, "two holders at once"
        assert epoch_b > epoch_a, "epochs must strictly increase in holding order"


def test_expiry_is_judged_by_the_database_clock(state: StateStore, monkeypatch: pytest.MonkeyPatch) -> None:
    name = table()
    first = state.leases.acquire(name, "a", ttl_s=0.6)
    assert first is not None
    # The caller's clock jumping ahead does not expire a lease: only the database's counts.
    real_time = time.time
    monkeypatch.setattr(time, "time", lambda: real_time() + 3600)
    assert state.leases.acquire(name, "b", ttl_s=5) is None
    monkeypatch.undo()

    time.sleep(0.8)
    assert state.leases.renew(first, ttl_s=5) is None  # renewal after expiry fails
    second = state.leases.acquire(name, "b", ttl_s=5)
    assert second is not None and second.epoch == first.epoch + 1
    assert not state.leases.is_held(first)
    assert state.leases.is_held(second)


def test_renew_only_by_the_holder_with_its_epoch(state: StateStore) -> None:
    name = table()
    lease = state.leases.acquire(name, "a", ttl_s=2)
    assert lease is not None
    renewed = state.leases.renew(lease, ttl_s=10)
    assert renewed is not None and renewed.expires_at_ms > lease.expires_at_ms
    from maintenance.state.leases import Lease

    assert state.leases.renew(Lease(name, "b", lease.epoch, 0), ttl_s=10) is None
    assert state.leases.renew(Lease(name, "a", lease.epoch - 1, 0), ttl_s=10) is None


def test_release_is_owner_bound(state: StateStore) -> None:
    from maintenance.state.leases import Lease

    name = table()
    lease = state.leases.acquire(name, "a", ttl_s=30)
    assert lease is not None
    assert not state.leases.release(Lease(name, "intruder", lease.epoch, 0))
    assert not state.leases.release(Lease(name, "a", lease.epoch + 1, 0))
    assert state.leases.is_held(lease)
    assert state.leases.release(lease)
    assert not state.leases.is_held(lease)
    again = state.leases.acquire(name, "b", ttl_s=30)
    assert again is not None and again.epoch == lease.epoch + 1


def test_forced_release_fences_at_once_and_frees_at_the_old_expiry(state: StateStore) -> None:
    """The old holder is fenced at its next check, but nobody else may take the lease before
    its expiry: a paused holder deletes files only while its lease is proven by time."""
    name = table()
    lease = state.leases.acquire(name, "a", ttl_s=1.5)
    assert lease is not None
    released = state.leases.force_release(name)
    assert released.epoch == lease.epoch + 1
    assert released.free_at_ms == lease.expires_at_ms > released.now_ms
    assert not state.leases.is_held(lease)
    assert state.leases.renew(lease, ttl_s=300) is None  # the old holder is fenced
    assert state.leases.acquire(name, "b", ttl_s=300) is None  # not before the old expiry
    time.sleep(1.6)
    after = state.leases.acquire(name, "b", ttl_s=300)
    assert after is not None and after.epoch == released.epoch + 1
    listed = state.leases.get(name)
    assert listed is not None and listed.held and listed.holder == "b"


def test_a_new_lease_row_forgotten_before_it_is_taken_is_made_again(state: StateStore) -> None:
    """Another process may `forget` a lease row it sees expired, between `acquire` making it
    and taking it (two daemons starting at once: one clears the other's fresh membership
    row). The row is deleted there, through another connection; the acquire still takes it."""
    from sqlalchemy import delete, event

    from maintenance.state.leases import leases

    name = table()
    engine = state.leases.engine
    forgotten = []

    def forget_first_take(conn, cursor, statement: str, parameters, context, executemany) -> None:  # type: ignore[no-untyped-def]
        if not forgotten and statement.lstrip().upper().startswith("UPDATE ICEMAINT_LEASES") and name in str(parameters):
            with engine.begin() as other:
                forgotten.append(other.execute(delete(leases).where(leases.c.table_name == name)).rowcount)

    event.listen(engine, "before_cursor_execute", forget_first_take)
    try:
        lease = state.leases.acquire(name, "daemon-b", 30)
    finally:
        event.remove(engine, "before_cursor_execute", forget_first_take)

    assert forgotten == [1]  # the row was there, unheld, and went
    assert lease is not None and lease.holder == "daemon-b" and lease.epoch == 1
    assert state.leases.renew(lease, 30) is not None
