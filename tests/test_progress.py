"""Progress: the terminal display (redrawn in place with the job's latest event, then erased) and the stage a run records for the status page."""

from __future__ import annotations

import io
import time
import uuid

from maintenance.cli.progress import progress_display, wanted
from maintenance.jobs.runner import StageRecorder
from maintenance.jobs.spec import describe_progress as describe
from maintenance.state.database import make_engine
from maintenance.state.runs import RunStore


def test_display_redraws_the_latest_event_and_erases_itself() -> None:
    out = io.StringIO()
    with progress_display("merge local.db.t", enabled=True, stream=out) as progress:
        progress("rewritten", data_files_added=4)
        time.sleep(1.2)
    text = out.getvalue()
    assert "\r\033[Kmerge local.db.t: 1s  rewritten: data files added 4" in text
    assert text.endswith("\r\033[K")


def test_display_is_off_for_json_and_pipes() -> None:
    out = io.StringIO()
    with progress_display("x", enabled=wanted(False, out), stream=out) as progress:
        progress("a", b=1)
    assert out.getvalue() == "" and not wanted(True)
    assert describe("staged", {}) == "staged" and describe("written", {"files": 9}) == "written: files 9"


def test_a_runs_stage_reaches_its_record_at_once_and_its_counts_at_most_every_interval(state) -> None:  # type: ignore[no-untyped-def]
    """What the status page shows of a running job (`runner.StageRecorder`), on each state
    database: a new stage is written at once, the counts of the same stage no more often than
    the interval; a database that refuses the write costs the page a stage, not the run."""
    run_id = str(uuid.uuid4())
    state.runs.start(run_id, "cat.ns.staged", "merge", holder_id="h", lease_epoch=1)
    record = StageRecorder(state.runs, run_id)

    record("planning", {})
    record("groups written", {"groups_written": 1})
    record("groups written", {"groups_written": 2})  # within the interval: not written
    assert state.runs.get(run_id).stage == {"stage": "groups written", "groups_written": 1}
    record._next_at = 0.0  # the interval has passed
    record("groups written", {"groups_written": 3})
    assert state.runs.get(run_id).stage == {"stage": "groups written", "groups_written": 3}

    unreachable = StageRecorder(RunStore(make_engine("postgresql+psycopg://nobody@127.0.0.1:9/none")), run_id)
    started = time.monotonic()
    unreachable("planning", {})  # refused at once (nothing listens on port 9): logged, not raised
    unreachable("verifying", {})  # a new stage, but within the back-off: not even tried
    assert time.monotonic() - started < 10 and unreachable._next_at > time.monotonic() + 20
