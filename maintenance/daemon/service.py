"""`icemaint daemon`: evaluate every table on an interval and run what is due.

- One worker per table at a time (a table's due jobs run in order, each re-checked under
  its lease), at most `max_concurrent_jobs` tables at once, leases shared with every other
  daemon on the same state database.
- Spark starts with the first job and stops after `spark_idle` without one.
- A failing catalog, state database or evaluation backs off (doubling, up to 10 minutes);
  a failing job backs off per table and job through the run history (planner).
- SIGTERM/SIGINT: no new work; running jobs get `shutdown_grace` to finish, then their
  Spark jobs are cancelled; leases are released as each job ends; exit 0.
"""

from __future__ import annotations

import signal
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime, timezone

import structlog

from maintenance.config import Config
from maintenance.cycle import Evaluation, evaluate, run_decision
from maintenance.daemon.http import serve
from maintenance.daemon.metrics import DaemonMetrics
from maintenance.errors import EXIT_OK, IcemaintError
from maintenance.planner import Decision
from maintenance.policy.loader import load_policies
from maintenance.policy.model import Policy
from maintenance.spark.session import get_spark, spark_running, stop_spark
from maintenance.state.leases import new_holder_id
from maintenance.state.retry import Stopped, retry_while_unavailable
from maintenance.state.store import StateStore, open_state

log = structlog.get_logger(__name__)
MAX_EVALUATION_BACKOFF_S = 600.0
CANCEL_WAIT_S = 60.0


