"""Daemons on one state database share the fleet (maintenance/daemon/share.py): each table is
held by exactly one live daemon, and a daemon that stops renewing loses its share to the
others within one lease TTL."""

from __future__ import annotations

import time

from maintenance.daemon.share import PREFIX, Membership, Share
from maintenance.state.store import StateStore


def _tables(n: int) -> list[str]:
    return [f"local.fleet.t{i:05d}" for i in range(n)]


def test_two_daemons_hold_every_table_exactly_once_and_one_that_dies_loses_its_share(state: StateStore) -> None:
    first, second = Membership(f"daemon@a:{time.time_ns()}", ttl_s=1.5), Membership(f"daemon@b:{time.time_ns()}", ttl_s=1.5)
    assert first.share(state) == Share(0, 1)  # alone
    shares = [second.share(state), first.share(state)]
    assert sorted((s.rank, s.members) for s in shares) == [(0, 2), (1, 2)]
    held = [[t for t in _tables(400) if s.holds(t)] for s in shares]
    assert sorted(held[0] + held[1]) == _tables(400) and not set(held[0]) & set(held[1])
    assert all(120 < len(h) < 280 for h in held)  # about half each

    time.sleep(1.7)  # the second stops renewing (killed): its membership expires
    alone = first.share(state)
    assert alone.members == 1 and all(alone.holds(t) for t in _tables(400))
    assert [lease.table for lease in state.leases.list(prefix=PREFIX) if lease.table.endswith(second.holder)] == []  # its row went too

    first.leave(state)
    assert [lease for lease in state.leases.list(prefix=PREFIX) if lease.table.endswith(first.holder)] == []


def test_a_daemon_whose_membership_lapsed_takes_it_again(state: StateStore) -> None:
    member = Membership(f"daemon@c:{time.time_ns()}", ttl_s=0.5)
    member.share(state)
    time.sleep(0.7)  # a cycle longer than the TTL
    again = member.share(state)
    assert again.members >= 1 and any(lease.held for lease in state.leases.list(prefix=PREFIX + member.holder))
    member.leave(state)
