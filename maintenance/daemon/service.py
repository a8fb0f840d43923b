"""`icemaint daemon`: evaluate every table on an interval and run what is due.

- One worker per table at a time (a table's due jobs run in order, each re-checked under
  its lease), at most `max_concurrent_jobs` tables at once, leases shared with every other
  daemon on the same state database. A table whose worker ended while an evaluation was
  reading waits for the next one (what was just done still looked due).
- Spark starts with the first job that needs it, under that job's lease (the table's run
  says `starting Spark`), and stops after `spark_idle` without a job. A Spark that cannot
  start is a failing dependency; while it fails, each worker tries to start it before it
  takes a lease, so no more runs are recorded for it.
- Every interval starts with a probe of the state database: while it fails, nothing is
  evaluated or dispatched, `/healthz` answers 503 naming it, and the probe is all that
  runs (one line in the log when it starts failing, one when it works again). A state
  database that is misconfigured (a role, database or password that does not exist) stops
  the daemon at start-up (one line, exit 2, like every command); if it becomes so later
  (the role dropped), the daemon stays up, says so the same way and probes less and less
  often (doubling, up to 10 minutes): only a person can fix it. A failing
  catalog is skipped with its tables (503, named); an evaluation that fails otherwise backs
  off (doubling, up to 10 minutes: `backoff.doubling`); a failing job backs off per table
  and job through the run history (`schedule/decisions.py`).
- The HTTP port serves `/metrics`, the probes, readers' scan reports (`POST
  /v1/scan-reports`, with `daemon.scan_reports_token` set: `readers/endpoint.py`) and the read-only status page
  (`maintenance/ui/`), which renders from the latest evaluation (published to its cache)
  in the server's own threads. `/readyz` (and `/healthz`) is `healthy()`: 503 while a
  dependency fails. `/livez` is `alive()`: 503 only when this process no longer works (its
  main loop or scheduler stopped, or one evaluation has run far too long), so a liveness
  probe restarts a stuck daemon and never one that waits for its database.
- Several daemons on one state database share the fleet (`schedule/membership.py`): a heartbeat
  renews this one's membership every third of its TTL, and when the members move (one
  dies, leaves or joins) it starts an evaluation at once; what each evaluation saw is
  stored in the database (`schedule/stored.py`), so a share taken over starts warm.
- SIGTERM/SIGINT: no new work; running jobs get `shutdown_grace` to finish, then they are
  cancelled: their fences shut (nothing more is published or deleted, even by a job that
  is between Spark jobs) and their Spark jobs cancelled; leases are released as each job
  ends; exit 0, within `shutdown_grace` and the cancellation's wait whatever hangs (an
  evaluation in a catalog that never answers is not waited for).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime, timezone

import structlog

from maintenance import interrupts
from maintenance.backoff import doubling
from maintenance.config import Config
from maintenance.daemon.health import POLICIES, SPARK, STATE, Dependencies, catalog
from maintenance.daemon.http import PostDoor, serve
from maintenance.daemon.metrics import DaemonMetrics
from maintenance.errors import EXIT_OK, ConfigError, IcemaintError
from maintenance.jobs import registry
from maintenance.lease.keeper import revoke_all
from maintenance.policy.loader import load_policies
from maintenance.policy.model import Policy
from maintenance.readers.endpoint import PATH as SCAN_REPORTS_PATH
from maintenance.readers.endpoint import ScanReportEndpoint
from maintenance.schedule.budget import Spending, choose, fleet_part
from maintenance.schedule.cycle import Evaluation, evaluate, run_decision
from maintenance.schedule.decisions import Decision
from maintenance.schedule.kept import KeptEvaluations
from maintenance.schedule.membership import Membership
from maintenance.spark.session import get_spark, spark_running, spark_start_failure, stop_spark
from maintenance.state.database import StateUnavailableError
from maintenance.state.leases import new_holder_id
from maintenance.state.store import StateStore, open_state
from maintenance.ui.pages import StatusPages
from maintenance.ui.status import StatusCache

log = structlog.get_logger(__name__)
MAX_EVALUATION_BACKOFF_S = 600.0
CANCEL_WAIT_S = 60.0
MAIN_LOOP_STALL_S = 30.0  # the main loop ticks every 0.5 s
STUCK_EVALUATION_S = 1800.0  # at least; or ten intervals (an evaluation of a large fleet is slow, not stuck)


class Daemon:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.settings = config.daemon
        self.holder = new_holder_id("daemon")
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.running: dict[str, Future[None]] = {}  # table -> its worker
        self.worked_until: dict[str, float] = {}  # table -> when its last worker ended (monotonic)
        self.catalogs_said_empty: set[str] = set()  # catalogs whose listing of no table was logged
        self.pool = ThreadPoolExecutor(max_workers=self.settings.max_concurrent_jobs, thread_name_prefix="icemaint-job")
        self.metrics = DaemonMetrics(config.daemon.metrics_tables)
        self.policies: list[Policy] | None = None
        self.dependencies = Dependencies()
        self.last_evaluation_ok: float | None = None
        self.evaluation_failures = 0
        self.next_evaluation_at = 0.0
        self.state_misconfigured = 0  # probes in a row that found the state database misconfigured
        self.probes_to_skip = 0  # intervals left before the next probe of a misconfigured one
        self.last_job_end = time.monotonic()
        self.http_port: int | None = None
        self.main_tick = time.monotonic()  # the main loop's last turn (`alive`)
        self.evaluation_started: float | None = None  # while an evaluation (or its state probe) runs
        self.scheduler_running: Callable[[], bool] = lambda: True
        # The status page's cache: each successful evaluation is published to it, so the page
        # never evaluates while the daemon has evaluated (it does, in its own thread, before).
        self.status = StatusCache(config, ttl_s=self.settings.interval_s)
        self.kept = KeptEvaluations()  # what each cycle saw of the tables that stay put (`schedule/kept.py`); the evaluation thread's alone
        # this daemon's share of the fleet (`schedule/membership.py`)
        self.membership = Membership(self.holder, Membership.ttl_for(config.leases.ttl_seconds))
        self.evaluate_again = False  # the fleet's members moved during an evaluation: another one follows at once
        self.wake_evaluation: Callable[[], None] = lambda: None  # start an evaluation now (the scheduler's, once running)
        self.spending = Spending()  # the last hour's compute-seconds of job runs, for `daemon.budget`

    # -- lifecycle ---------------------------------------------------------------------
    def run(self) -> int:
        from apscheduler.schedulers.background import BackgroundScheduler

        self._refuse_misconfigured_state()
        interrupts.hand_over()
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._on_signal)
        server = None
        if self.settings.metrics_port:
            pages = StatusPages(self.config, self.status, policies=lambda: self.policies)
            server = serve(self.settings.metrics_host, self.settings.metrics_port, self.metrics.registry, self.healthy, pages=pages, alive=self.alive,
                           posts=self._posts())
            self.http_port = server.server_address[1]
        scheduler = BackgroundScheduler(timezone=timezone.utc)
        scheduler.add_job(self.evaluate_and_dispatch, "interval", seconds=self.settings.interval_s, id="evaluate",
                          next_run_time=datetime.now(timezone.utc), max_instances=1, coalesce=True, misfire_grace_time=None)
        scheduler.add_job(self.stop_idle_spark, "interval", seconds=max(1.0, min(30.0, self.settings.spark_idle_s / 2)), id="idle",
                          max_instances=1, coalesce=True)
        scheduler.add_job(self.keep_membership, "interval", seconds=self.membership.heartbeat_s, id="membership", max_instances=1, coalesce=True)
        scheduler.start()
        self.scheduler_running = lambda: bool(scheduler.running)
        self.wake_evaluation = lambda: scheduler.modify_job("evaluate", next_run_time=datetime.now(timezone.utc))
        log.info("daemon started", holder=self.holder, interval_s=self.settings.interval_s, max_concurrent_jobs=self.settings.max_concurrent_jobs,
                 metrics_port=self.http_port, policies=str(self.config.policies_dir))
        while not self.stopping.wait(0.5):
            self.main_tick = time.monotonic()
        log.info("daemon stopping: no new work", running=sorted(self.running))
        deadline = time.monotonic() + self.settings.shutdown_grace_s
        # Not waited for: an evaluation in progress dispatches nothing more (`_dispatch` reads
        # `stopping` under the lock), and one inside a catalog that hangs would hold the stop
        # for the catalog's time bound, past the grace.
        scheduler.shutdown(wait=False)
        self._drain(deadline)
        self._leave_the_fleet()
        if spark_running():
            stop_spark()
        if server is not None:
            server.shutdown()
        log.info("daemon stopped")
        _exit_past_hung_threads(EXIT_OK, self._still_busy)
        return EXIT_OK

    def _leave_the_fleet(self) -> None:
        """Give this daemon's share back as it stops (if the database is away, its membership
        expires by itself within one lease TTL)."""
        try:
            self.membership.leave(open_state(self.config))
        except IcemaintError as exc:
            log.warning("daemon membership not released; it expires by itself", error=str(exc))

    def _posts(self) -> dict[str, PostDoor]:
        """What the HTTP port takes by POST: readers' scan reports, when a token is set."""
        token = self.settings.scan_reports_token
        if token is None:
            return {}
        endpoint = ScanReportEndpoint(token, self.config.default_catalog, self.config.catalogs, lambda: open_state(self.config),
                                      counted=lambda outcome, count: self.metrics.scan_reports.labels(outcome).inc(count))
        return {SCAN_REPORTS_PATH: endpoint.receive}

    def _refuse_misconfigured_state(self) -> None:
        """Exit 2 in one line (the CLI's, without a traceback) when the state database is
        misconfigured at start-up: a daemon answering 503 for ever would hide a typo that every
        other command reports at once. An unreachable one is not refused: it may come up after
        the daemon (a compose stack), and the probes report it until it does."""
        try:
            open_state(self.config).leases.list()
        except StateUnavailableError:
            return
        except ConfigError as exc:
            raise ConfigError(str(exc)) from None

    def _on_signal(self, signum: int, _frame: object) -> None:
        if self.stopping.is_set():
            return
        log.info("signal received", signal=signal.Signals(signum).name)
        self.stopping.set()

    def _drain(self, deadline: float) -> None:
        while self._busy() and time.monotonic() < deadline:
            time.sleep(0.2)
        if self._busy():
            log.warning("grace period over: cancelling running jobs", tables=sorted(self.running))
            revoke_all("cancelled: daemon shutdown grace period over")
            if spark_running():
                get_spark(self.config).sparkContext.cancelAllJobs()
                log.info("spark jobs cancelled")
            cancel_deadline = time.monotonic() + CANCEL_WAIT_S
            while self._busy() and time.monotonic() < cancel_deadline:
                time.sleep(0.2)
        self.pool.shutdown(wait=not self._busy(), cancel_futures=True)
        if self._busy():
            log.error("jobs still running at exit; their leases expire by themselves", tables=sorted(self.running))

    def _still_busy(self) -> list[str]:
        """What would keep the process from exiting: an evaluation in progress, running jobs."""
        with self.lock:
            jobs = sorted(self.running)
        return (["evaluation"] if self.evaluation_started is not None else []) + [f"job on {table}" for table in jobs]

    def _busy(self) -> bool:
        with self.lock:
            return bool(self.running)

    def healthy(self) -> tuple[bool, str]:
        """503 while stopping, while any dependency fails (each named with its error), or
        when no evaluation has succeeded for three intervals; 200 otherwise."""
        if self.stopping.is_set():
            return False, "stopping"
        failing = self.dependencies.failing()
        if failing:
            return False, "\n".join(f"{name}: failing for {time.time() - status.since:.0f}s: {status.detail}" for name, status in sorted(failing.items()))
        if self.last_evaluation_ok is None:
            return self.evaluation_failures == 0, "starting" if self.evaluation_failures == 0 else "evaluations failing"
        age = time.time() - self.last_evaluation_ok
        limit = 3 * self.settings.interval_s + MAX_EVALUATION_BACKOFF_S  # a backstop: failures are named above
        return age <= limit, f"ok: last evaluation {age:.0f}s ago" if age <= limit else f"no evaluation for {age:.0f}s"

    def alive(self) -> tuple[bool, str]:
        """Whether this process still works, whatever its dependencies do (module docstring):
        the main loop turns, the scheduler runs, and no evaluation has run for longer than
        `STUCK_EVALUATION_S` or ten intervals. Stopping is alive: it is draining its jobs."""
        now = time.monotonic()
        if now - self.main_tick > MAIN_LOOP_STALL_S:
            return False, f"main loop stalled for {now - self.main_tick:.0f}s"
        if not self.stopping.is_set() and not self.scheduler_running():
            return False, "scheduler stopped"
        started = self.evaluation_started
        limit = max(STUCK_EVALUATION_S, 10 * self.settings.interval_s)
        if started is not None and now - started > limit:
            return False, f"one evaluation has run for {now - started:.0f}s (limit {limit:.0f}s)"
        return True, "alive" + (": stopping" if self.stopping.is_set() else "")

    # -- work --------------------------------------------------------------------------
    def evaluate_and_dispatch(self) -> None:
        """One evaluation, and another at once while the fleet's members moved meanwhile."""
        while not self.stopping.is_set():
            self.evaluate_again = False
            self.evaluation_started = time.monotonic()
            try:
                self._evaluate_and_dispatch()
            finally:
                self.evaluation_started = None
            if not self.evaluate_again:
                return

    def keep_membership(self) -> None:
        """The membership heartbeat (`schedule/membership.py`): renew this daemon's share of the
        fleet whatever its evaluation does, unless it is wedged (`alive`); when the members
        moved, evaluate now rather than at the next interval (a killed daemon's share is
        taken within one lease TTL)."""
        if self.stopping.is_set() or not self.alive()[0]:
            return
        try:
            moved = self.membership.heartbeat(open_state(self.config))
        except IcemaintError as exc:  # the database is away: the evaluation's probe reports it
            log.debug("daemon membership not renewed", error=str(exc))
            return
        if not moved:
            return
        log.info("fleet members moved; evaluating now")
        if self.evaluation_started is not None:
            self.evaluate_again = True
        else:
            self.wake_evaluation()

    def _evaluate_and_dispatch(self) -> None:
        state = self._probe_state()
        if state is None:
            return
        self.metrics.refresh_stored_successes(state.runs.last_successes)  # just reached: one cheap query
        if time.monotonic() < self.next_evaluation_at:
            return
        try:
            started = time.monotonic()
            evaluation, causes = self._evaluate(state)
            self._dispatch(evaluation, state, started)
        except StateUnavailableError as exc:
            self._state_down(exc)
            self._count_evaluation({STATE})
            return
        except Exception as exc:  # the policies at start (cause `policies`), a bug: log, back off, keep running
            self.evaluation_failures += 1
            wait = doubling(self.settings.interval_s, self.evaluation_failures, MAX_EVALUATION_BACKOFF_S)
            self.next_evaluation_at = time.monotonic() + wait
            self._count_evaluation({POLICIES if POLICIES in self.dependencies.failing() else "other"})
            log.error("evaluation failed; backing off", error=str(exc), retry_in_s=round(wait, 1), exc_info=not isinstance(exc, IcemaintError))
            return
        self._count_evaluation(causes)

    def _probe_state(self) -> StateStore | None:
        """The state database, proven reachable now (one cheap query), or None. Unreachable, it
        is probed every interval (it comes back by itself); misconfigured (the config was fine
        at start-up: a role or database dropped since), every 1, 2, 4 … intervals, up to 10
        minutes, since retrying cannot help until someone fixes it."""
        if self.probes_to_skip > 0:
            self.probes_to_skip -= 1
            return None
        try:
            state = open_state(self.config)
            state.leases.list()
        except StateUnavailableError as exc:
            self._state_down(exc)
            self._count_evaluation({STATE})
            return None
        except ConfigError as exc:  # database.py's misconfigured(): the server said no
            self._state_down(exc)
            self._count_evaluation({STATE})
            self._back_off_state_probes()
            return None
        self.state_misconfigured, self.probes_to_skip = 0, 0
        self.dependencies.up(STATE)
        self.metrics.dependency_up.labels(STATE).set(1)
        return state

    def _say_empty_catalogs(self, empty: dict[str, str]) -> None:
        """A catalog that lists no table is said once, when it starts to (the page shows it while
        it lasts): a wrong name or path would leave the daemon doing nothing, in silence. It is
        no failing dependency: a new deployment's catalog may be empty for a while."""
        for name in sorted(set(empty) - self.catalogs_said_empty):
            log.warning("catalog lists no table", catalog=name, hint=empty[name])
        self.catalogs_said_empty = set(empty)

    def _back_off_state_probes(self) -> None:
        """Skip the next 0, 1, 3, 7 … intervals, in intervals rather than seconds so that the
        probes land on the scheduler's ticks (up to 10 minutes between them)."""
        self.state_misconfigured += 1
        most = max(1, int(MAX_EVALUATION_BACKOFF_S // self.settings.interval_s))
        self.probes_to_skip = int(doubling(1, self.state_misconfigured, most)) - 1

    def _state_down(self, exc: IcemaintError) -> None:
        self.dependencies.down(STATE, str(exc))
        self.metrics.dependency_up.labels(STATE).set(0)

    def _count_evaluation(self, causes: set[str]) -> None:
        """Each evaluation counts once: `ok`, or `failed` with each of its causes, so an
        evaluation that skipped a failing catalog (or kept the previous policies) is not also
        counted as fine, and a job worker's state failure is not counted as an evaluation."""
        if not causes:
            self.metrics.evaluations.labels("ok").inc()
            return
        self.metrics.evaluations.labels("failed").inc()
        for cause in sorted(causes):
            self.metrics.evaluation_failures.labels(cause).inc()

    def _evaluate(self, state: StateStore) -> tuple[Evaluation, set[str]]:
        """The evaluation, and the causes (policies, catalog) of what it had to leave out."""
        causes: set[str] = set()
        try:
            self.policies = load_policies(self.config.policies_dir)
            self.dependencies.up(POLICIES)
        except IcemaintError as exc:
            if self.policies is None:
                self.dependencies.down(POLICIES, str(exc))
                raise
            self.dependencies.down(POLICIES, f"{exc} (the previous policies stay in force)")
            causes.add(POLICIES)
        started = time.monotonic()
        evaluation = evaluate(self.config, state, None, self.policies, kept=self.kept, membership=self.membership)
        self.membership.renew(state)
        log.info("evaluated", tables=len(evaluation.health), reused=self.kept.reused, seconds=round(time.monotonic() - started, 3),
                 share=", ".join(f"{name} {s.rank + 1} of {s.members}" for name, s in sorted(evaluation.shares.items())))
        for name in evaluation.catalogs_listed:
            self.dependencies.up(catalog(name))
            self.metrics.dependency_up.labels(catalog(name)).set(1)
        self._say_empty_catalogs(evaluation.catalogs_empty)
        for name, problem in evaluation.catalogs_failing.items():
            self.dependencies.down(catalog(name), problem)
            self.metrics.dependency_up.labels(catalog(name)).set(0)
            causes.add("catalog")
        self.evaluation_failures, self.next_evaluation_at = 0, 0.0
        self.last_evaluation_ok = time.time()
        self.metrics.observe_health(evaluation.health)
        self.metrics.observe_due(evaluation.due)
        self.metrics.evaluation_duration.observe(time.monotonic() - started)
        self.status.publish(evaluation, duration_s=time.monotonic() - started)
        for table, problem in evaluation.problems.items():
            if not table.startswith("catalog "):
                log.warning("table not evaluated", table=table, error=problem)
        return evaluation, causes

    def _dispatch(self, evaluation: Evaluation, state: StateStore, evaluated_from: float) -> None:
        """Due tables to workers. A table whose worker ended after `evaluated_from` was read
        before its jobs committed: its decisions are stale (a job just done looks due), so it
        waits for the next evaluation rather than take the lease for a run that is `skipped`."""
        by_table: dict[str, list[Decision]] = {}
        for decision in self._within_budget(evaluation):  # ranked: the costliest tables first (or the best value, within a budget)
            by_table.setdefault(decision.table, []).append(decision)
        if not by_table:
            return
        held_elsewhere = {lease.table for lease in state.leases.list() if lease.held and lease.holder != self.holder}
        with self.lock:
            for table, decisions in by_table.items():
                if self.stopping.is_set() or len(self.running) >= self.settings.max_concurrent_jobs:
                    break
                if table in self.running or table in held_elsewhere:  # another daemon is on it
                    continue
                if self.worked_until.pop(table, evaluated_from) > evaluated_from:
                    continue
                self.running[table] = self.pool.submit(self._work_on, table, decisions, state, self.policies or [])
                self.metrics.leases_held.set(len(self.running))

    def _within_budget(self, evaluation: Evaluation) -> list[Decision]:
        """The due jobs a budget lets run now (`schedule/budget.py`): this daemon's part of
        the fleet's budget, less what its last hour spent; all of them without a budget."""
        due = evaluation.due
        if self.settings.budget_s is None:
            return due
        held: dict[str, int] = {}
        for table in {d.ref for d in evaluation.decisions}:
            held[table.catalog] = held.get(table.catalog, 0) + 1
        whole = self.settings.budget_s * fleet_part(evaluation.shares, held)
        left = max(0.0, whole - self.spending.spent())
        self.metrics.budget_left.set(left)
        choices = choose(due, left, self.settings.budget_order, whole)
        out = [c for c in choices if not c.chosen]
        if out:
            log.info("jobs left out by the budget", left_s=round(left, 1), chosen=len(choices) - len(out), left_out=len(out),
                     first=f"{out[0].decision.table} {out[0].decision.job}: {out[0].why}")
        chosen = [c.decision for c in choices if c.chosen]
        first: dict[str, int] = {}
        for place, decision in enumerate(chosen):
            first.setdefault(decision.table, place)
        return sorted(chosen, key=lambda d: (first[d.table], registry.order(d.job)))  # tables by value, a table's jobs in their order

    def _spark_ready(self) -> bool:
        """While Spark is a failing dependency, try to start it before taking a lease, so a
        Spark that still cannot start records no run for the table. Otherwise a job starts
        Spark itself, under its lease, and the table's run shows `starting Spark`."""
        if SPARK not in self.dependencies.failing():
            return True
        with contextlib.suppress(Exception):  # a start that fails is remembered: `spark_start_failure`
            get_spark(self.config)
        return self._spark_known()

    def _spark_known(self) -> bool:
        """Spark's status as the last start left it (`spark_start_failure`): a failed start is
        a failing dependency, one line naming why; False then, so no more jobs start now."""
        failure = spark_start_failure()
        if failure is not None:
            self.dependencies.down(SPARK, failure)
            self.metrics.dependency_up.labels(SPARK).set(0)
            return False
        if spark_running():
            self.dependencies.up(SPARK)
            self.metrics.dependency_up.labels(SPARK).set(1)
        self.metrics.spark_running.set(1 if spark_running() else 0)
        return True

    def _work_on(self, table: str, decisions: list[Decision], state: StateStore, policies: list[Policy]) -> None:
        structlog.contextvars.bind_contextvars(table=table)
        try:
            if not self._spark_ready():
                return
            for decision in decisions:
                if self.stopping.is_set():
                    break
                started_job = time.monotonic()
                key = f"{table} {decision.job}"
                self.spending.start(key, decision.prediction.cost_s if decision.prediction is not None else decision.estimated_s)
                result = None
                try:
                    with self.metrics.jobs_running.labels(decision.job).track_inprogress():
                        result = run_decision(self.config, state, decision, holder=self.holder, policies=policies)
                finally:  # what the run cost in compute, or its wall seconds where that is unknown
                    compute_s = result.compute_s if result is not None else None
                    self.spending.settle(key, compute_s if compute_s is not None else time.monotonic() - started_job)
                self.metrics.observe_result(result)
                if not self._spark_known():
                    break
        except StateUnavailableError as exc:
            self._state_down(exc)
        except IcemaintError as exc:  # one line, e.g. the state database misconfigured under a job; the next probe reports it
            log.error("worker failed", error=str(exc))
        except Exception:
            log.error("worker failed", exc_info=True)
        finally:
            self._worker_ended(table)
            structlog.contextvars.unbind_contextvars("table")

    def _worker_ended(self, table: str) -> None:
        with self.lock:
            self.running.pop(table, None)
            self.metrics.leases_held.set(len(self.running))
            self.last_job_end = self.worked_until[table] = time.monotonic()

    def stop_idle_spark(self) -> None:
        with self.lock:
            idle = not self.running and time.monotonic() - self.last_job_end >= self.settings.spark_idle_s
            if idle and spark_running():
                log.info("stopping idle Spark", idle_s=round(time.monotonic() - self.last_job_end))
                stop_spark()
        self.metrics.spark_running.set(1 if spark_running() else 0)


def _exit_past_hung_threads(code: int, still_busy: Callable[[], list[str]]) -> None:
    """Exit now, even where a thread is still inside a call that does not answer (an
    evaluation in a hung catalog, a job past its cancellation): at exit Python joins every
    executor's worker, daemon thread or not, so SIGTERM would not stop the daemon within
    `shutdown_grace`. Its leases expire by themselves, as a killed daemon's do. What is only
    ending gets a second to end as usual first."""
    ending_by = time.monotonic() + 1.0
    while still_busy() and time.monotonic() < ending_by:
        time.sleep(0.05)
    busy = still_busy()
    if not busy:
        return
    log.warning("exiting with work still inside calls that do not answer", busy=busy)
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