class Daemon:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.settings = config.daemon
        self.holder = new_holder_id("daemon")
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.running: dict[str, Future[None]] = {}  # table -> its worker
        self.pool = ThreadPoolExecutor(max_workers=self.settings.max_concurrent_jobs, thread_name_prefix="icemaint-job")
        self.metrics = DaemonMetrics()
        self.policies: list[Policy] | None = None
        self.last_evaluation_ok: float | None = None
        self.evaluation_failures = 0
        self.next_evaluation_at = 0.0
        self.last_job_end = time.monotonic()
        self.http_port: int | None = None

    # -- lifecycle ---------------------------------------------------------------------
    def run(self) -> int:
        from apscheduler.schedulers.background import BackgroundScheduler

        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._on_signal)
        server = None
        if self.settings.metrics_port:
            server = serve(self.settings.metrics_host, self.settings.metrics_port, self.metrics.registry, self.healthy)
            self.http_port = server.server_address[1]
        scheduler = BackgroundScheduler(timezone=timezone.utc)
        scheduler.add_job(self.evaluate_and_dispatch, "interval", seconds=self.settings.interval_s, id="evaluate",
                          next_run_time=datetime.now(timezone.utc), max_instances=1, coalesce=True, misfire_grace_time=None)
        scheduler.add_job(self.stop_idle_spark, "interval", seconds=max(1.0, min(30.0, self.settings.spark_idle_s / 2)), id="idle",
                          max_instances=1, coalesce=True)
        scheduler.start()
        log.info("daemon started", holder=self.holder, interval_s=self.settings.interval_s, max_concurrent_jobs=self.settings.max_concurrent_jobs,
                 metrics_port=self.http_port, policies=str(self.config.policies_dir))
        while not self.stopping.wait(0.5):
            pass
        log.info("daemon stopping: no new work", running=sorted(self.running))
        scheduler.shutdown(wait=True)  # an evaluation in progress dispatches nothing more
        self._drain()
        if spark_running():
            stop_spark()
        if server is not None:
            server.shutdown()
        log.info("daemon stopped")
        return EXIT_OK

    def _on_signal(self, signum: int, _frame: object) -> None:
        if self.stopping.is_set():
            return
        log.info("signal received", signal=signal.Signals(signum).name)
        self.stopping.set()

    def _drain(self) -> None:
        deadline = time.monotonic() + self.settings.shutdown_grace_s
        while self._busy() and time.monotonic() < deadline:
            time.sleep(0.2)
        if self._busy():
            log.warning("grace period over: cancelling running jobs", tables=sorted(self.running))
            if spark_running():
                get_spark(self.config).sparkContext.cancelAllJobs()
                log.info("spark jobs cancelled")
            cancel_deadline = time.monotonic() + CANCEL_WAIT_S
            while self._busy() and time.monotonic() < cancel_deadline:
                time.sleep(0.2)
        self.pool.shutdown(wait=not self._busy(), cancel_futures=True)
        if self._busy():
            log.error("jobs still running at exit; their leases expire by themselves", tables=sorted(self.running))

    def _busy(self) -> bool:
        with self.lock:
            return bool(self.running)

    def healthy(self) -> tuple[bool, str]:
        """Healthy while evaluations succeed (or before the first has had time to)."""
        if self.stopping.is_set():
            return False, "stopping"
        if self.last_evaluation_ok is None:
            return self.evaluation_failures == 0, "starting" if self.evaluation_failures == 0 else "evaluations failing"
        age = time.time() - self.last_evaluation_ok
        limit = 3 * self.settings.interval_s + MAX_EVALUATION_BACKOFF_S
        return age <= limit, f"last evaluation {age:.0f}s ago"

    # -- work --------------------------------------------------------------------------
    def evaluate_and_dispatch(self) -> None:
        if self.stopping.is_set() or time.monotonic() < self.next_evaluation_at:
            return
        try:
            # The state database being down is waited out here (doubling, stoppable);
            # anything else backs the next evaluation off.
            evaluation, state = retry_while_unavailable(self._evaluate, stop=self.stopping)
        except Stopped:
            return
        except Exception as exc:  # catalog, database, policy: log, back off, keep running
            self.evaluation_failures += 1
            wait = min(MAX_EVALUATION_BACKOFF_S, self.settings.interval_s * 2 ** (self.evaluation_failures - 1))
            self.next_evaluation_at = time.monotonic() + wait
            self.metrics.evaluations.labels("failed").inc()
            log.error("evaluation failed; backing off", error=str(exc), retry_in_s=round(wait, 1), exc_info=not isinstance(exc, IcemaintError))
            return
        self.evaluation_failures, self.next_evaluation_at = 0, 0.0
        self.last_evaluation_ok = time.time()
        self.metrics.evaluations.labels("ok").inc()
        self.metrics.observe_health(evaluation.health)
        for table, problem in evaluation.problems.items():
            log.warning("table not evaluated", table=table, error=problem)
        self._dispatch(evaluation, state)

    def _evaluate(self) -> tuple[Evaluation, StateStore]:
        try:
            self.policies = load_policies(self.config.policies_dir)
        except Exception:
            if self.policies is None:
                raise
            log.error("policies invalid; keeping the previous ones", exc_info=True)
        state = open_state(self.config)
        return evaluate(self.config, state, None, self.policies), state

    def _dispatch(self, evaluation: Evaluation, state: StateStore) -> None:
        by_table: dict[str, list[Decision]] = {}
        for decision in evaluation.due:  # ranked: the costliest tables first
            by_table.setdefault(decision.table, []).append(decision)
        held_elsewhere = {lease.table for lease in state.leases.list() if lease.held and lease.holder != self.holder}
        with self.lock:
            for table, decisions in by_table.items():
                if self.stopping.is_set() or len(self.running) >= self.settings.max_concurrent_jobs:
                    break
                if table in self.running or table in held_elsewhere:  # another daemon is on it
                    continue
                self.running[table] = self.pool.submit(self._work_on, table, decisions, state, self.policies or [])
                self.metrics.leases_held.set(len(self.running))

    def _work_on(self, table: str, decisions: list[Decision], state: StateStore, policies: list[Policy]) -> None:
        structlog.contextvars.bind_contextvars(table=table)
        try:
            for decision in decisions:
                if self.stopping.is_set():
                    break
                result = run_decision(self.config, state, decision, holder=self.holder, policies=policies)
                self.metrics.observe_result(result)
                self.metrics.spark_running.set(1 if spark_running() else 0)
        except Exception:
            log.error("worker failed", exc_info=True)
        finally:
            with self.lock:
                self.running.pop(table, None)
                self.metrics.leases_held.set(len(self.running))
                self.last_job_end = time.monotonic()
            structlog.contextvars.unbind_contextvars("table")

    def stop_idle_spark(self) -> None:
        with self.lock:
            idle = not self.running and time.monotonic() - self.last_job_end >= self.settings.spark_idle_s
            if idle and spark_running():
                log.info("stopping idle Spark", idle_s=round(time.monotonic() - self.last_job_end))
                stop_spark()
        self.metrics.spark_running.set(1 if spark_running() else 0)

