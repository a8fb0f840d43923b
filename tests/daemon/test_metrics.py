"""`daemon/metrics.py`: per-table series stay bounded however many tables there are, and a
daemon process exposes what runs, what is due, how long evaluations take and its memory."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pyarrow as pa
import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from maintenance.catalogs import TableRef, get_catalog
from maintenance.config import parse_config
from maintenance.daemon.metrics import DaemonMetrics
from maintenance.schedule.decisions import Decision
from maintenance.table.health import TableHealth
from maintenance.table.reader_cost import NO_COST, reader_cost
from tests.support.daemon import daemon_config, metric, start_daemon, stop_daemon, wait_for


def _series(metrics: DaemonMetrics) -> dict[str, list[tuple[dict[str, str], float]]]:
    found: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(generate_latest(metrics.registry).decode()):
        for sample in family.samples:
            found.setdefault(sample.name, []).append((sample.labels, sample.value))
    return found


def _fleet(tables: int) -> dict[str, TableHealth]:
    return {f"cat.ns.t{n:05d}": TableHealth(table=f"cat.ns.t{n:05d}", equality_delete_files=n % 97, position_delete_files=n % 13, deletion_vectors=0)
            for n in range(tables)}


def test_ten_thousand_tables_make_per_table_series_for_the_worst_hundred_and_fleet_totals() -> None:
    metrics = DaemonMetrics(table_series=100)
    fleet = _fleet(10_000)
    metrics.observe_health(fleet)
    now = time.time()
    metrics.refresh_stored_successes(lambda: {(table, job): int((now - n) * 1000) for n, table in enumerate(fleet) for job in ("merge", "compact")})
    series = _series(metrics)

    per_table = series["icemaint_table_delete_files"]
    tables = {labels["table"] for labels, _ in per_table}
    assert len(per_table) == 100 * 3 and len(tables) == 100
    worst = sorted(fleet, key=lambda t: (fleet[t].equality_delete_files + fleet[t].position_delete_files, t), reverse=True)[:100]
    assert tables == set(worst)
    totals = {labels["kind"]: value for labels, value in series["icemaint_delete_files"]}
    assert totals == {"equality": sum(n % 97 for n in range(10_000)), "position": sum(n % 13 for n in range(10_000)), "deletion_vector": 0}
    assert series["icemaint_tables_evaluated"] == [({}, 10_000)]

    stale = series["icemaint_last_success_timestamp_seconds"]
    assert len(stale) == 100
    assert {labels["table"] for labels, _ in stale} == {f"cat.ns.t{n:05d}" for n in range(9_950, 10_000)}  # the oldest: 50 tables x 2 jobs
    oldest = {labels["job"]: value for labels, value in series["icemaint_oldest_success_timestamp_seconds"]}
    assert set(oldest) == {"merge", "compact"} and all(abs(v - (now - 9_999)) < 1.0 for v in oldest.values())
    assert sum(len(samples) for samples in series.values()) < 1_000


def test_a_table_that_left_the_worst_loses_its_series_and_zero_turns_them_off() -> None:
    metrics = DaemonMetrics(table_series=2)
    metrics.observe_health({"a": TableHealth(equality_delete_files=5), "b": TableHealth(equality_delete_files=3), "c": TableHealth(equality_delete_files=1)})
    assert {labels["table"] for labels, _ in _series(metrics)["icemaint_table_delete_files"]} == {"a", "b"}
    metrics.observe_health({"a": TableHealth(), "b": TableHealth(equality_delete_files=3), "c": TableHealth(equality_delete_files=9)})
    assert {labels["table"] for labels, _ in _series(metrics)["icemaint_table_delete_files"]} == {"b", "c"}

    off = DaemonMetrics(table_series=0)
    off.observe_health({"a": TableHealth(equality_delete_files=5)})
    off.refresh_stored_successes(lambda: {("a", "merge"): 1_000})
    series = _series(off)
    assert "icemaint_table_delete_files" not in series and "icemaint_last_success_timestamp_seconds" not in series
    assert series["icemaint_oldest_success_timestamp_seconds"] == [({"job": "merge"}, 1.0)]


def test_due_jobs_are_counted_by_job_and_a_job_no_longer_due_reads_zero() -> None:
    metrics = DaemonMetrics()
    metrics.observe_due([Decision(TableRef("c", ("ns",), t), job, True, "due", "p", NO_COST) for t, job in (("a", "merge"), ("b", "merge"), ("a", "expire"))])
    assert dict((labels["job"], v) for labels, v in _series(metrics)["icemaint_jobs_due"]) == {"merge": 2, "expire": 1}
    metrics.observe_due([])
    assert dict((labels["job"], v) for labels, v in _series(metrics)["icemaint_jobs_due"]) == {"merge": 0, "expire": 0}


def test_a_running_job_is_counted_while_it_runs_and_process_metrics_are_exposed() -> None:
    metrics = DaemonMetrics()
    with metrics.jobs_running.labels("merge").track_inprogress():
        assert _series(metrics)["icemaint_jobs_running"] == [({"job": "merge"}, 1.0)]
    assert _series(metrics)["icemaint_jobs_running"] == [({"job": "merge"}, 0.0)]
    series = _series(metrics)
    assert "process_resident_memory_bytes" in series and "python_info" in series
    assert "icemaint_evaluation_duration_seconds_count" in series


def test_small_files_and_read_amplification_per_table_for_the_worst_and_small_files_over_the_fleet() -> None:
    """The tables with the most small files and the highest read amplification (each its own
    worst `metrics_tables`, the amplification as the planner's reader model says), the
    fleet's small files summed; a table that left the worst loses its series."""
    metrics = DaemonMetrics(table_series=2)
    fleet = {"a": TableHealth(small_data_files=7, data_files=7, data_bytes=7 * 2**20), "b": TableHealth(small_data_files=3, data_files=3, data_bytes=3 * 2**20),
             "c": TableHealth(small_data_files=1, data_files=400, data_bytes=400 * 2**27), "d": TableHealth(data_files=1, data_bytes=2**27)}
    metrics.observe_health(fleet)

    series = _series(metrics)
    assert {labels["table"]: value for labels, value in series["icemaint_table_small_files"]} == {"a": 7, "b": 3}
    assert series["icemaint_small_files"] == [({}, 11.0)]
    amplification = {labels["table"]: value for labels, value in series["icemaint_table_read_amplification"]}
    costs = {table: reader_cost(h).amplification for table, h in fleet.items()}
    assert amplification == {t: costs[t] for t in sorted(costs, key=costs.__getitem__)[-2:]} and min(amplification.values()) > 1.0, (amplification, costs)

    metrics.observe_health({"a": TableHealth(), "b": TableHealth(small_data_files=3), "e": TableHealth(small_data_files=5)})
    assert {labels["table"] for labels, _ in _series(metrics)["icemaint_table_small_files"]} == {"b", "e"}


@pytest.mark.process
@pytest.mark.slow  # a daemon starting Spark for a job: make test-integration runs it
def test_a_daemon_process_exposes_due_running_evaluation_and_process_metrics(tmp_path: Path) -> None:
    """The daemon as operators scrape it: a table with six small files makes COMPACT due
    (`icemaint_jobs_due`), the job is counted in `icemaint_jobs_running` while it runs (Spark's
    start included) and not after, every evaluation is timed, and the process collector's
    memory is there."""
    own = parse_config({"home": str(tmp_path / "home")}, source="tests", base_dir=tmp_path)
    namespace = f"metrics_{uuid.uuid4().hex[:6]}"
    catalog = get_catalog(own, own.default_catalog)
    catalog.create_namespace(namespace)
    table = catalog.create_table((namespace, "t"), Schema(NestedField(1, "id", LongType(), required=False)), properties={"format-version": "2"})
    for start in range(0, 12, 2):
        table.append(pa.table({"id": pa.array([start, start + 1], pa.int64())}))
    config_path, port = daemon_config(tmp_path, own, f"sqlite:///{tmp_path / 'state.db'}", namespace, "daemon")
    policy = tmp_path / "policies" / "test.yaml"
    policy.write_text(policy.read_text() + "  compact:\n    when:\n      small_files: 5\n    every: 1h\n")
    log = tmp_path / "daemon.log"
    process = start_daemon(config_path, log)
    due, running, committed = 'icemaint_jobs_due{job="compact"}', 'icemaint_jobs_running{job="compact"}', 'icemaint_jobs_total{job="compact",status="committed"}'
    seen: dict[str, float] = {}
    try:
        def scrape() -> bool:
            try:
                for sample in (due, running, committed, "icemaint_evaluation_duration_seconds_count", "process_resident_memory_bytes"):
                    seen[sample] = max(seen.get(sample, 0.0), metric(port, sample))
            except OSError:
                return False
            return seen[committed] >= 1

        wait_for(scrape, 300, "COMPACT committed by the daemon", [log])
        assert metric(port, running) == 0.0  # counted while it ran only
    finally:
        code = stop_daemon(process, log)
    assert code == 0, log.read_text()[-3000:]
    assert seen[due] >= 1 and seen[running] == 1, seen
    assert seen["icemaint_evaluation_duration_seconds_count"] >= 1 and seen["process_resident_memory_bytes"] > 10 * 2**20, seen
