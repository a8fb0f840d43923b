"""Tables' metadata read at once, a bounded number per catalog (maintenance/schedule/overlap.py):
the bound holds, results come back in the tables' order, and a cycle read that way decides
exactly what a cycle reading one table after another decides."""

from __future__ import annotations

import dataclasses
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from maintenance.catalogs import TableRef, get_catalog, load_table
from maintenance.config import parse_config
from maintenance.errors import UsageError
from maintenance.policy.loader import load_policies
from maintenance.schedule.cycle import evaluate
from maintenance.schedule.kept import KeptEvaluations
from maintenance.schedule.overlap import in_order
from maintenance.state.store import open_state
from maintenance.workload.fleet import FleetOptions, make_fleet


def _refs(catalog: str, count: int) -> list[TableRef]:
    return [TableRef(catalog, ("ns",), f"t{i}") for i in range(count)]


class _InFlight:
    """How many calls run at once, per catalog, and on which threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now: dict[str, int] = {}
        self.most: dict[str, int] = {}
        self.threads: dict[str, set[str]] = {}

    def __call__(self, ref: TableRef) -> str:
        with self.lock:
            self.now[ref.catalog] = self.now.get(ref.catalog, 0) + 1
            self.most[ref.catalog] = max(self.most.get(ref.catalog, 0), self.now[ref.catalog])
            self.threads.setdefault(ref.catalog, set()).add(threading.current_thread().name)
        time.sleep(0.05)  # a read's wait on the network
        with self.lock:
            self.now[ref.catalog] -= 1
        return str(ref)


def test_at_most_the_bound_per_catalog_at_once_results_in_the_given_order() -> None:
    refs = [ref for pair in zip(_refs("lake", 12), _refs("hms", 12)) for ref in pair]
    work = _InFlight()
    results = in_order(refs, {"lake": 3, "hms": 1}.__getitem__, work)
    assert results == [str(ref) for ref in refs]
    assert work.most == {"lake": 3, "hms": 1}
    assert work.threads["hms"] == {threading.current_thread().name}  # a bound of 1: read on the caller's thread, as before
    assert threading.current_thread().name not in work.threads["lake"]


def test_an_exception_is_raised_in_order_and_reads_not_started_are_cancelled() -> None:
    calls: list[str] = []

    def work(ref: TableRef) -> str:
        calls.append(ref.name)
        if ref.name == "t1":
            raise UsageError("bad policy")
        time.sleep(0.05)
        return ref.name

    with pytest.raises(UsageError, match="bad policy"):
        in_order(_refs("lake", 40), lambda _: 2, work)
    assert len(calls) < 40


def test_a_cycle_read_eight_at_a_time_decides_what_one_at_a_time_decides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ICEMAINT_HOME", str(tmp_path / "home"))
    embedded = parse_config({}, source="tests", base_dir=tmp_path / "home")
    config = dataclasses.replace(embedded, catalogs={name: dataclasses.replace(c, metadata_reads=8) for name, c in embedded.catalogs.items()})
    make_fleet(get_catalog(config, config.default_catalog), config.default_catalog, FleetOptions(tables=24, commits=2, rows=20))
    spoiled = TableRef(config.default_catalog, ("fleet",), "t00007")
    Path(load_table(config, spoiled).metadata_location.removeprefix("file://").removeprefix("file:")).write_text("not metadata")
    one_at_a_time = dataclasses.replace(config, catalogs={name: dataclasses.replace(c, metadata_reads=1) for name, c in config.catalogs.items()})
    folder = tmp_path / "policies"
    folder.mkdir()
    (folder / "p.yaml").write_text("name: p\njobs:\n  compact:\n    when: {data_files: 1}\n    min_input_files: 2\n  orphans:\n    every: 1d\n")
    policies = load_policies(folder)
    state = open_state(config)
    kept = KeptEvaluations()
    now = datetime.now(timezone.utc)
    overlapped = evaluate(config, state, None, policies, now=now, kept=kept)
    serial = evaluate(one_at_a_time, state, None, policies, now=now)
    decided = lambda e: [(d.table, d.job, d.due, d.reason.split(" (")[0]) for d in e.decisions]  # noqa: E731
    assert decided(overlapped) == decided(serial) and len(overlapped.decisions) == 2 * 23
    assert list(overlapped.health) == list(serial.health) == sorted(serial.health)  # the tables' order, whichever read ended first
    assert overlapped.health == serial.health
    assert list(overlapped.problems) == list(serial.problems) == [str(spoiled)]
    assert len(kept) == 23 and kept.reused == 0
    warm = evaluate(config, state, None, policies, kept=kept)
    assert kept.reused == 23 and list(warm.problems) == [str(spoiled)]
