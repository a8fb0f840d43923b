"""Runs one job on one table under a lease: the only way icemaint changes a table.

The steps every job shares are done here, once:
1. **Lease**: acquire it (or report `skipped`), record the run, keep the lease alive while
   the job works (`LeaseKeeper`); the fence refuses every effect once it is lost.
2. **Re-check** (`precheck`): a daemon's job another daemon just did is `skipped`.
3. **Load and format check**: a table of a format the job does not handle is refused in
   one line.
4. **Plan** (metadata only): the plan the daemon made while evaluating is reused when the
   table has not moved since (same snapshot id); otherwise the job plans again.
5. **Nothing to do**: `noop`, with what the plan found; nothing is read through Spark and
   nothing is verified. (A dry run never gets here: `dry_run_job` plans without a lease
   and records nothing.)
6. **Run**: the job's own work; every effect goes through its `JobContext`, which stages,
   verifies and publishes changes and fences and verifies deletions, and records how.
7. **Record** how it ended: `committed`, `noop`, `skipped`, `fenced`, `failed` or
   `interrupted`, with the counters, the verification and the error; release the lease
   whatever happened.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

import structlog

from maintenance import faults, interrupts
from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.errors import IcemaintError, SparkStartError
from maintenance.jobs import registry
from maintenance.jobs.counters import undocumented
from maintenance.jobs.spec import JobSpec, PlanInput, PreparedPlan
from maintenance.lease.fence import Fence, FencedError
from maintenance.lease.keeper import LeaseKeeper
from maintenance.progress import Progress, no_progress
from maintenance.publish.publisher import ContentChangedError
from maintenance.run.context import JobContext
from maintenance.run.outcome import (
    FAILED,
    FENCED,
    INTERRUPTED,
    NOOP,
    PLANNED,
    SKIPPED,
    JobOutcome,
    JobResult,
    partial_outcome,
)
from maintenance.run.phases import PhaseClock, process_age_s
from maintenance.run.step_record import StepRecorder
from maintenance.schedule.value import COMPUTE, PREDICTED, SPARK_START
from maintenance.spark.errors import java_error_message
from maintenance.spark.session import get_spark, session_settings, spark_running
from maintenance.state.database import StateUnavailableError
from maintenance.state.leases import new_holder_id
from maintenance.state.store import StateStore, open_state

log = structlog.get_logger(__name__)
Work = Callable[[JobContext], JobOutcome]


def run_job(
    config: Config,
    ref: TableRef,
    job: str | JobSpec,
    options: Any = None,
    *,
    holder: str | None = None,
    dry_run: bool = False,
    verify: bool = False,
    state: StateStore | None = None,
    precheck: Callable[[], str | None] | None = None,
    prepared: PreparedPlan | Callable[[], PreparedPlan | None] | None = None,
    progress: Progress = no_progress,
    spark_settings: Mapping[str, str] | None = None,
    predicted: Mapping[str, Any] | None = None,
) -> JobResult:
    """Run a registered job. `options` is the job's options object, or raw values by option
    name (parsed by the job's one parser); a UsageError for bad options comes before any
    lease is taken. `prepared` is a plan made while evaluating, or a callable giving it once
    the lease is held and `precheck` has run (which may have planned again: a daemon's
    re-check under the lease), so the job reuses the newest plan of its snapshot. `predicted`:
    what the scheduler predicted of the run (`schedule/value.py`), recorded with it."""
    spec = registry.job(job) if isinstance(job, str) else job
    parsed = spec.parse_options(options if not isinstance(options, Mapping) else dict(options))
    if spec.check_options is not None:
        spec.check_options(parsed, dry_run)
    if dry_run:
        return dry_run_job(config, ref, spec, parsed, prepared() if callable(prepared) else prepared)
    return run_under_lease(
        config, ref, spec.name, lambda ctx: _work(ctx, spec, parsed, prepared() if callable(prepared) else prepared, spark_settings or {}),
        holder=holder, verify=verify, state=state, precheck=precheck, progress=progress, evaluated=prepared is not None, predicted=predicted,
    )


def dry_run_job(config: Config, ref: TableRef, spec: JobSpec, options: Any, prepared: PreparedPlan | None = None) -> JobResult:
    """What the job would do: its plan, from metadata, with the lists of what it would
    change. No lease is taken and nothing is recorded: a dry run leaves nothing that later
    planning reads (the run history decides when jobs are due). `planned` when the plan
    found work, `noop` when not."""
    started, started_at_ms = time.monotonic(), _now_ms()
    inputs = PlanInput(ref, load_table(config, ref), config, started_at_ms)
    refusal = spec.refusal(inputs.table.metadata.format_version, str(ref))
    result = JobResult(job=spec.name, table=str(ref), status=FAILED, run_id=None, dry_run=True, started_at_ms=started_at_ms)
    if refusal is not None:
        result.error = refusal
    else:
        plan = _plan(inputs, spec, options, prepared)
        result.status, result.counters = (NOOP if plan.empty else PLANNED), plan.counters(detail=True)
        result.reason = plan.nothing_to_do() if plan.empty else None
    result.duration_s, result.ended_at_ms = time.monotonic() - started, _now_ms()
    log.info("dry run", **{k: v for k, v in result.to_json().items() if not isinstance(v, (list, dict))})
    return result


def _plan(inputs: PlanInput, spec: JobSpec, options: Any, prepared: PreparedPlan | None) -> Any:
    if prepared is not None and prepared.snapshot_id == inputs.table.metadata.current_snapshot_id and prepared.options == options:
        return prepared.plan  # made while evaluating, on this very snapshot
    return spec.plan(inputs, options)


def _work(ctx: JobContext, spec: JobSpec, options: Any, prepared: PreparedPlan | None, spark_settings: Mapping[str, str]) -> JobOutcome:
    table = ctx.metadata.table
    refusal = spec.refusal(table.metadata.format_version, str(ctx.ref))
    if refusal is not None:
        raise JobRefusedError(refusal)
    ctx.phase("plan")
    ctx.progress("planning", **snapshot_counts(table))
    plan = _plan(ctx.metadata, spec, options, prepared)
    ctx.phase("read")
    if plan.empty:
        return JobOutcome(NOOP, counters=plan.counters(), reason=plan.nothing_to_do())
    if not spark_settings:
        return spec.run(ctx, plan)
    with session_settings(ctx.spark, spark_settings):
        return spec.run(ctx, plan)


def snapshot_counts(table: Any) -> dict[str, int]:
    """What planning reads, as the current snapshot's summary counts it (no manifest read):
    its live data and delete files and their bytes; zeros for a table without a snapshot."""
    snapshot = table.metadata.current_snapshot()
    summary = snapshot.summary.additional_properties if snapshot is not None and snapshot.summary is not None else {}
    names = {"data_files": "total-data-files", "delete_files": "total-delete-files", "bytes": "total-files-size"}
    return {name: int(summary.get(key) or 0) for name, key in names.items()}


class JobRefusedError(IcemaintError):
    """The job does not handle this table (its format); nothing was done."""


def run_under_lease(
    config: Config,
    ref: TableRef,
    job: str,
    work: Work,
    *,
    holder: str | None = None,
    verify: bool = False,
    state: StateStore | None = None,
    precheck: Callable[[], str | None] | None = None,
    progress: Progress = no_progress,
    evaluated: bool = False,
    predicted: Mapping[str, Any] | None = None,
) -> JobResult:
    """The lease, the run record and the verification around `work`, for any job (tests
    give it their own bodies). `precheck`, called once the lease is held, may return a
    reason not to run after all; the run is then `skipped`. `evaluated`: an evaluation
    planned the run (the daemon), and another will follow in this process (`_health_at_end`)."""
    phases = PhaseClock(process_age_s())
    state = state or open_state(config)
    holder = holder or new_holder_id()
    ttl_s = config.leases.ttl_seconds
    started, started_at_ms = time.monotonic(), _now_ms()
    run_id = str(uuid.uuid4())
    table_name = str(ref)
    asked_at = time.monotonic()
    lease = state.leases.acquire(table_name, holder, ttl_s)
    if lease is None:
        other = state.leases.get(table_name)
        state.runs.start(run_id, table_name, job, holder_id=holder, lease_epoch=None, status=SKIPPED)
        reason = f"leased by {other.holder}" if other and other.holder else "lease not available"
        state.runs.finish(run_id, SKIPPED, error=reason)  # the history's one column for why a run did not end well
        log.info("job skipped", table=table_name, job=job, reason=reason)
        return JobResult(job=job, table=table_name, status=SKIPPED, run_id=run_id, reason=reason, duration_s=time.monotonic() - started,
                         started_at_ms=started_at_ms, ended_at_ms=_now_ms(), phase_seconds=phases.seconds())

    structlog.contextvars.bind_contextvars(table=table_name, job=job, run_id=run_id)
    result = JobResult(job=job, table=table_name, status=FAILED, run_id=run_id, started_at_ms=started_at_ms)
    recorder = StepRecorder(state.runs, run_id)
    context: JobContext | None = None
    try:
        abandoned = state.runs.abandon_running(table_name, taken_by=holder, epoch=lease.epoch)
        if abandoned:
            log.warning("runs whose holder died are now abandoned", table=table_name, runs=abandoned)
        state.runs.start(run_id, table_name, job, holder_id=holder, lease_epoch=lease.epoch)
        faults.point("lease-acquired")
        canceller = SparkCanceller(config, run_id)
        with canceller, LeaseKeeper(state.leases, lease, ttl_s, on_lost=lambda reason: canceller.start(), asked_at=asked_at) as keeper:
            fence = Fence(state.leases, keeper, job=job, run_id=run_id)
            context = JobContext(config=config, ref=ref, job=job, run_id=run_id, fence=fence, verify=verify, progress=_logged(progress, recorder),
                                 phases=phases)
            reason = precheck() if precheck is not None else None
            if reason is not None:
                result.status, result.reason = SKIPPED, reason
            else:
                _run(context, work, result)
            lease = keeper.lease
    finally:
        phases.enter("commit")  # recording the run's end
        result.compute_s = context.compute_s() if context is not None else None
        result.duration_s, result.ended_at_ms = time.monotonic() - started, _now_ms()
        recorder.close()  # its last step before its end
        _record_end(state, result, lease.epoch, config=config, ref=ref, health=_reads_health_after(job), evaluated=evaluated, predicted=predicted,
                    spark_start_s=context.spark_start_s if context is not None else 0.0)
        result.phase_seconds = phases.seconds()
        try:
            state.leases.release(lease)
        except StateUnavailableError:
            log.warning("could not release the lease; it expires by itself", table=table_name)
        structlog.contextvars.unbind_contextvars("table", "job", "run_id")
    log.info("job ended", **{k: v for k, v in result.to_json().items() if not isinstance(v, list)})
    return result


def _now_ms() -> int:
    return int(time.time() * 1000)


def _logged(progress: Progress, recorder: StepRecorder) -> Progress:
    """Every progress step a job reports goes to the log too (with the run's table, job and
    run id; under the log key `stage`, which log readers know), and to the run's record
    (`StepRecorder`)."""

    def report(step: str, **counts: int) -> None:
        log.info("job progress", stage=step, **counts)
        recorder(step, counts)
        progress(step, **counts)

    return report


def _run(context: JobContext, work: Work, result: JobResult) -> None:
    try:
        try:
            outcome = work(context)
        except BaseException as exc:
            partial = partial_outcome(exc)  # what it had done (committed, expired) before it failed
            if partial is not None:
                result.snapshot_id, result.counters, result.effect = partial.snapshot_id, dict(partial.counters), partial.effect
            raise
        finally:
            _take_verification(context, result)
        result.status, result.snapshot_id, result.counters = outcome.status, outcome.snapshot_id, dict(outcome.counters)
        result.reason, result.effect = outcome.reason, outcome.effect
        unknown = undocumented(result.counters, _own_counters(context.job))
        if unknown:
            log.warning("job reported counters missing from jobs/counters.py", counters=unknown)
    except KeyboardInterrupt as exc:  # SIGINT, or SIGTERM on the command line (`maintenance/interrupts.py`)
        result.status, result.error = INTERRUPTED, f"interrupted ({exc.args[0] if exc.args else 'SIGINT'})"
        raise
    except Exception as exc:
        if interrupts.requested():  # a call the interrupt cut in the middle failed in its own way
            result.status, result.error = INTERRUPTED, f"interrupted ({type(exc).__name__} after the signal)"
            raise KeyboardInterrupt("interrupted") from exc
        _classify_failure(context, exc, result)
    finally:
        if context.removed is not None:  # deleting jobs: what they deleted, however they ended
            result.counters.update(context.removed.counters())


def _classify_failure(context: JobContext, exc: Exception, result: JobResult) -> None:
    """How a run that raised ended: content changed, fenced, refused or failed."""
    lost = context.fence.keeper.lost.is_set()
    if isinstance(exc, ContentChangedError):
        result.status, result.error, result.content_verified = FAILED, str(exc), False
    elif isinstance(exc, FencedError):
        result.status, result.error = FENCED, str(exc)
    elif isinstance(exc, JobRefusedError):
        result.status, result.error = FAILED, str(exc)
    elif isinstance(exc, SparkStartError):  # the process's Spark, not the job: its line says why, no traceback
        result.status, result.error = FAILED, str(exc)
        log.error("job failed", error=result.error)
    elif isinstance(exc, IcemaintError):
        result.status, result.error = (FENCED, f"{exc} (lease lost: {context.fence.keeper.lost_reason})") if lost else (FAILED, str(exc))
        log.error("job failed", error=result.error, exc_info=exc)
    elif lost:
        result.status, result.error = FENCED, f"cancelled: lease lost ({context.fence.keeper.lost_reason})"
        log.error("job failed", error=result.error, exc_info=exc)
    else:
        result.status, result.error = FAILED, f"{type(exc).__name__}: {java_error_message(exc)}"
        log.error("job failed", error=result.error, exc_info=exc)


def _own_counters(job: str) -> Mapping[str, str]:
    """A registered job's own counters (bodies run by tests under other names have none)."""
    return registry.job(job).counters if job in registry.JOB_NAMES else {}


def _take_verification(context: JobContext, result: JobResult) -> None:
    """How the run's effects were verified (none when it published and deleted nothing)."""
    if "verification" not in context.__dict__:
        return
    verification = context.verification
    if verification.verified is not None:
        result.fingerprint_before, result.fingerprint_after = verification.fingerprint_before, verification.fingerprint_after
        result.content_verified = verification.verified
        result.verify_counters = verification.counters()


def _reads_health_after(job: str) -> bool:
    """Whether a run of `job` records the table's health at its end (`JobSpec.health_after`;
    a body a test gives under its own name does)."""
    return registry.job(job).health_after if job in registry.JOB_NAMES else True


def _record_end(state: StateStore, result: JobResult, epoch: int, *, config: Config | None = None, ref: TableRef | None = None,
                health: bool = True, evaluated: bool = False, predicted: Mapping[str, Any] | None = None, spark_start_s: float = 0.0) -> None:
    counters = dict(result.counters)
    if predicted is not None:
        counters[PREDICTED] = dict(predicted)
    if spark_start_s > 0:
        counters[SPARK_START] = round(spark_start_s, 3)  # not the job's: its calibration leaves it out (`schedule/value.job_seconds`)
    if result.compute_s is not None:
        counters[COMPUTE] = round(result.compute_s, 3)
    if result.content_verified is not None:
        counters.update(fingerprint_before=result.fingerprint_before, fingerprint_after=result.fingerprint_after, content_verified=result.content_verified,
                        **result.verify_counters)
    health_after = _health_at_end(config, ref, evaluated) if health and config is not None and ref is not None else None
    try:
        error = result.reason if result.status == SKIPPED else result.error  # a skip's reason, in the history's one column for it
        state.runs.finish(result.run_id or "", result.status, snapshot_id=result.snapshot_id, counters=counters, error=error, lease_epoch=epoch,
                          health=health_after)
    except StateUnavailableError:
        log.error("could not record the end of the run", status=result.status)


def _health_at_end(config: Config, ref: TableRef, evaluated: bool) -> dict[str, Any] | None:
    """The table's health counters once the run is over (metadata only, no Spark), for the
    status page's time chart. Never fails the run: a failure is logged and nothing stored.

    Read two ways, for what follows the run in this process. In the daemon (`evaluated`)
    the next evaluation needs the snapshot's files anyway: `table_health` reads them into
    the process's snapshot cache (or finds them there, read by the verification) and that
    evaluation reads none again. A one-off run (the command line, cron) is followed by
    nothing: the counters are streamed (`table/file_counts.py`), so a table of millions of
    files costs the run no memory beyond its own budget."""
    from maintenance.table.file_counts import snapshot_file_counts
    from maintenance.table.health import FileCounters, table_health

    try:
        table = load_table(config, ref)
        counts: FileCounters = (table_health(str(ref), table, small_file_bytes=config.health.small_file_bytes) if evaluated
                                else snapshot_file_counts(table, config.health.small_file_bytes))
        return {
            "snapshot_id": table.metadata.current_snapshot_id,
            "data_files": counts.data_files,
            "small_data_files": counts.small_data_files,
            "position_delete_files": counts.position_delete_files,
            "equality_delete_files": counts.equality_delete_files,
            "deletion_vectors": counts.deletion_vectors,
            "snapshots": len(table.metadata.snapshots),
        }
    except Exception as exc:
        log.warning("could not read the table's health at the end of the run", error=str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        return None


class SparkCanceller:
    """Stops a run's Spark jobs once its lease is lost, and keeps stopping them until the run
    ends: Spark cancels only the jobs of a group that are running when asked, and PySpark
    may take seconds to submit the next one (its Python workers start first), which would
    then run to its end. So the run's group is cancelled at once and every
    `EVERY_S` after, until the run is over."""

    EVERY_S = 0.5

    def __init__(self, config: Config, run_id: str) -> None:
        self.config = config
        self.run_id = run_id
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._cancel, name=f"spark-cancel:{self.run_id}", daemon=True)
            self._thread.start()

    def _cancel(self) -> None:
        while True:
            try:
                if spark_running():
                    get_spark(self.config).sparkContext.cancelJobGroup(self.run_id)
            except Exception as exc:  # noqa: BLE001 (Spark stopping: nothing left to cancel)
                log.debug("cancelling the run's Spark jobs failed", error=type(exc).__name__)
            if self._done.wait(self.EVERY_S):
                return

    def __enter__(self) -> SparkCanceller:
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
