"""Several daemons on one state database share the fleet: each table is evaluated by one of
them per cycle, so N daemons cut a cycle about N times.

Membership: each daemon holds a lease of its own in the lease table,
`icemaint-daemon:<holder id>`, with the job leases' time to live, taken at its first cycle
and renewed at the start of every cycle (taken again if it lapsed: a cycle longer than the
TTL, or the database away). The members are the holders of the unexpired ones.

Shares: a daemon evaluates the tables whose stable hash (CRC-32 of the table's name) modulo
the number of members is its rank among the members' ids, sorted. Every daemon computes
this from the same rows, so in a steady state each table is evaluated by exactly one.

A killed daemon's lease expires within one TTL; from the next cycle of each of the others
on, their shares cover its tables. A stopped daemon releases its lease as it stops.

Why this can cost work but never correctness: while membership changes (a daemon joins or
dies), two daemons may see different members for up to one cycle plus one TTL, so a table
may be evaluated twice in that time, or not at all. A job is still run only under its
table's own lease, re-checked there (`schedule.cycle.still_due`), so it is never run twice
at once and never run when it is no longer due.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import structlog

from maintenance.catalogs import TableRef
from maintenance.state.leases import Lease
from maintenance.state.store import StateStore

log = structlog.get_logger(__name__)
PREFIX = "icemaint-daemon:"  # a membership lease's name in the lease table: this, then the holder id


@dataclass(frozen=True)
class Share:
    """The tables one daemon evaluates: those whose hash lands on its rank."""

    rank: int
    members: int

    def holds(self, ref: TableRef | str) -> bool:
        return self.members <= 1 or zlib.crc32(str(ref).encode()) % self.members == self.rank


class Membership:
    """This daemon's membership, and its share of the fleet at each cycle."""

    def __init__(self, holder: str, ttl_s: float) -> None:
        self.holder = holder
        self.ttl_s = ttl_s
        self._lease: Lease | None = None

    def share(self, state: StateStore) -> Share:
        """Renew (or take) the membership, then this daemon's share among the members now."""
        renewed = state.leases.renew(self._lease, self.ttl_s) if self._lease is not None else None
        if renewed is None:
            renewed = state.leases.acquire(PREFIX + self.holder, self.holder, self.ttl_s)
            if renewed is None:  # our own row, held: only a forced release bumps it; try again next cycle
                log.warning("daemon membership not taken; evaluating every table this cycle", holder=self.holder)
                return Share(0, 1)
            if self._lease is not None:
                log.warning("daemon membership had lapsed and was taken again", holder=self.holder)
        self._lease = renewed
        members = []
        for lease in state.leases.list(prefix=PREFIX):
            if lease.held:
                members.append(lease.table.removeprefix(PREFIX))
            else:
                state.leases.forget(lease.table)  # a daemon gone (killed, or stopped): its row goes too
        members.sort()
        if self.holder not in members:  # lost between renewing and listing: alone this cycle
            return Share(0, 1)
        return Share(members.index(self.holder), len(members))

    def leave(self, state: StateStore) -> None:
        """Give the membership back (the daemon stops): the others take its share at their next cycle."""
        if self._lease is not None:
            state.leases.release(self._lease)
            state.leases.forget(self._lease.table)
            self._lease = None
