"""The overview's newest runs, kept between views (maintenance/ui/latest_runs.py): after
every change a writer can make (a run started, finished, its stage reported, rows deleted),
what a view reads is what a full read of the database says, on every state database."""

from __future__ import annotations

import uuid

import pytest

from maintenance.state.store import StateStore
from maintenance.ui import latest_runs
from maintenance.ui.latest_runs import LatestRuns


def _full(state: StateStore) -> dict[str, dict[str, tuple[str, str, object]]]:
    """The oracle: everything read afresh, as comparable tuples."""
    out: dict[str, dict[str, tuple[str, str, object]]] = {}
    for run in type(state.runs).latest_per_job(state.runs):  # the class's, whatever a test put on the instance
        out.setdefault(run.table, {})[run.job] = (run.run_id, run.status, run.stage)
    return out


def _seen(view: dict) -> dict[str, dict[str, tuple[str, str, object]]]:
    return {table: {job: (r.run_id, r.status, r.stage) for job, r in jobs.items()} for table, jobs in view.items()}


def _after_this_millisecond(state: StateStore) -> None:
    """Wait until the database's clock has left the millisecond of the last write: a run that
    ended in the very millisecond a view asks at is, rightly, read again by the next view."""
    now = state.runs.database_now_ms()
    while state.runs.database_now_ms() <= now:
        pass


def test_each_view_sees_what_a_full_read_sees(state: StateStore, monkeypatch: pytest.MonkeyPatch) -> None:
    prefix = f"lr{uuid.uuid4().hex[:6]}"
    tables = [f"local.{prefix}.t{i}" for i in range(4)]
    for table in tables:
        for job in ("merge", "orphans"):
            run_id = f"{table}:{job}:0"
            state.runs.start(run_id, table, job, holder_id="h", lease_epoch=1)
            state.runs.finish(run_id, "committed")
    monkeypatch.setattr(latest_runs, "MARGIN_MS", 0)  # no minute's margin: what is read again is exactly what moved
    _after_this_millisecond(state)
    kept = LatestRuns()
    assert _seen(kept.read(state)) == _full(state)
    asked: list[object] = []
    real = state.runs.latest_per_job
    monkeypatch.setattr(state.runs, "latest_per_job", lambda names=None, **kw: asked.append(names) or real(names, **kw))  # both reads: newest runs, verdicts

    state.runs.start(f"{tables[0]}:merge:1", tables[0], "merge", holder_id="h", lease_epoch=2)  # started
    view = kept.read(state)
    assert asked[-1] == {tables[0]}  # only the table whose runs moved was read again
    assert _seen(view) == _full(state)
    state.runs.set_step(f"{tables[0]}:merge:1", "writing", {"groups_done": 3})  # a running run reports its stage: no time moves
    assert _seen(kept.read(state)) == _full(state) and asked[-1] == {tables[0]}  # read again while its newest run runs
    state.runs.finish(f"{tables[0]}:merge:1", "failed", error="boom")
    state.runs.start(f"{tables[1]}:orphans:1", tables[1], "orphans", holder_id="h", lease_epoch=2, status="skipped")  # says nothing
    assert _seen(kept.read(state)) == _full(state)
    assert _seen(kept.read(state))[tables[0]]["merge"][1] == "failed"

    state.runs.forget(tables[2])  # rows deleted: no time moves, seen at the next full read
    monkeypatch.setattr(latest_runs, "FULL_REFRESH_S", 0.0)
    assert _seen(kept.read(state)) == _full(state) and tables[2] not in _seen(kept.read(state))
