"""Prometheus metrics of a daemon, in their own registry.

Per-table series stay bounded however large the fleet (`daemon.metrics_tables`, N): a
metric labelled by table carries the N tables that most need a look (the most delete files;
the oldest last success), and a fleet-wide series beside it says how things stand over every
table (`icemaint_delete_files{kind}`, `icemaint_oldest_success_timestamp_seconds{job}`), so
10,000 tables make a few hundred series, not 10,000 × jobs × kinds.
"""

from __future__ import annotations

import heapq
import threading
import time
from collections.abc import Callable

import structlog
from prometheus_client import GC_COLLECTOR, PLATFORM_COLLECTOR, CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector
from prometheus_client.core import GaugeMetricFamily

from maintenance import __version__
from maintenance.jobs.counters import BYTES_WRITTEN, FILES_DELETED, FILES_REPLACED
from maintenance.run.outcome import COMMITTED, FENCED, NOOP, JobResult
from maintenance.schedule.decisions import Decision
from maintenance.table.health import TableHealth
from maintenance.table.reader_cost import reader_cost

log = structlog.get_logger(__name__)


DELETE_KINDS = {
    "equality": lambda h: h.equality_delete_files,
    "position": lambda h: h.position_delete_files,
    "deletion_vector": lambda h: h.deletion_vectors,
}


class DaemonMetrics:
    def __init__(self, table_series: int = 100) -> None:
        self.table_series = table_series  # tables (or table and job pairs) a per-table metric carries at most
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
        self.delete_files = Gauge("icemaint_table_delete_files", "Delete files per table at the last evaluation (the tables with the most: "
                                  "daemon.metrics_tables)", ["table", "kind"], registry=r)
        self.fleet_delete_files = Gauge("icemaint_delete_files", "Delete files of every table at the last evaluation", ["kind"], registry=r)
        self.tables_evaluated = Gauge("icemaint_tables_evaluated", "Tables the last evaluation read", registry=r)
        self._delete_series: set[str] = set()  # the tables `delete_files` carries now
        self.small_files = Gauge("icemaint_table_small_files", "Small data files per table at the last evaluation (the tables with the most: "
                                 "daemon.metrics_tables)", ["table"], registry=r)
        self.fleet_small_files = Gauge("icemaint_small_files", "Small data files of every table at the last evaluation", registry=r)
        self.read_amplification = Gauge("icemaint_table_read_amplification", "Bytes a full scan reads per byte of live data, per table at the "
                                        "last evaluation (table/reader_cost.py; the tables with the highest: daemon.metrics_tables)", ["table"], registry=r)
        self._table_series: dict[str, set[str]] = {}  # a per-table gauge (by `_worst`'s name) -> the tables it carries now
        self.leases_held = Gauge("icemaint_leases_held", "Leases this daemon holds (jobs running)", registry=r)
        self.evaluations = Counter("icemaint_evaluations", "Evaluation cycles by outcome", ["outcome"], registry=r)
        self.evaluation_failures = Counter("icemaint_evaluation_failures", "Failed evaluations by cause (state, catalog, policies, other)",
                                           ["cause"], registry=r)
        self.dependency_up = Gauge("icemaint_dependency_up", "1 while a dependency (state, catalog:<name>, policies, spark) works", ["dependency"], registry=r)
        self.spark_running = Gauge("icemaint_spark_running", "1 while this daemon's Spark session is up", registry=r)
        self.jobs_running = Gauge("icemaint_jobs_running", "Jobs this daemon runs now", ["job"], registry=r)
        self.jobs_due = Gauge("icemaint_jobs_due", "Due decisions at the last evaluation", ["job"], registry=r)
        self.evaluation_duration = Histogram("icemaint_evaluation_duration_seconds", "Evaluation cycle time", registry=r,
                                             buckets=(0.5, 1, 5, 15, 30, 60, 120, 300, 600, float("inf")))
        self.scan_reports = Counter("icemaint_scan_reports", "Readers' scan reports by outcome (taken, unavailable: counted "
                                    "in reports; refused, unauthorized: in requests)", ["outcome"], registry=r)
        self.budget_left = Gauge("icemaint_budget_seconds_left", "Seconds of job runs the budget (daemon.budget) left for this hour at the "
                                 "last dispatch", registry=r)
        ProcessCollector(registry=r)  # memory, CPU, open files: what a leak or a stuck JVM child shows first
        for collector in (PLATFORM_COLLECTOR, GC_COLLECTOR):
            r.register(collector)
        self._lock = threading.Lock()
        self._last_success: dict[tuple[str, str], float] = {}  # this process's runs (seconds)
        self._stored_success: dict[tuple[str, str], float] = {}  # every holder's, from the state database (seconds)
        self._due_jobs: set[str] = set()  # the jobs `jobs_due` carries
        r.register(_SinceLastSuccess(self))
        r.register(_LastSuccessTimestamp(self))
        r.register(_OldestSuccess(self))

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
        """The last evaluation's delete files and small files: over every table, and per table
        for the `table_series` tables with the most (a table that left them loses its series);
        read amplification per table for the `table_series` tables where it is highest."""
        self.tables_evaluated.set(len(health))
        for kind, count in DELETE_KINDS.items():
            self.fleet_delete_files.labels(kind).set(sum(count(h) for h in health.values()))
        top = dict(heapq.nlargest(self.table_series, health.items(), key=lambda item: (sum(count(item[1]) for count in DELETE_KINDS.values()), item[0])))
        with self._lock:
            for table in self._delete_series - top.keys():
                for kind in DELETE_KINDS:
                    self.delete_files.remove(table, kind)
            for table, h in top.items():
                for kind, count in DELETE_KINDS.items():
                    self.delete_files.labels(table, kind).set(count(h))
            self._delete_series = set(top)
        self.fleet_small_files.set(sum(h.small_data_files for h in health.values()))
        self._worst("small_files", self.small_files, {table: float(h.small_data_files) for table, h in health.items()})
        self._worst("read_amplification", self.read_amplification, {table: reader_cost(h).amplification for table, h in health.items()})

    def _worst(self, name: str, gauge: Gauge, values: dict[str, float]) -> None:
        """A per-table gauge for the `table_series` tables with the highest values; a table
        that left them loses its series (the rule `delete_files` follows, for one label)."""
        top = dict(heapq.nlargest(self.table_series, values.items(), key=lambda item: (item[1], item[0])))
        with self._lock:
            carried = self._table_series.get(name, set())
            for table in carried - top.keys():
                gauge.remove(table)
            for table, value in top.items():
                gauge.labels(table).set(value)
            self._table_series[name] = set(top)

    def observe_due(self, due: list[Decision]) -> None:
        """The last evaluation's due decisions by job; a job no longer due reads 0, not its old count."""
        counts: dict[str, int] = {}
        for decision in due:
            counts[decision.job] = counts.get(decision.job, 0) + 1
        with self._lock:
            for job in self._due_jobs - counts.keys():
                self.jobs_due.labels(job).set(0)
            for job, count in counts.items():
                self.jobs_due.labels(job).set(count)
            self._due_jobs |= counts.keys()

    def last_successes(self) -> dict[tuple[str, str], float]:
        with self._lock:
            return dict(self._last_success)

    def oldest(self, successes: dict[tuple[str, str], float]) -> list[tuple[tuple[str, str], float]]:
        """The `table_series` (table, job) pairs whose last success is oldest, in label order."""
        return sorted(heapq.nsmallest(self.table_series, successes.items(), key=lambda item: (item[1], item[0])))


