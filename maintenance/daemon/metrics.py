"""Prometheus metrics of a daemon, in their own registry."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import structlog
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily

from maintenance import __version__
from maintenance.jobs.counters import BYTES_WRITTEN, FILES_DELETED, FILES_REPLACED
from maintenance.jobs.outcome import COMMITTED, FENCED, NOOP, JobResult
from maintenance.table.health import TableHealth

log = structlog.get_logger(__name__)


class DaemonMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        Gauge("icemaint_build_info", "icemaint's version (always 1)", ["version"], registry=r).labels(__version__).set(1)
        self.jobs = Counter("icemaint_jobs", "Job runs by job and status", ["job", "status"], registry=r)
        self.duration = Histogram("icemaint_job_duration_seconds", "Job run time", ["job"], registry=r,
                                  buckets=(1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, float("inf")))
        self.files_rewritten = Counter("icemaint_files_rewritten", "Data and delete files replaced by jobs", ["job"], registry=r)
        self.bytes_written = Counter("icemaint_bytes_written", "Bytes of files written by jobs", ["job"], registry=r)
        self.files_deleted = Counter("icemaint_files_deleted", "Files deleted by EXPIRE and ORPHANS", ["job"], registry=r)
        self.fenced = Counter("icemaint_fenced_runs", "Runs stopped because their lease was lost", registry=r)
        self.delete_files = Gauge("icemaint_table_delete_files", "Delete files per table at the last evaluation", ["table", "kind"], registry=r)
        self.leases_held = Gauge("icemaint_leases_held", "Leases this daemon holds (jobs running)", registry=r)
        self.evaluations = Counter("icemaint_evaluations", "Evaluation cycles by outcome", ["outcome"], registry=r)
        self.evaluation_failures = Counter("icemaint_evaluation_failures", "Failed evaluations by cause (state, catalog, policies, other)",
                                           ["cause"], registry=r)
        self.dependency_up = Gauge("icemaint_dependency_up", "1 while a dependency (state, catalog:<name>, policies, spark) works", ["dependency"], registry=r)
        self.spark_running = Gauge("icemaint_spark_running", "1 while this daemon's Spark session is up", registry=r)
        self._lock = threading.Lock()
        self._last_success: dict[tuple[str, str], float] = {}  # this process's runs (seconds)
        self._stored_success: dict[tuple[str, str], float] = {}  # every holder's, from the state database (seconds)
        r.register(_SinceLastSuccess(self))
        r.register(_LastSuccessTimestamp(self))

    def refresh_stored_successes(self, read: Callable[[], dict[tuple[str, str], int]]) -> None:
        """Take every holder's last successes from the state database (`RunStore.last_successes`,
        ms): the daemon calls this when it has just reached the database, so a scrape never
        waits for it and the metric survives restarts and counts cron's runs. A failed read
        keeps the values it had."""
        try:
            found = {key: at_ms / 1000 for key, at_ms in read().items()}
        except Exception as exc:  # noqa: BLE001 (the daemon's probes report the database; the metric keeps its last values)
            log.debug("last successes not read", error=str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            return
        with self._lock:
            self._stored_success = found

    def last_success_timestamps(self) -> dict[tuple[str, str], float]:
        """The newest of the database's and this process's own (a run that just ended)."""
        with self._lock:
            merged = dict(self._stored_success)
            for key, at in self._last_success.items():
                merged[key] = max(at, merged.get(key, 0.0))
            return merged

    def observe_result(self, result: JobResult) -> None:
        self.jobs.labels(result.job, result.status).inc()
        self.duration.labels(result.job).observe(result.duration_s)
        counters = result.counters
        self.files_rewritten.labels(result.job).inc(sum(int(counters.get(k) or 0) for k in FILES_REPLACED))
        self.bytes_written.labels(result.job).inc(int(counters.get(BYTES_WRITTEN) or 0))
        self.files_deleted.labels(result.job).inc(int(counters.get(FILES_DELETED) or 0))
        if result.status == FENCED:
            self.fenced.inc()
        if result.status in (COMMITTED, NOOP):
            with self._lock:
                self._last_success[(result.table, result.job)] = time.time()

    def observe_health(self, health: dict[str, TableHealth]) -> None:
        for table, h in health.items():
            self.delete_files.labels(table, "equality").set(h.equality_delete_files)
            self.delete_files.labels(table, "position").set(h.position_delete_files)
            self.delete_files.labels(table, "deletion_vector").set(h.deletion_vectors)

    def last_successes(self) -> dict[tuple[str, str], float]:
        with self._lock:
            return dict(self._last_success)


class _SinceLastSuccess:
    """Seconds since each (table, job) last succeeded, computed at scrape time."""

    def __init__(self, metrics: DaemonMetrics) -> None:
        self.metrics = metrics

    def collect(self):  # type: ignore[no-untyped-def]
        family = GaugeMetricFamily("icemaint_seconds_since_last_success", "Seconds since the job last committed or found nothing to do", labels=["table", "job"])
        now = time.time()
        for (table, job), at in sorted(self.metrics.last_successes().items()):
            family.add_metric([table, job], now - at)
        yield family


class _LastSuccessTimestamp:
    """When each (table, job) last succeeded, by any holder: what the state database said when
    the daemon last reached it, or this daemon's own newer run. A scrape reads no database."""

    def __init__(self, metrics: DaemonMetrics) -> None:
        self.metrics = metrics

    def collect(self):  # type: ignore[no-untyped-def]
        family = GaugeMetricFamily("icemaint_last_success_timestamp_seconds", "When the job last committed or found nothing to do (any holder's run, "
                                   "from the state database)", labels=["table", "job"])
        for (table, job), at in sorted(self.metrics.last_success_timestamps().items()):
            family.add_metric([table, job], at)
        yield family
