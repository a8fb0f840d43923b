"""Runs one job on one table under a lease: the only way icemaint changes a table.

Acquire the lease (or report `skipped`), record the run, keep the lease alive while the
body runs, verify the content before and after when asked, and record how it ended:
`committed`, `noop`, `fenced` (the lease was lost: nothing more was committed or deleted)
or `failed`. The lease is released at the end whatever happened.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import structlog

from maintenance.catalogs import TableRef
from maintenance.config import Config
from maintenance.errors import IcemaintError
from maintenance.fencing import Fence, FencedError, LeaseKeeper
from maintenance.fingerprint import Fingerprint, content_fingerprint
from maintenance.jobs.context import JobContext
from maintenance.jobs.result import FAILED, FENCED, SKIPPED, JobOutcome, JobResult
from maintenance.spark.errors import java_error_message
from maintenance.spark.session import get_spark, spark_running
from maintenance.state.database import StateUnavailableError
from maintenance.state.leases import new_holder_id
from maintenance.state.store import StateStore, open_state

log = structlog.get_logger(__name__)
JobBody = Callable[[JobContext], JobOutcome]


def run_job(
    config: Config,
    ref: TableRef,
    job: str,
    body: JobBody,
    *,
    holder: str | None = None,
    dry_run: bool = False,
    verify: bool = False,
    options: dict | None = None,
    state: StateStore | None = None,
    precheck: Callable[[], str | None] | None = None,
) -> JobResult:
    """`precheck`, called once the lease is held, may return a reason not to run after all
    (the job is no longer due: another daemon just ran it); the run is then `skipped`."""
    state = state or open_state(config)
    holder = holder or new_holder_id()
    ttl_s = config.leases.ttl_seconds
    started = time.monotonic()
    run_id = str(uuid.uuid4())
    table_name = str(ref)
    lease = state.leases.acquire(table_name, holder, ttl_s)
    if lease is None:
        other = state.leases.get(table_name)
        state.runs.start(run_id, table_name, job, holder_id=holder, lease_epoch=None, status=SKIPPED)
        reason = f"leased by {other.holder}" if other and other.holder else "lease not available"
        state.runs.finish(run_id, SKIPPED, error=reason)
        log.info("job skipped", table=table_name, job=job, reason=reason)
        return JobResult(job=job, table=table_name, status=SKIPPED, run_id=run_id, error=reason, dry_run=dry_run, duration_s=time.monotonic() - started)

    structlog.contextvars.bind_contextvars(table=table_name, job=job, run_id=run_id)
    result = JobResult(job=job, table=table_name, status=FAILED, run_id=run_id, dry_run=dry_run)
    try:
        state.runs.start(run_id, table_name, job, holder_id=holder, lease_epoch=lease.epoch)
        with LeaseKeeper(state.leases, lease, ttl_s, on_lost=lambda reason: _cancel_spark(config, run_id)) as keeper:
            fence = Fence(state.leases, keeper, job=job, run_id=run_id)
            context = JobContext(config=config, ref=ref, job=job, run_id=run_id, fence=fence, dry_run=dry_run, options=dict(options or {}))
            reason = precheck() if precheck is not None else None
            if reason is not None:
                result.status, result.error = SKIPPED, reason
            else:
                _run_body(context, body, result, verify)
            lease = keeper.lease
    finally:
        result.duration_s = time.monotonic() - started
        _record_end(state, result)
        try:
            state.leases.release(lease)
        except StateUnavailableError:
            log.warning("could not release the lease; it expires by itself", table=table_name)
        structlog.contextvars.unbind_contextvars("table", "job", "run_id")
    log.info("job ended", **{k: v for k, v in result.to_json().items() if not isinstance(v, list)})
    return result


def _run_body(context: JobContext, body: JobBody, result: JobResult, verify: bool) -> None:
    before: Fingerprint | None = None
    try:
        if verify:
            before = content_fingerprint(context.spark, context.ref)
        outcome = body(context)
        result.status, result.snapshot_id, result.counters = outcome.status, outcome.snapshot_id, dict(outcome.counters)
        if verify and before is not None:
            after = content_fingerprint(context.spark, context.ref)
            result.fingerprint_before, result.fingerprint_after = before.fingerprint, after.fingerprint
            result.content_verified = before.same_content(after)
            if not result.content_verified:
                result.status = FAILED
                result.error = f"content changed: {before.rows} rows/{before.fingerprint} before, {after.rows} rows/{after.fingerprint} after"
                log.error("maintenance changed the table's content", before=before.to_json(), after=after.to_json())
    except FencedError as exc:
        result.status, result.error = FENCED, str(exc)
    except IcemaintError as exc:
        result.status, result.error = (FENCED, f"{exc} (lease lost: {context.fence.keeper.lost_reason})") if context.fence.keeper.lost.is_set() else (FAILED, str(exc))
        log.error("job failed", error=result.error, exc_info=True)
    except Exception as exc:
        if context.fence.keeper.lost.is_set():
            result.status, result.error = FENCED, f"cancelled: lease lost ({context.fence.keeper.lost_reason})"
        else:
            result.status, result.error = FAILED, f"{type(exc).__name__}: {java_error_message(exc)}"
        log.error("job failed", error=result.error, exc_info=True)


def _record_end(state: StateStore, result: JobResult) -> None:
    counters = dict(result.counters)
    if result.content_verified is not None:
        counters.update(fingerprint_before=result.fingerprint_before, fingerprint_after=result.fingerprint_after, content_verified=result.content_verified)
    try:
        state.runs.finish(result.run_id or "", result.status, snapshot_id=result.snapshot_id, counters=counters, error=result.error)
    except StateUnavailableError:
        log.error("could not record the end of the run", status=result.status)


def _cancel_spark(config: Config, run_id: str) -> None:
    """Stop this run's Spark jobs at once when its lease is lost."""
    if spark_running():
        get_spark(config).sparkContext.cancelJobGroup(run_id)