class _SinceLastSuccess:
    """Seconds since each (table, job) last succeeded by this daemon, computed at scrape time
    (the `table_series` oldest)."""

    def __init__(self, metrics: DaemonMetrics) -> None:
        self.metrics = metrics

    def collect(self):  # type: ignore[no-untyped-def]
        family = GaugeMetricFamily("icemaint_seconds_since_last_success", "Seconds since the job last committed or found nothing to do", labels=["table", "job"])
        now = time.time()
        for (table, job), at in self.metrics.oldest(self.metrics.last_successes()):
            family.add_metric([table, job], now - at)
        yield family


class _LastSuccessTimestamp:
    """When each (table, job) last succeeded, by any holder: what the state database said when
    the daemon last reached it, or this daemon's own newer run (the `table_series` oldest).
    A scrape reads no database."""

    def __init__(self, metrics: DaemonMetrics) -> None:
        self.metrics = metrics

    def collect(self):  # type: ignore[no-untyped-def]
        family = GaugeMetricFamily("icemaint_last_success_timestamp_seconds", "When the job last committed or found nothing to do (any holder's run, "
                                   "from the state database)", labels=["table", "job"])
        for (table, job), at in self.metrics.oldest(self.metrics.last_success_timestamps()):
            family.add_metric([table, job], at)
        yield family


class _OldestSuccess:
    """Per job, the oldest last success over every table (by any holder): what an alert on a
    job falling behind anywhere in the fleet watches, whatever `daemon.metrics_tables` is."""

    def __init__(self, metrics: DaemonMetrics) -> None:
        self.metrics = metrics

    def collect(self):  # type: ignore[no-untyped-def]
        family = GaugeMetricFamily("icemaint_oldest_success_timestamp_seconds", "The oldest last success of the job over every table", labels=["job"])
        oldest: dict[str, float] = {}
        for (_, job), at in self.metrics.last_success_timestamps().items():
            oldest[job] = min(at, oldest.get(job, at))
        for job, at in sorted(oldest.items()):
            family.add_metric([job], at)
        yield family
