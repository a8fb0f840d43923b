"""Daemons on one state database share the fleet (maintenance/schedule/membership.py): each table is
held by exactly one live daemon that lists its catalog, and a daemon that stops renewing
loses its share to the others within one lease TTL."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from maintenance.catalogs import get_catalog
from maintenance.config import parse_config
from maintenance.schedule.membership import PREFIX, Membership, Share
from maintenance.state.store import StateStore
from maintenance.workload.fleet import FleetOptions, make_fleet
from tests.conftest import new_state_url
from tests.support.daemon import free_port, metric, start_daemon, stop_daemon, wait_for


def _tables(n: int) -> list[str]:
    return [f"local.fleet.t{i:05d}" for i in range(n)]


def test_two_daemons_hold_every_table_exactly_once_and_one_that_dies_loses_its_share(state: StateStore) -> None:
    first, second = Membership(f"daemon@a:{time.time_ns()}", ttl_s=1.5), Membership(f"daemon@b:{time.time_ns()}", ttl_s=1.5)
    assert first.shares(state, ["local"]) == {"local": Share(0, 1)}  # alone
    shares = [second.shares(state, ["local"])["local"], first.shares(state, ["local"])["local"]]
    assert sorted((s.rank, s.members) for s in shares) == [(0, 2), (1, 2)]
    held = [[t for t in _tables(400) if s.holds(t)] for s in shares]
    assert sorted(held[0] + held[1]) == _tables(400) and not set(held[0]) & set(held[1])
    assert all(120 < len(h) < 280 for h in held)  # about half each

    time.sleep(1.7)  # the second stops renewing (killed): its membership expires
    alone = first.shares(state, ["local"])["local"]
    assert alone.members == 1 and all(alone.holds(t) for t in _tables(400))
    assert [lease for lease in state.leases.list(prefix=PREFIX) if lease.holder == second.holder] == []  # its row went too

    first.leave(state)
    assert [lease for lease in state.leases.list(prefix=PREFIX) if lease.holder == first.holder] == []


def test_a_daemon_that_cannot_list_a_catalog_takes_no_share_of_it(state: StateStore) -> None:
    both, one = Membership(f"daemon@d:{time.time_ns()}", ttl_s=30), Membership(f"daemon@e:{time.time_ns()}", ttl_s=30)
    both.shares(state, ["cat_a", "cat_b"])
    one.shares(state, ["cat_a", "cat_b"])
    one.shares(state, ["cat_a"])  # cat_b fails to list for it: it gives its membership of cat_b back
    seen = both.shares(state, ["cat_a", "cat_b"])
    assert seen["cat_a"].members == 2 and seen["cat_b"] == Share(0, 1)  # all of cat_b is its own
    both.leave(state)
    one.leave(state)


def test_a_heartbeat_renews_a_membership_and_sees_the_members_move(state: StateStore) -> None:
    """The heartbeat keeps a membership alive between evaluations, and says when the members
    its shares were computed from are no longer those of the database (one died or joined)."""
    assert Membership.ttl_for(60) == 30
    first, second = Membership(f"daemon@f:{time.time_ns()}", ttl_s=1.0), Membership(f"daemon@g:{time.time_ns()}", ttl_s=1.0)
    first.shares(state, ["local"])
    second.shares(state, ["local"])
    assert first.heartbeat(state) is True  # the second joined after the first's shares
    assert first.shares(state, ["local"])["local"].members == 2
    for _ in range(4):  # 1.2 s: longer than the TTL, renewed by heartbeats alone
        time.sleep(0.3)
        assert first.heartbeat(state) is False and second.heartbeat(state) is False
    time.sleep(1.2)  # the second is killed: no heartbeat, its membership expires
    assert first.heartbeat(state) is True
    assert first.shares(state, ["local"])["local"] == Share(0, 1) and first.heartbeat(state) is False
    first.leave(state)


def test_a_membership_left_is_not_taken_again_by_an_evaluation_outliving_the_stop(state: StateStore) -> None:
    """A stopping daemon does not wait for its evaluation: one that finishes listing its
    catalogs after `leave` must not take a membership again (session 76's rehearsal: the
    daemon's container had stopped cleanly and still held one, taken 1.4 s before the check). Both
    orders, and an evaluation racing the stop from its own thread."""
    member = Membership(f"daemon@h:{time.time_ns()}", ttl_s=30)
    member.shares(state, ["local"])
    member.leave(state)
    assert member.shares(state, ["local"]) == {"local": Share(0, 1)}  # evaluates alone, dispatches nothing
    member.renew(state)
    assert member.heartbeat(state) is False
    assert [lease for lease in state.leases.list(prefix=PREFIX) if lease.holder == member.holder] == []

    for _ in range(20):  # the evaluation's thread and the stop's, released together
        racing = Membership(f"daemon@i:{time.time_ns()}", ttl_s=30)
        racing.shares(state, ["local"])
        go = threading.Barrier(2)
        evaluation = threading.Thread(target=lambda: (go.wait(), racing.shares(state, ["local", "other"])))
        evaluation.start()
        go.wait()
        racing.leave(state)
        evaluation.join(30)
        assert [lease for lease in state.leases.list(prefix=PREFIX) if lease.holder == racing.holder and lease.held] == []


def test_a_lapsed_membership_is_taken_again(state: StateStore) -> None:
    member = Membership(f"daemon@c:{time.time_ns()}", ttl_s=0.5)
    member.shares(state, ["local"])
    time.sleep(0.7)  # a cycle longer than the TTL
    again = member.shares(state, ["local"])["local"]
    assert again.members >= 1 and any(lease.held for lease in state.leases.list(prefix=f"{PREFIX}local/") if lease.holder == member.holder)
    member.leave(state)


def _evaluated(log: Path) -> list[dict]:
    """The daemon's "evaluated" log lines (JSON)."""
    found = []
    for line in log.read_text(errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("event") == "evaluated":
            found.append(event)
    return found


@pytest.mark.process
def test_two_daemon_processes_split_the_fleet_and_one_takes_all_once_the_other_is_killed(tmp_path: Path) -> None:
    """Real daemons on PostgreSQL over a fleet of 40 tables (no job is due: no Spark), with an
    interval far longer than the lease TTL: each evaluates its share (the first re-splits at
    once when its heartbeat sees the second join); after kill -9 of one, the other evaluates
    every table within the lease TTL (4 s) plus the cycle's own time, without waiting for its
    interval, and from what was kept or shared: no table is read."""
    home = tmp_path / "home"
    config = parse_config({"home": str(home)}, source="tests", base_dir=tmp_path)
    make_fleet(get_catalog(config, config.default_catalog), config.default_catalog, FleetOptions(tables=40, commits=1, rows=10))
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "p.yaml").write_text("name: p\njobs:\n  compact:\n    when: {data_files: 100000}\n")
    for state_url in new_state_url("postgresql", tmp_path):
        ports, logs, processes = [], [], []
        for name in ("a", "b"):
            port = free_port()
            path = tmp_path / f"{name}.yaml"
            path.write_text(f"home: {home}\nstate:\n  url: {state_url}\npolicies: {tmp_path / 'policies'}\nleases:\n  ttl_seconds: 4\n"
                            f"daemon:\n  interval: 120s\n  metrics_port: {port}\n")
            ports.append(port)
            logs.append(tmp_path / f"{name}.log")
            processes.append(start_daemon(path, logs[-1]))

        def evaluated(port: int) -> float:
            try:
                return metric(port, "icemaint_tables_evaluated")
            except OSError:  # not listening yet
                return 0.0

        try:
            wait_for(lambda: all(0 < evaluated(p) < 40 for p in ports) and sum(evaluated(p) for p in ports) == 40, 60,
                     "two daemons each evaluating their share of 40 tables", logs)
            os.kill(processes[1].pid, signal.SIGKILL)  # no JVM: the daemon is one process
            processes[1].wait(timeout=30)
            killed_at = time.monotonic()
            wait_for(lambda: evaluated(ports[0]) == 40, 30, "the survivor to evaluate every table", logs)
            assert time.monotonic() - killed_at < 4 + 5  # the TTL, and a cycle's own time (with slack for a busy machine)
            takeover = [e for e in _evaluated(logs[0]) if e["tables"] == 40][-1]
            assert takeover["reused"] == 40  # its own half kept, the dead one's half from the rows it shared
        finally:
            if processes[1].poll() is None:
                processes[1].kill()
            codes = [stop_daemon(processes[0], logs[0])]
        assert codes == [0]
        assert "of 2" in logs[0].read_text()  # it held a share of two
