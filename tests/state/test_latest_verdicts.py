"""`RunStore.latest_per_job(ignoring=VERDICTLESS)`: each (table, job)'s newest run that says
whether the job works, on every state database (the overview's failing tables)."""

from __future__ import annotations

import uuid

from maintenance.state.runs import VERDICTLESS
from maintenance.state.store import StateStore


def _run(state: StateStore, table: str, job: str, status: str) -> str:
    now = state.runs.database_now_ms()
    while state.runs.database_now_ms() <= now:  # one run a millisecond: their order is their start
        pass
    run_id = str(uuid.uuid4())
    state.runs.start(run_id, table, job, holder_id="test", lease_epoch=1)
    if status != "running":
        state.runs.finish(run_id, status)
    return run_id


def test_the_newest_verdict_passes_over_running_skipped_and_interrupted_runs(state: StateStore) -> None:
    table = f"lake.v_{uuid.uuid4().hex[:6]}.t"
    failed = _run(state, table, "merge", "failed")
    for status in ("interrupted", "skipped", "running"):
        _run(state, table, "merge", status)
    committed = _run(state, table, "orphans", "committed")
    verdicts = {r.job: r.run_id for r in state.runs.latest_per_job([table], ignoring=VERDICTLESS)}
    assert verdicts == {"merge": failed, "orphans": committed}
    newest = {r.job: r.status for r in state.runs.latest_per_job([table])}
    assert newest == {"merge": "running", "orphans": "committed"}  # the default still passes over skipped only
