"""Keeping a lease alive while a job runs: renewed every ttl/3 in a background thread.

When a renewal is refused, or the state database stayed unreachable for a whole TTL, the
lease is marked lost once and the job's Spark work is cancelled; the fence then refuses
every further effect.

The keeper also knows until when the lease is *proven* on this host's monotonic clock
(`proven_until`): the send time of the last acquisition or renewal the database confirmed,
plus the TTL. The database set the expiry to its own now plus the TTL, and its now was
later than the send, so the lease lasts at least until then (clock rates agree to far
below the fence's margin). `time.monotonic` keeps counting while the process is paused,
so a holder resumed after SIGSTOP sees at once that its proof ran out.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import structlog

from maintenance.state import background_writes
from maintenance.state.database import StateUnavailableError
from maintenance.state.leases import Lease, LeaseStore

log = structlog.get_logger(__name__)


_LIVE: set[LeaseKeeper] = set()
_LIVE_LOCK = threading.Lock()


def revoke_all(reason: str) -> int:
    """Shut the fence of every job running in this process (a daemon whose shutdown grace
    period is over): each is cancelled and publishes or deletes nothing more, even when it
    is between Spark jobs (committing, deleting) where cancelling Spark alone cannot reach
    it. Returns how many were revoked."""
    with _LIVE_LOCK:
        keepers = list(_LIVE)
    for keeper in keepers:
        keeper.mark_lost(reason)
    return len(keepers)


class LeaseKeeper:
    """Renews a lease every ttl/3 in a background thread; reports loss once."""

    def __init__(self, store: LeaseStore, lease: Lease, ttl_s: float, on_lost: Callable[[str], None] | None = None, *,
                 asked_at: float) -> None:
        """`asked_at`: the monotonic time the request that acquired `lease` was sent."""
        self.store = store
        self.lease = lease
        self.ttl_s = ttl_s
        self.on_lost = on_lost
        self.lost = threading.Event()
        self.lock = threading.Lock()  # guards `lease` between renewals and epoch advances
        self.lost_reason: str | None = None
        self._stop = threading.Event()
        self._last_renewed = asked_at
        self.proven_until = self._last_renewed + ttl_s
        self._thread = threading.Thread(target=self._run, name=f"lease-keeper:{lease.table}", daemon=True)

    def __enter__(self) -> LeaseKeeper:
        self._thread.start()
        with _LIVE_LOCK:
            _LIVE.add(self)
        return self

    def __exit__(self, *exc: object) -> None:
        with _LIVE_LOCK:
            _LIVE.discard(self)
        self._stop.set()
        self._thread.join(timeout=self.ttl_s)

    def mark_lost(self, reason: str) -> None:
        if self.lost.is_set():
            return
        self.lost_reason = reason
        self.lost.set()
        log.warning("lease lost", table=self.lease.table, epoch=self.lease.epoch, reason=reason)
        if self.on_lost is not None:
            try:
                self.on_lost(reason)
            except Exception:
                log.exception("cancelling after lease loss failed")

    def _run(self) -> None:
        interval = max(self.ttl_s / 3.0, 0.05)
        while not self._stop.wait(interval):
            asked_at = time.monotonic()
            try:
                with background_writes.write(), self.lock:
                    renewed = self.store.renew(self.lease, self.ttl_s)
                    if renewed is not None:
                        self.lease = renewed
            except StateUnavailableError as exc:
                # We cannot prove the lease: once a whole TTL passed since the last renewal
                # (by our clock, which only makes us give up earlier) it is surely gone.
                if time.monotonic() - self._last_renewed >= self.ttl_s * 0.9:
                    self.mark_lost(f"state database unreachable: {exc}")
                    return
                continue
            if renewed is None:
                self.mark_lost("renewal refused: expired or taken over")
                return
            self._last_renewed = asked_at
            self.proven_until = asked_at + self.ttl_s
