"""The stage a running run records for the status page (`run/step_record.py`), on each state database."""

from __future__ import annotations

import time
import uuid

from maintenance.run.step_record import StepRecorder
from maintenance.state.database import make_engine
from maintenance.state.runs import RunStore


def test_a_new_stage_is_recorded_and_the_counts_of_the_same_stage_at_most_every_interval(state) -> None:  # type: ignore[no-untyped-def]
    run_id = str(uuid.uuid4())
    state.runs.start(run_id, "cat.ns.staged", "merge", holder_id="h", lease_epoch=1)

    first = StepRecorder(state.runs, run_id)
    first("planning", {})
    first("groups written", {"groups_written": 1})
    first("groups written", {"groups_written": 2})  # the same stage within the interval: not recorded
    first.close()
    first("verifying", {})  # after close: ignored
    assert state.runs.get(run_id).stage == {"stage": "groups written", "groups_written": 1}

    second = StepRecorder(state.runs, run_id)
    second("groups written", {"groups_written": 3})
    second.close()
    assert state.runs.get(run_id).stage == {"stage": "groups written", "groups_written": 3}
    state.runs.finish(run_id, "committed")
    third = StepRecorder(state.runs, run_id)
    third("late", {})
    third.close()
    assert state.runs.get(run_id).stage == {"stage": "groups written", "groups_written": 3}  # an ended run keeps its last stage


def test_a_database_that_refuses_the_write_costs_the_page_a_stage_never_the_run() -> None:
    recorder = StepRecorder(RunStore(make_engine("postgresql+psycopg://nobody@127.0.0.1:9/none")), str(uuid.uuid4()))
    started = time.monotonic()
    for index in range(100):
        recorder(f"stage {index}", {"n": index})  # never waits for the database
    reported = time.monotonic() - started
    recorder.close()
    assert reported < 0.5 and recorder.quiet  # nothing listens on port 9: refused, logged, backing off
