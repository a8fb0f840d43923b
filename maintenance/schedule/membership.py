"""Several daemons on one state database share the fleet: each table is evaluated by one of
them per cycle, so N daemons cut a cycle about N times.

Membership, per catalog: a daemon holds a lease of its own in the lease table for each
catalog it listed this cycle, `icemaint-daemon:<catalog>/<holder id>`, renewed as it lists,
when its evaluation ends, and by a heartbeat every third of its TTL whatever the evaluation
does (`Membership.heartbeat`, on the daemon's scheduler), and gives back those of catalogs
it could not list. The members of a catalog are the holders of its unexpired ones: only
daemons that can list a catalog share its tables (one that cannot reach it, or lacks it in
its config, takes no share of it, so no table is left to nobody). The TTL is half the job
leases' (`Membership.ttl_for`), so that a killed daemon's share is evaluated by the others
within one job-lease TTL: its membership expires within half of it, the heartbeat of each
other daemon sees the members move within a sixth and starts a cycle at once, and that cycle
reads the tables that stayed put from the rows their last evaluator shared
(`schedule/stored.py`), not from the object store. A daemon that is alive but wedged (an
evaluation stuck past the limit of `Daemon.alive`) stops renewing, so it loses its share too.

Shares: a daemon evaluates a catalog's tables whose stable hash (CRC-32 of the table's
name) modulo the catalog's number of members is its rank among their ids, sorted. Every
daemon computes this from the same rows, so in a steady state each table is evaluated by
exactly one. A killed daemon's leases expire within one TTL; from the next cycle of each of
the others on, their shares cover its tables. A stopped daemon gives its leases back, and
takes none after: its stop does not wait for an evaluation in progress (one inside a hung
catalog would hold it past the grace), so that evaluation may still reach `shares` once
`leave` is done. Both run under one lock and `leave` marks the membership left, so whichever
comes first, no membership lease is held once both have run (before, an evaluation finishing
its listing just after the stop took one again, held for a TTL by a daemon that was gone).

Why this can cost work but never correctness: while membership changes (a daemon joins,
dies, or loses a catalog), two daemons may see different members for up to one cycle plus
one membership TTL, so a table may be evaluated twice in that time, or not at all. A job is still run
only under its table's own lease, re-checked there (`schedule.cycle.still_due`), so it is
never run twice at once and never run when it is no longer due.
"""

from __future__ import annotations

import threading
import zlib
from dataclasses import dataclass

import structlog

from maintenance.catalogs import TableRef
from maintenance.state.leases import Lease
from maintenance.state.store import StateStore

log = structlog.get_logger(__name__)
PREFIX = "icemaint-daemon:"  # a membership lease's name: this, the catalog, "/", the holder id
SHARE_OF_LEASE_TTL = 0.5  # a membership's TTL, as a share of a job lease's


@dataclass(frozen=True)
class Share:
    """The tables of one catalog one daemon evaluates: those whose hash lands on its rank."""

    rank: int
    members: int

    def holds(self, ref: TableRef | str) -> bool:
        return self.members <= 1 or zlib.crc32(str(ref).encode()) % self.members == self.rank


ALONE = Share(0, 1)


class Membership:
    """This daemon's memberships, one per catalog it lists, and its share of each."""

    def __init__(self, holder: str, ttl_s: float) -> None:
        self.holder = holder
        self.ttl_s = ttl_s
        self._leases: dict[str, Lease] = {}  # catalog -> this daemon's membership of it
        self._members: dict[str, list[str]] = {}  # catalog -> its members when the shares were last computed
        self._lock = threading.Lock()  # the evaluation and the heartbeat both renew
        self._left = False  # `leave` ran: the daemon stops, and takes no membership again

    @staticmethod
    def ttl_for(lease_ttl_s: float) -> float:
        """Half a job lease's TTL: a killed daemon's share is taken within one (module docstring)."""
        return lease_ttl_s * SHARE_OF_LEASE_TTL

    @property
    def heartbeat_s(self) -> float:
        return self.ttl_s / 3

    def heartbeat(self, state: StateStore) -> bool:
        """Renew every membership held; True when a catalog's members are no longer those its
        shares were computed from (one died or left, or one joined): time to evaluate again."""
        with self._lock:
            for catalog in list(self._leases):
                self._renew(state, catalog)
            for catalog, seen in self._members.items():
                now = sorted(lease.holder or "" for lease in state.leases.list(prefix=f"{PREFIX}{catalog}/") if lease.held)
                if now != seen:
                    return True
            return False

    def shares(self, state: StateStore, catalogs: list[str]) -> dict[str, Share]:
        """Renew (or take) the membership of each catalog listed this cycle, give back the
        others, then this daemon's share of each listed catalog among its members now."""
        with self._lock:
            return self._shares(state, catalogs)

    def _shares(self, state: StateStore, catalogs: list[str]) -> dict[str, Share]:
        self._members = {}
        if self._left:  # an evaluation outliving the stop: it dispatches nothing (`Daemon._dispatch`)
            return {catalog: ALONE for catalog in catalogs}
        for catalog in [c for c in self._leases if c not in catalogs]:
            self._give_back(state, catalog)
        found = {}
        for catalog in catalogs:
            if not self._renew(state, catalog):
                log.warning("daemon membership not taken; evaluating every table of the catalog this cycle", catalog=catalog, holder=self.holder)
                found[catalog] = ALONE
                continue
            members = []
            for lease in state.leases.list(prefix=f"{PREFIX}{catalog}/"):
                if lease.held:
                    members.append(lease.holder or "")
                else:
                    state.leases.forget(lease.table)  # a daemon gone (killed, or stopped): its row goes too
            members.sort()
            self._members[catalog] = members
            found[catalog] = Share(members.index(self.holder), len(members)) if self.holder in members else ALONE
        return found

    def renew(self, state: StateStore) -> None:
        """Renew every membership held (an evaluation just ended: it may have been long)."""
        with self._lock:
            for catalog in list(self._leases):
                self._renew(state, catalog)

    def leave(self, state: StateStore) -> None:
        """Give every membership back (the daemon stops): the others' heartbeats see it and evaluate."""
        with self._lock:
            self._left = True
            for catalog in list(self._leases):
                self._give_back(state, catalog)
            self._members = {}

    def _renew(self, state: StateStore, catalog: str) -> bool:
        held = self._leases.get(catalog)
        renewed = state.leases.renew(held, self.ttl_s) if held is not None else None
        if renewed is None:
            if held is not None:
                log.warning("daemon membership had lapsed; taking it again", catalog=catalog, holder=self.holder)
            renewed = state.leases.acquire(f"{PREFIX}{catalog}/{self.holder}", self.holder, self.ttl_s)
        if renewed is None:
            self._leases.pop(catalog, None)
            return False
        self._leases[catalog] = renewed
        return True

    def _give_back(self, state: StateStore, catalog: str) -> None:
        lease = self._leases.pop(catalog)
        state.leases.release(lease)
        state.leases.forget(lease.table)
