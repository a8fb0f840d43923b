"""The plan a job runs is the newest one made for its snapshot: a daemon's re-check under
the lease plans again when the table moved, and the job then runs that very plan instead
of planning a third time."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from maintenance.jobs import registry
from maintenance.run.outcome import COMMITTED
from tests.conftest import CdcFactory


def test_a_table_that_moved_after_the_evaluation_is_planned_once_more_not_twice(spark, config, cdc_table: CdcFactory, tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from maintenance.catalogs import load_table
    from maintenance.policy.loader import load_policies
    from maintenance.schedule.cycle import evaluate, run_decision
    from maintenance.state.store import open_state

    (tmp_path / "merge.yaml").write_text("name: merge\njobs:\n  merge:\n    when: {equality_delete_files: 1}\n    every: 1h\n")
    policies = load_policies(tmp_path)
    ref, _, _ = cdc_table(rows=1200, commits=4, update_ratio=0.3)
    state = open_state(config)
    (decision,) = [d for d in evaluate(config, state, [ref], policies).due if d.job == "merge"]
    evaluated_snapshot = decision.prepared.snapshot_id if decision.prepared else None
    cdc_table(ref=ref, rows=200, commits=1, update_ratio=0.5, seed=77)  # a writer commits before the job starts
    moved_to = load_table(config, ref).metadata.current_snapshot_id
    assert moved_to != evaluated_snapshot

    spec = registry.job("merge")
    planned: list[int] = []

    def counting_plan(inputs: Any, options: Any) -> Any:
        planned.append(inputs.table.metadata.current_snapshot_id)
        return spec.plan(inputs, options)

    counting = dataclasses.replace(spec, plan=counting_plan)
    real_job = registry.job
    monkeypatch.setattr(registry, "job", lambda name: counting if getattr(name, "name", name) == "merge" else real_job(name))
    result = run_decision(config, state, decision, policies=policies)

    assert result.status == COMMITTED and result.content_verified, result.error
    assert planned == [moved_to]  # the re-check's plan, reused by the job: not planned again


def test_the_recheck_under_one_jobs_lease_plans_that_job_only(spark, config, cdc_table: CdcFactory, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """MERGE and COMPACT both due: the evaluation plans both; the re-check under MERGE's
    lease plans MERGE alone (before, every due job of the table, so N due jobs were planned
    about N² times per cycle), and MERGE is still due."""
    from maintenance.policy.loader import load_policies
    from maintenance.schedule.cycle import evaluate, still_due
    from maintenance.state.store import open_state

    (tmp_path / "both.yaml").write_text("name: both\njobs:\n  merge:\n    when: {equality_delete_files: 1}\n    every: 1h\n"
                                        "  compact:\n    when: {small_files: 2}\n    every: 1h\n    min_input_files: 2\n")
    policies = load_policies(tmp_path)
    ref, _, _ = cdc_table(rows=1200, commits=4, update_ratio=0.3)
    state = open_state(config)
    due = {d.job: d for d in evaluate(config, state, [ref], policies).due}
    assert {"merge", "compact"} <= set(due) and all(due[j].prepared is not None for j in ("merge", "compact")), due

    planned: list[str] = []
    real_job = registry.job

    def counting(name: Any) -> Any:
        spec = real_job(name)
        return dataclasses.replace(spec, plan=lambda inputs, options, spec=spec: (planned.append(spec.name), spec.plan(inputs, options))[1])

    monkeypatch.setattr(registry, "job", counting)
    assert still_due(config, state, ref, due["merge"], policies) is None
    assert planned == ["merge"]
