"""A daemon's next cycle reads again only what moved (maintenance/schedule/kept.py,
histories.py): a table whose metadata location is the same is not read at all, and its
decisions are still those a cold evaluation makes at the same time."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from maintenance.catalogs import TableRef, get_catalog, load_table
from maintenance.config import Config, parse_config
from maintenance.jobs import registry
from maintenance.policy.loader import load_policies
from maintenance.policy.model import Policy
from maintenance.schedule.cycle import Evaluation, evaluate
from maintenance.schedule.kept import KeptEvaluations
from maintenance.state.store import StateStore, open_state
from maintenance.workload.fleet import FleetOptions, change_tables, make_fleet


@pytest.fixture(autouse=True)
def own_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A home of each test's own: its SQL catalog lists only that test's tables."""
    monkeypatch.setenv("ICEMAINT_HOME", str(tmp_path / "home"))


def _fleet(tmp_path: Path, tables: int = 3) -> tuple[Config, list[TableRef]]:
    """A small fleet in the test's own home."""
    config = parse_config({}, source="tests", base_dir=tmp_path / "home")
    make_fleet(get_catalog(config, config.default_catalog), config.default_catalog, FleetOptions(tables=tables, commits=2, rows=20))
    return config, [TableRef(config.default_catalog, ("fleet",), f"t{i:05d}") for i in range(tables)]


def _policies(tmp_path: Path, jobs: str) -> list[Policy]:
    folder = tmp_path / "policies"
    folder.mkdir(exist_ok=True)
    (folder / "p.yaml").write_text(f"name: p\njobs:\n{jobs}")
    return load_policies(folder)


def _decided(evaluation: Evaluation) -> list[tuple[str, str, bool, str]]:
    return sorted((d.table, d.job, d.due, d.reason) for d in evaluation.decisions)


def _spoil_metadata(config: Config, ref: TableRef) -> None:
    """Make the table's current metadata file unreadable: any read of it fails."""
    Path(load_table(config, ref).metadata_location.removeprefix("file://").removeprefix("file:")).write_text("not metadata")


def test_a_table_that_stays_put_is_not_read_again_and_one_that_moved_is(tmp_path: Path) -> None:
    config, (moved, still, dropped) = _fleet(tmp_path)
    policies = _policies(tmp_path, "  compact:\n    when: {data_files: 1}\n    min_input_files: 1000\n  orphans:\n    every: 1d\n")
    state = open_state(config)
    kept = KeptEvaluations()
    cold = evaluate(config, state, None, policies, kept=kept)
    assert not cold.problems and {d.table for d in cold.due} == {str(still), str(moved), str(dropped)}
    data_files_before = cold.health[str(moved)].data_files

    _spoil_metadata(config, still)  # a cycle that read it would fail on it
    assert change_tables(get_catalog(config, config.default_catalog), FleetOptions(tables=3), every=3) == [moved.name]
    get_catalog(config, config.default_catalog).drop_table(dropped.identifier)
    now = datetime.now(timezone.utc)
    warm = evaluate(config, state, None, policies, now=now, kept=kept)

    assert not warm.problems and kept.reused == 1 and len(kept) == 2
    assert warm.health[str(moved)].data_files == data_files_before + 2  # read again: one more file in each of its 2 partitions
    assert {d.table for d in warm.due} == {str(still), str(moved)}  # the dropped table is forgotten
    cold_now = evaluate(config, state, [moved], policies, now=now)
    assert [d for d in _decided(warm) if d[0] == str(moved)] == _decided(cold_now)


def test_an_unchanged_table_is_decided_from_what_was_kept_even_if_its_files_are_gone(tmp_path: Path) -> None:
    config, (first, second) = _fleet(tmp_path, 2)
    policies = _policies(tmp_path, "  compact:\n    when: {data_files: 1}\n    min_input_files: 1000\n  orphans:\n    every: 1d\n")
    state = open_state(config)
    kept = KeptEvaluations()
    cold = evaluate(config, state, None, policies, kept=kept)
    assert not cold.problems and [d.reason.startswith("nothing to do") for d in cold.decisions if d.job == "compact"] == [True, True]
    _spoil_metadata(config, first)
    later = datetime.now(timezone.utc) + timedelta(hours=1)
    warm = evaluate(config, state, None, policies, now=later, kept=kept)
    assert not warm.problems and kept.reused == 2
    assert _decided(warm) == _decided(cold)  # the plan's "nothing to do" was kept; orphans still never ran
    assert str(first) in evaluate(config, state, None, policies, now=later).problems  # a cold evaluation reads it, and fails


