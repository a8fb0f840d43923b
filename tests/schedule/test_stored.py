"""Kept evaluations shared through the state database (maintenance/schedule/stored.py): a
daemon that never saw a table decides it, at the same metadata location, as the daemon that
read it did, without reading it; a moved table, another basis, a dropped table are not used."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timezone
from pathlib import Path

import pytest
from pyiceberg.catalog import Catalog

from maintenance.catalogs import TableRef, get_catalog, load_table
from maintenance.config import Config, parse_config
from maintenance.policy.loader import load_policies
from maintenance.policy.model import Policy
from maintenance.schedule import stored
from maintenance.schedule.cycle import Evaluation, evaluate
from maintenance.schedule.kept import KeptEvaluations
from maintenance.state.store import StateStore
from maintenance.workload.fleet import FleetOptions, change_tables, make_fleet

FLEET = FleetOptions(tables=4, commits=2, rows=20)


@pytest.fixture(autouse=True)
def own_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A home of each test's own: its SQL catalog lists only that test's tables."""
    monkeypatch.setenv("ICEMAINT_HOME", str(tmp_path / "home"))


def _decided(evaluation: Evaluation) -> list[tuple[str, str, bool, str]]:
    return sorted((d.table, d.job, d.due, d.reason) for d in evaluation.decisions)


def _spoil_metadata(config: Config, ref: TableRef) -> None:
    """Make the table's current metadata file unreadable: any read of it fails."""
    Path(load_table(config, ref).metadata_location.removeprefix("file://").removeprefix("file:")).write_text("not metadata")


# COMPACT fires on every table and its plan finds nothing (too few files): a kept "nothing to do"
COMPACT_NOTHING_TO_DO = "  compact:\n    when: {data_files: 1}\n    min_input_files: 1000\n"


def _fleet(tmp_path: Path, jobs: str) -> tuple[Config, Catalog, list[TableRef], list[Policy]]:
    """The test's fleet in its own home, and a policy of these jobs."""
    config = parse_config({}, source="tests", base_dir=tmp_path / "home")
    catalog = get_catalog(config, config.default_catalog)
    make_fleet(catalog, config.default_catalog, FLEET)
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "p.yaml").write_text(f"name: p\njobs:\n{jobs}")
    return config, catalog, [TableRef(config.default_catalog, ("fleet",), f"t{i:05d}") for i in range(FLEET.tables)], load_policies(tmp_path / "policies")


def test_a_daemon_decides_from_what_another_saw_until_the_table_moves(tmp_path: Path, state: StateStore) -> None:
    config, _, refs, policies = _fleet(tmp_path, COMPACT_NOTHING_TO_DO + "  orphans:\n    every: 1d\n")
    now = datetime.now(timezone.utc)

    first = KeptEvaluations()
    cold = evaluate(config, state, None, policies, now=now, kept=first)
    assert not cold.problems and first.reused == 0 and len(cold.health) == 4
    assert any("nothing to do" in d.reason for d in cold.decisions)

    for ref in refs:
        _spoil_metadata(config, ref)  # from here on, a cycle that read a table would fail on it
    second = KeptEvaluations()  # another daemon, or this one restarted
    warm = evaluate(config, state, None, policies, now=now, kept=second)
    assert not warm.problems and second.reused == 4
    assert _decided(warm) == _decided(cold) and warm.health == cold.health

    other_basis = dataclasses.replace(config, health=dataclasses.replace(config.health, small_file_bytes=1))
    assert stored.basis(other_basis) != stored.basis(config)
    third = KeptEvaluations()  # a daemon whose evaluation reads another small-file size
    seen_by_third = evaluate(other_basis, state, None, policies, now=now, kept=third)
    assert third.reused == 0 and len(seen_by_third.problems) == 4  # the rows are of no use to it: it read every table


def test_a_moved_table_is_read_once_and_its_new_row_serves_the_others(tmp_path: Path, state: StateStore) -> None:
    config, catalog, refs, policies = _fleet(tmp_path, COMPACT_NOTHING_TO_DO)
    first, second = KeptEvaluations(), KeptEvaluations()
    evaluate(config, state, None, policies, kept=first)
    evaluate(config, state, None, policies, kept=second)
    assert second.reused == 4

    moved = change_tables(catalog, FLEET, every=4)
    assert moved == [refs[0].name]
    data_files = evaluate(config, state, [refs[0]], policies).health[str(refs[0])].data_files  # a cold read: the oracle
    now = datetime.now(timezone.utc)  # one moment for both: the oldest snapshot's age moves with the clock
    after_move = evaluate(config, state, None, policies, now=now, kept=second)
    assert second.reused == 3 and after_move.health[str(refs[0])].data_files == data_files  # the moved table read again
    _spoil_metadata(config, refs[0])
    seen_by_first = evaluate(config, state, None, policies, now=now, kept=first)  # kept t0 at the old location: takes the new row
    assert not seen_by_first.problems and first.reused == 4 and seen_by_first.health == after_move.health

    catalog.drop_table(refs[3].identifier)
    evaluate(config, state, None, policies, kept=first)
    assert str(refs[3]) not in state.evaluations.names(config.default_catalog)  # a dropped table's row goes
    assert {str(r) for r in refs[:3]} <= state.evaluations.names(config.default_catalog)
