"""Worker processes for the lease race tests (module level, so `spawn` can import them)."""

from __future__ import annotations

import time
from typing import Any


def race_rounds(url: str, worker: int, rounds: int, barrier: Any, results: Any) -> None:
    """Each round all workers try to acquire the same table at once; the winner releases."""
    from maintenance.state.database import make_engine
    from maintenance.state.leases import LeaseStore

    store = LeaseStore(make_engine(url))
    holder = f"worker-{worker}"
    for round_no in range(rounds):
        barrier.wait()
        lease = store.acquire("cat.ns.raced", holder, ttl_s=30)
        if lease is not None:
            results.put((round_no, worker, lease.epoch))
        barrier.wait()  # everyone has tried
        if lease is not None:
            assert store.release(lease)
        barrier.wait()  # free again before the next round


def contend(url: str, worker: int, seconds: float, results: Any) -> None:
    """Acquire whenever possible for a while; report each holding interval by the wall clock."""
    from maintenance.state.database import make_engine
    from maintenance.state.leases import LeaseStore

    store = LeaseStore(make_engine(url))
    holder = f"contender-{worker}"
    deadline = time.time() + seconds
    while time.time() < deadline:
        lease = store.acquire("cat.ns.contended", holder, ttl_s=30)
        if lease is None:
            time.sleep(0.001)
            continue
        start = time.time()
        assert store.is_held(lease)
        time.sleep(0.005)
        end = time.time()
        results.put((start, end, lease.epoch, worker))
        assert store.release(lease)


def upgrade_database(url: str, results: Any) -> None:
    from maintenance.state.database import make_engine, upgrade

    try:
        results.put(("ok", upgrade(make_engine(url))))
    except Exception as exc:  # reported to the test, which fails on it
        results.put(("error", repr(exc)))