def test_the_kept_health_ages_with_the_clock_and_time_bound_plans_are_made_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config, refs = _fleet(tmp_path, 2)
    policies = _policies(tmp_path, "  expire:\n    when: {oldest_snapshot_age: 5d}\n    retention: {max_snapshot_age: 5d, min_snapshots_to_keep: 1}\n"
                                   "  compact:\n    when: {data_files: 1}\n    min_input_files: 1000\n")
    spec_of = registry.job
    planned: list[str] = []

    def counting(name: Any) -> Any:
        spec = spec_of(name)
        return dataclasses.replace(spec, plan=lambda inputs, options: planned.append(spec.name) or spec.plan(inputs, options))

    monkeypatch.setattr(registry, "job", counting)
    state = open_state(config)
    kept = KeptEvaluations()
    now = datetime.now(timezone.utc)
    cold = evaluate(config, state, None, policies, now=now, kept=kept)
    assert not [d for d in cold.due if d.job == "expire"] and planned == ["compact", "compact"]
    planned.clear()
    later = now + timedelta(days=6)
    warm = evaluate(config, state, None, policies, now=later, kept=kept)
    assert kept.reused == 2 and sorted(planned) == ["expire", "expire"]  # EXPIRE's plan depends on the time: made again; compact's "nothing" kept
    assert _decided(warm) == _decided(evaluate(config, state, None, policies, now=later))
    assert {d.table for d in warm.due if d.job == "expire"} == {str(r) for r in refs}


def test_runs_recorded_since_the_last_cycle_are_seen_by_the_next(tmp_path: Path, state: StateStore) -> None:
    config, (ran, idle) = _fleet(tmp_path, 2)
    policies = _policies(tmp_path, "  orphans:\n    every: 1d\n")
    kept = KeptEvaluations()
    cold = evaluate(config, state, None, policies, kept=kept)
    assert {d.table for d in cold.due} == {str(ran), str(idle)}
    run_id = f"kept-{tmp_path.name}"
    state.runs.start(run_id, str(ran), "orphans", holder_id="test", lease_epoch=1)
    state.runs.finish(run_id, "committed")
    warm = evaluate(config, state, None, policies, kept=kept)
    assert {d.table for d in warm.due} == {str(idle)}
    (decision,) = [d for d in warm.decisions if d.table == str(ran)]
    assert decision.reason.startswith("ran ") and "every 1d" in decision.reason


def test_a_table_recreated_with_its_runs_forgotten_is_decided_on_no_run(tmp_path: Path) -> None:
    """What the demo does: drop the table, make it again, forget its runs. Deleted rows change
    no run's time; the new metadata location has its history read again."""
    config, (ref, _) = _fleet(tmp_path, 2)
    policies = _policies(tmp_path, "  orphans:\n    every: 1d\n")
    state = open_state(config)
    state.runs.start(f"r-{tmp_path.name}", str(ref), "orphans", holder_id="test", lease_epoch=1)
    state.runs.finish(f"r-{tmp_path.name}", "committed")
    kept = KeptEvaluations()
    assert [d.due for d in evaluate(config, state, None, policies, kept=kept).decisions if d.table == str(ref)] == [False]
    catalog = get_catalog(config, config.default_catalog)
    catalog.drop_table(ref.identifier)
    make_fleet(catalog, config.default_catalog, FleetOptions(tables=2, commits=2, rows=20))
    assert state.runs.forget(str(ref)) == 1
    now = datetime.now(timezone.utc)
    assert _decided(evaluate(config, state, None, policies, now=now, kept=kept)) == _decided(evaluate(config, state, None, policies, now=now))


def test_the_kept_age_is_rounded_once_as_a_fresh_one_so_a_trigger_at_its_threshold_agrees(tmp_path: Path) -> None:
    config, (ref,) = _fleet(tmp_path, 1)
    policies = _policies(tmp_path, "  orphans:\n    when: {oldest_snapshot_age: 5d}\n")
    state = open_state(config)
    oldest_s = min(s.timestamp_ms for s in load_table(config, ref).metadata.snapshots) / 1000
    kept = KeptEvaluations()
    evaluate(config, state, None, policies, now=datetime.fromtimestamp(oldest_s + 10.0004, timezone.utc), kept=kept)  # kept at 10.0 s
    now = datetime.fromtimestamp(oldest_s + 5 * 86400 - 0.0004, timezone.utc)  # fresh: round(431999.9996, 3) = 432000.0
    warm = evaluate(config, state, None, policies, now=now, kept=kept)
    cold = evaluate(config, state, None, policies, now=now)
    assert kept.reused == 1 and warm.health[str(ref)].oldest_snapshot_age_s == cold.health[str(ref)].oldest_snapshot_age_s
    assert _decided(warm) == _decided(cold)
