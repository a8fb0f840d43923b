"""When the overview calls a table failing: while some job's newest verdict is a failure.
A failed run stops counting once a later run of that job succeeds; an interrupted run is
no failure (a signal stopped it), nor does it hide an earlier one. Real runs in a real state
database, through the pages as the HTTP server answers them, views kept between runs."""

from __future__ import annotations

import uuid

from maintenance.config import Config
from maintenance.state.store import StateStore
from maintenance.workload.evaluation import generated_evaluation
from tests.support.pages import published, record_run, visit


def _next_millisecond(state: StateStore) -> None:
    """Runs started in one millisecond have no order: wait for the database's clock to move."""
    now = state.runs.database_now_ms()
    while state.runs.database_now_ms() <= now:
        pass


def _failing(pages: object) -> set[str]:
    rows = visit(pages, "/?per=200").rows["overview"]  # type: ignore[arg-type]
    return {row["data-table"] for row, _ in rows if "failing" in (row.get("class") or "")}


def test_a_table_is_failing_until_a_later_run_of_that_job_succeeds(config: Config, state: StateStore) -> None:
    tag = uuid.uuid4().hex[:6]
    recovered, still, interrupted, after_failure, running_again, other_job = (f"lake.f_{tag}.t{i}" for i in range(6))
    pages = published(config, state, generated_evaluation([recovered, still, interrupted, after_failure, running_again, other_job]))
    for name in (recovered, still, after_failure, running_again, other_job):
        record_run(state, name, "merge", "failed", error="boom")
    record_run(state, interrupted, "merge", "interrupted", error="SIGTERM")
    assert _failing(pages) == {recovered, still, after_failure, running_again, other_job}  # the interrupted one is not

    _next_millisecond(state)
    record_run(state, recovered, "merge", "committed")  # a later success of the same job: no longer failing
    record_run(state, after_failure, "merge", "interrupted", error="SIGTERM")  # hides nothing
    record_run(state, running_again, "merge", "running")  # not yet a verdict
    record_run(state, other_job, "orphans", "committed")  # another job's success says nothing of merge
    record_run(state, still, "merge", "skipped")
    assert _failing(pages) == {still, after_failure, running_again, other_job}

    _next_millisecond(state)
    record_run(state, after_failure, "merge", "noop")  # a noop is a success too
    assert _failing(pages) == {still, running_again, other_job}


def test_while_spark_starts_the_overview_shows_the_lease_held_and_the_stage(config: Config, state: StateStore) -> None:
    """The runner takes the lease and records the run before Spark starts, and reports
    `starting Spark` as the run's stage (run/context.py): the row says so, not "free"."""
    name = f"lake.s_{uuid.uuid4().hex[:6]}.t"
    holder = "daemon@ops-1:4242:9f1c2e7a"
    lease = state.leases.acquire(name, holder, ttl_s=120)
    assert lease is not None
    try:
        run_id = record_run(state, name, "merge", "running", holder=holder)
        state.runs.set_step(run_id, "starting Spark", {})
        pages = published(config, state, generated_evaluation([name]))
        [(_, cells)] = visit(pages, "/").rows["overview"]
        assert "starting Spark" in cells[7] and "held" in cells[9] and holder in cells[9], cells
        state.runs.finish(run_id, "committed")
    finally:
        state.leases.release(lease)
