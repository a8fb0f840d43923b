"""Worker processes for the state database tests (module level, so `spawn` can import them), and
how the tests run them (`run_workers`)."""

from __future__ import annotations

import multiprocessing
import time
from typing import Any

SPAWN = multiprocessing.get_context("spawn")


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


def run_workers(target, arguments: list[tuple], timeout: float) -> list:  # type: ignore[no-untyped-def]
    """Run `target(*args, queue)` in one spawned process per args; all must exit 0. Returns what they queued."""
    results = SPAWN.Queue()
    procs = [SPAWN.Process(target=target, args=(*args, results)) for args in arguments]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout)
    assert all(p.exitcode == 0 for p in procs)
    items = []
    while True:
        try:
            items.append(results.get(timeout=1))
        except Exception:
            return items
