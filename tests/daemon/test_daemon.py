"""The daemon end to end, as separate processes on real tables and real state databases:
it processes what is due, serves metrics and health, stops on SIGTERM with exit 0 and its
leases released; two daemons on one database share six tables without overlap."""

from __future__ import annotations

import json
import signal
import sqlite3
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest
import yaml
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField
from sqlalchemy.engine import make_url

from maintenance.catalogs import TableRef, get_catalog, load_table
from maintenance.config import Config, parse_config
from maintenance.daemon.service import Daemon
from maintenance.policy.model import Policy
from maintenance.schedule.cycle import Evaluation
from maintenance.schedule.decisions import Decision
from maintenance.schedule.membership import PREFIX as MEMBERSHIP_PREFIX
from maintenance.schedule.membership import Share
from maintenance.state.database import ensure_schema, make_engine
from maintenance.state.leases import LeaseStore
from maintenance.state.runs import RunRecord, RunStore
from maintenance.state.store import StateStore, open_state
from maintenance.table.reader_cost import NO_COST
from tests.conftest import POSTGRES_ADMIN_URL, CdcFactory, new_state_url
from tests.support.daemon import EVALUATIONS_OK, daemon_config, free_port, healthz, http_get, metric, signal_and_wait, start_daemon, stop_daemon, wait_for
from tests.support.helpers import model_rows, spark_rows
from tests.support.tcp_proxy import TcpProxy

DONE = ("committed", "noop")


def finished(runs: RunStore, tables: list[str]) -> bool:
    """Every table has had its merge and its orphans run end."""
    for table in tables:
        ended = {(r.job, r.status) for r in runs.list(table=table)}
        if not {("merge", "committed")} <= ended or not any(job == "orphans" and status in DONE for job, status in ended):
            return False
    return True


@pytest.mark.process
@pytest.mark.slow  # one of the slowest: make test-integration runs it
def test_daemon_processes_a_table_and_stops_cleanly_on_sigterm(tmp_path: Path, spark, config: Config, cdc_table: CdcFactory) -> None:
    namespace = f"daemon_{uuid.uuid4().hex[:6]}"
    ref, _, model = cdc_table(ref=TableRef(config.default_catalog, (namespace,), "orders"), rows=1500, commits=3, update_ratio=0.3)
    state_url = f"sqlite:///{tmp_path / 'state.db'}"
    config_path, port = daemon_config(tmp_path, config, state_url, namespace, "daemon")
    engine = make_engine(state_url)
    ensure_schema(engine)
    runs, leases = RunStore(engine), LeaseStore(engine)
    log = tmp_path / "daemon.log"

    process = start_daemon(config_path, log)
    try:
        wait_for(lambda: finished(runs, [str(ref)]), 180, "the daemon's merge and orphans", [log])
        assert http_get(port, "/healthz")[0] == 200
        status, metrics = http_get(port, "/metrics")
        assert status == 200 and 'icemaint_jobs_total{job="merge",status="committed"} 1.0' in metrics
        assert f'icemaint_seconds_since_last_success{{job="merge",table="{ref}"}}' in metrics
        assert f'icemaint_last_success_timestamp_seconds{{job="merge",table="{ref}"}}' in metrics  # from the state database
        assert 'icemaint_build_info{version="' in metrics
    finally:
        code = stop_daemon(process, log)

    assert code == 0, log.read_text()[-3000:]
    assert not [lease for lease in leases.list() if lease.held]
    merge = next(r for r in runs.list(table=str(ref)) if r.job == "merge")
    assert merge.counters["content_verified"] is True
    assert load_table(config, ref).inspect.delete_files().num_rows == 0
    assert spark_rows(spark, ref) == model_rows(model)
    text = log.read_text()
    assert '"event": "daemon stopped"' in text and "Traceback" not in text
    started = next(json.loads(line) for line in text.splitlines() if '"event": "starting spark"' in line)
    assert started.get("run_id") and started.get("job"), started  # under a job's lease: its run shows "starting Spark"


@pytest.mark.process
@pytest.mark.slow
def test_two_daemons_share_six_tables_without_overlap(tmp_path: Path, spark, config: Config, cdc_table: CdcFactory) -> None:
    namespace = f"daemons_{uuid.uuid4().hex[:6]}"
    tables = []
    for index in range(6):
        ref, _, _ = cdc_table(ref=TableRef(config.default_catalog, (namespace,), f"t{index}"), rows=600, commits=2, update_ratio=0.3)
        tables.append(str(ref))
    for state_url in new_state_url("postgresql", tmp_path):
        engine = make_engine(state_url)
        ensure_schema(engine)
        runs, leases = RunStore(engine), LeaseStore(engine)
        logs = [tmp_path / "a.log", tmp_path / "b.log"]
        configs = [daemon_config(tmp_path, config, state_url, namespace, name)[0] for name in ("a", "b")]
        processes = [start_daemon(path, log) for path, log in zip(configs, logs)]
        try:
            wait_for(lambda: finished(runs, tables), 400, "both daemons to process six tables", logs)
        finally:
            codes = [stop_daemon(p, log) for p, log in zip(processes, logs)]

        assert codes == [0, 0]
        assert not [lease for lease in leases.list() if lease.held]
        history = [r for table in tables for r in runs.list(table=table)]
        ran = defaultdict(list)
        for run in history:
            if run.status in DONE:
                ran[(run.table, run.job)].append(run)
        assert sorted(ran) == sorted((t, j) for t in tables for j in ("merge", "orphans"))
        assert all(len(found) == 1 for found in ran.values()), {k: len(v) for k, v in ran.items() if len(v) > 1}
        assert not [r for r in history if r.status in ("failed", "fenced")]
        for table in tables:
            assert_no_overlap([r for r in history if r.table == table and r.lease_epoch is not None])
        engine.dispose()


def assert_no_overlap(runs: list[RunRecord]) -> None:
    """Runs that held the table's lease never overlap in time (database clock)."""
    spans = sorted((r.started_at_ms, r.ended_at_ms or r.started_at_ms, r.run_id) for r in runs)
    for (_, end, first), (start, _, second) in zip(spans, spans[1:]):
        assert start >= end, f"runs {first} and {second} overlap"


@pytest.mark.process
@pytest.mark.slow
def test_sigterm_during_a_job_cancels_it_after_the_grace_period(tmp_path: Path, spark, config: Config, cdc_table: CdcFactory) -> None:
    namespace = f"daemon_{uuid.uuid4().hex[:6]}"
    ref, _, model = cdc_table(ref=TableRef(config.default_catalog, (namespace,), "big"), rows=60_000, commits=30, update_ratio=0.3)
    state_url = f"sqlite:///{tmp_path / 'state.db'}"
    config_path, _ = daemon_config(tmp_path, config, state_url, namespace, "daemon")
    config_path.write_text(config_path.read_text().replace("shutdown_grace: 60s", "shutdown_grace: 1s"))
    engine = make_engine(state_url)
    ensure_schema(engine)
    runs, leases = RunStore(engine), LeaseStore(engine)
    log = tmp_path / "daemon.log"
    snapshot = load_table(config, ref).metadata.current_snapshot_id

    process = start_daemon(config_path, log)
    try:
        wait_for(lambda: any(r.job == "merge" and r.status == "running" for r in runs.list(table=str(ref))), 120, "the merge to start", [log])
        # Staged: MERGE is now fingerprinting the table before and after (two full scans).
        wait_for(lambda: '"stage": "staged"' in log.read_text(), 180, "MERGE to stage its change", [log])
    finally:
        code = stop_daemon(process, log)

    assert code == 0, log.read_text()[-3000:]
    merge = next(r for r in runs.list(table=str(ref)) if r.job == "merge")
    text = log.read_text()
    assert "grace period over: cancelling running jobs" in text and "spark jobs cancelled" in text, text[-3000:]
    assert merge.status in ("failed", "fenced") and "cancel" in (merge.error or "").lower(), merge
    assert not [lease for lease in leases.list() if lease.held]
    assert load_table(config, ref).metadata.current_snapshot_id == snapshot  # nothing was published
    assert spark_rows(spark, ref) == model_rows(model)


@pytest.mark.process
@pytest.mark.slow
def test_a_state_database_cut_turns_healthz_503_and_its_return_200(tmp_path: Path, config: Config) -> None:
    """The state database behind a TCP proxy that is cut for a while: /healthz says 503 and
    names it within two intervals, 200 again within two intervals of its return, and the
    log has one line per change, no traceback."""
    url = make_url(POSTGRES_ADMIN_URL)
    for state_url in new_state_url("postgresql", tmp_path):
        proxy = TcpProxy(target_port=url.port or 5432)
        proxy.start()
        proxied = make_url(state_url).set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
        config_path, port = daemon_config(tmp_path, config, proxied, f"outage_{uuid.uuid4().hex[:6]}", "daemon")
        log = tmp_path / "daemon.log"
        process = start_daemon(config_path, log)
        try:
            wait_for(lambda: healthz(port)[0] == 200, 90, "the daemon to be healthy", [log])
            cut_then_restored(proxy, port, log, "state", 'icemaint_dependency_up{dependency="state"}')
        finally:
            proxy.stop()
            stop_daemon(process, log)
        text = log.read_text()
        assert "Traceback" not in text, text[-3000:]
        assert text.count('"dependency failing"') == 1 and text.count('"dependency works again"') == 1, text[-3000:]


def cut_then_restored(proxy: TcpProxy, port: int, log: Path, dependency: str, up_metric: str, while_cut: Callable[[], None] = lambda: None) -> None:
    """Cut the proxy: /healthz turns 503 naming `dependency` (one line) within two intervals
    and only failures by its cause are counted; restore it: 200 again within two intervals,
    evaluations counted ok again and `up_metric` 1."""
    proxy.stop()
    cut = time.monotonic()
    _, body = wait_for(lambda: (lambda r: r if r[0] == 503 else None)(healthz(port)), 30, "503 after the cut", [log])
    assert time.monotonic() - cut <= 2 * 2 + 1 and body.startswith(f"{dependency}: failing") and "\n" not in body.strip(), body
    ready = http_get(port, "/readyz")  # the readiness probe: what /healthz says
    assert ready[0] == 503 and ready[1].startswith(f"{dependency}: failing"), ready
    assert http_get(port, "/livez")[0] == 200  # the liveness probe: an outage must not restart the daemon
    cause = dependency.split(":")[0]
    assert_only_failures_counted_meanwhile(port, f'icemaint_evaluation_failures_total{{cause="{cause}"}}', [log])
    while_cut()
    ok_during_cut = metric(port, EVALUATIONS_OK)
    proxy.start()
    back = time.monotonic()
    wait_for(lambda: healthz(port)[0] == 200, 30, "200 after the return", [log])
    assert time.monotonic() - back <= 2 * 2 + 1
    wait_for(lambda: metric(port, EVALUATIONS_OK) > ok_during_cut, 30, "evaluations counted ok again", [log])
    assert metric(port, up_metric) == 1.0


def assert_metrics(port: int, expected: dict[str, float]) -> None:
    assert {sample: metric(port, sample) for sample in expected} == expected


def assert_only_failures_counted_meanwhile(port: int, failures: str, logs: list[Path]) -> None:
    """While a dependency is down, two more evaluations are counted as failed by its cause
    (`failures`, the sample) and none as ok."""
    ok, failed = metric(port, EVALUATIONS_OK), metric(port, failures)
    assert failed >= 1
    wait_for(lambda: metric(port, failures) >= failed + 2, 30, f"two more evaluations counted in {failures}", logs)
    assert metric(port, EVALUATIONS_OK) == ok


@pytest.mark.process
@pytest.mark.slow
def test_a_catalog_cut_turns_healthz_503_naming_it_and_its_return_200(tmp_path: Path, config: Config) -> None:
    """A second catalog, SQL on PostgreSQL behind a TCP proxy, cut for a while: /healthz says
    503 and names that catalog within two intervals while the other catalog stays up, the
    evaluations meanwhile count as failed by cause `catalog` and not as ok, 200 comes back
    within two intervals of its return, and the log has one line per change, no traceback."""
    url = make_url(POSTGRES_ADMIN_URL)
    for catalog_url in new_state_url("postgresql", tmp_path):
        proxy = TcpProxy(target_port=url.port or 5432)
        proxy.start()
        proxied = make_url(catalog_url).set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
        SqlCatalog("remote", uri=catalog_url, warehouse=(tmp_path / "remote-warehouse").as_uri()).engine.dispose()  # its writers' catalog
        config_path, port = daemon_config(tmp_path, config, f"sqlite:///{tmp_path / 'state.db'}", f"catalogs_{uuid.uuid4().hex[:6]}", "daemon")
        local = config.catalogs[config.default_catalog]
        catalogs = {
            local.name: {"type": local.type, "uri": local.uri, "warehouse": local.warehouse},
            "remote": {"type": "sql", "uri": proxied, "warehouse": (tmp_path / "remote-warehouse").as_uri()},
        }
        with config_path.open("a") as out:
            out.write(yaml.safe_dump({"default_catalog": local.name, "catalogs": catalogs}))
        remote_up, local_up = 'icemaint_dependency_up{dependency="catalog:remote"}', f'icemaint_dependency_up{{dependency="catalog:{local.name}"}}'
        log = tmp_path / "daemon.log"
        process = start_daemon(config_path, log)
        try:
            wait_for(lambda: healthz(port)[0] == 200 and metric(port, remote_up) == 1.0, 90, "the daemon to list both catalogs", [log])
            only_remote_down = lambda: assert_metrics(port, {remote_up: 0.0, local_up: 1.0, 'icemaint_dependency_up{dependency="state"}': 1.0})  # noqa: E731
            cut_then_restored(proxy, port, log, "catalog:remote", remote_up, only_remote_down)
        finally:
            proxy.stop()
            code = stop_daemon(process, log)
        assert code == 0, log.read_text()[-3000:]
        text = log.read_text()
        assert "Traceback" not in text, text[-3000:]
        assert text.count('"dependency failing"') == 1 and text.count('"dependency works again"') == 1, text[-3000:]


@pytest.mark.process
@pytest.mark.slow
def test_a_spark_that_cannot_start_turns_healthz_503_naming_it(tmp_path: Path) -> None:
    """A job that needs Spark is due but Spark cannot start (a master URL its SparkContext
    cannot parse): /healthz says 503 naming Spark with its one-line reason,
    `icemaint_dependency_up{dependency="spark"}` is 0, the daemon stays up, and the log has
    one line and no traceback. The job that tried is one failed run saying why (it started
    Spark under its lease); while Spark fails, a table due later (the second one) gets Spark
    tried before its lease is taken, and no run. (No Spark in this process: the table is written by pyiceberg, on
    a home of the test's own.)"""
    own = parse_config({"home": str(tmp_path / "home")}, source="tests", base_dir=tmp_path)
    namespace = f"nospark_{uuid.uuid4().hex[:6]}"
    catalog = get_catalog(own, own.default_catalog)
    catalog.create_namespace(namespace)
    table = catalog.create_table((namespace, "t"), Schema(NestedField(1, "id", LongType(), required=False)), properties={"format-version": "2"})
    for start in range(0, 12, 2):  # six small files: COMPACT, which runs on Spark, is due
        table.append(pa.table({"id": pa.array([start, start + 1], pa.int64())}))
    state_url = f"sqlite:///{tmp_path / 'state.db'}"
    config_path, port = daemon_config(tmp_path, own, state_url, namespace, "daemon")
    config_path.write_text(config_path.read_text().replace("master: local[1]", "master: local[nope]"))
    policy = tmp_path / "policies" / "test.yaml"
    policy.write_text(policy.read_text() + "  compact:\n    when:\n      small_files: 5\n    every: 1h\n")
    log = tmp_path / "daemon.log"
    process = start_daemon(config_path, log)
    try:
        _, body = wait_for(lambda: (lambda r: r if r[0] == 503 else None)(healthz(port)), 180, "503 naming Spark", [log])
        assert body.startswith("spark: failing for ") and "local[nope]" in body and "\n" not in body.strip(), body
        assert metric(port, 'icemaint_dependency_up{dependency="spark"}') == 0.0
        assert metric(port, 'icemaint_dependency_up{dependency="state"}') == 1.0
        later = catalog.create_table((namespace, "u"), table.schema(), properties={"format-version": "2"})
        for start in range(0, 12, 2):
            later.append(pa.table({"id": pa.array([start, start + 1], pa.int64())}))
        seen = log.read_text().count('"evaluated"')
        wait_for(lambda: log.read_text().count('"evaluated"') >= seen + 2, 60, "two evaluations that see the second table", [log])
        assert process.poll() is None
    finally:
        code = stop_daemon(process, log)
    assert code == 0, log.read_text()[-3000:]
    engine = make_engine(state_url)
    runs = RunStore(engine).list(table=f"{own.default_catalog}.{namespace}.t")
    assert RunStore(engine).list(table=f"{own.default_catalog}.{namespace}.u") == []  # Spark tried first, no lease taken
    engine.dispose()
    spark_runs = [(r.job, r.status) for r in runs if r.job != "orphans"]
    assert spark_runs == [("compact", "failed")], runs
    [failed] = [r for r in runs if r.job == "compact"]
    assert "local[nope]" in (failed.error or "") and "\n" not in (failed.error or ""), failed.error
    text = log.read_text()
    assert "Traceback" not in text, text[-3000:]
    assert text.count('"dependency failing"') == 1, text[-3000:]


class RecordingDaemon(Daemon):
    """The daemon's dispatch, its workers replaced by a record of the tables they were given
    (the jobs themselves are tested end to end above)."""

    def __init__(self, config: Config) -> None:
        super().__init__(config)
        self.dispatched: list[str] = []

    def _work_on(self, table: str, decisions: list[Decision], state: StateStore, policies: list[Policy]) -> None:
        self.dispatched.append(table)
        self._worker_ended(table)


def test_an_evaluation_read_before_a_tables_worker_ended_does_not_dispatch_it_again(tmp_path: Path) -> None:
    """The daemon's CI failure of session 24: an evaluation that read the table before its
    MERGE committed found MERGE due, the worker ended, the stale decision went to a new
    worker, whose re-check recorded a `skipped` MERGE run."""
    config = parse_config({"state": {"url": f"sqlite:///{tmp_path / 'state.db'}"}}, source="tests", base_dir=tmp_path)
    daemon = RecordingDaemon(config)
    state = open_state(config)
    evaluation = Evaluation(decisions=[Decision(TableRef("local", ("ns",), "orders"), "merge", True, "due", "test", NO_COST)])
    try:
        read_from = time.monotonic()
        daemon._dispatch(evaluation, state, read_from)
        wait_for(lambda: not daemon.running, 10, "the worker", [])
        daemon._dispatch(evaluation, state, read_from)  # read while the worker ran: stale
        wait_for(lambda: not daemon.running, 10, "the worker", [])
        daemon._dispatch(evaluation, state, time.monotonic())  # read after it ended
        wait_for(lambda: not daemon.running, 10, "the worker", [])
    finally:
        daemon.pool.shutdown(wait=True)
    assert daemon.dispatched == ["local.ns.orders", "local.ns.orders"]


def test_livez_fails_only_when_the_process_no_longer_works(config: Config) -> None:
    """`/livez` on a real server over a daemon that is not started: alive while idle or
    stopping; 503 once its main loop stalls, its scheduler stops, or one evaluation outlives
    its limit, each named. `/readyz` answers as `/healthz`."""
    from maintenance.daemon.http import serve
    from maintenance.daemon.service import MAIN_LOOP_STALL_S, STUCK_EVALUATION_S, Daemon

    daemon = Daemon(config)
    server = serve("127.0.0.1", 0, None, daemon.healthy, alive=daemon.alive)
    port = server.server_address[1]
    try:
        assert http_get(port, "/livez") == (200, "alive\n")
        assert http_get(port, "/readyz") == http_get(port, "/healthz") == (200, "starting\n")
        daemon.evaluation_started = time.monotonic() - STUCK_EVALUATION_S - 1
        status, body = http_get(port, "/livez")
        assert status == 503 and body.startswith("one evaluation has run for 1801s"), body
        daemon.evaluation_started = time.monotonic() - STUCK_EVALUATION_S + 60  # long, within the limit
        assert http_get(port, "/livez")[0] == 200
        daemon.scheduler_running = lambda: False
        assert http_get(port, "/livez") == (503, "scheduler stopped\n")
        daemon.stopping.set()  # draining: its scheduler is shut down on purpose
        assert http_get(port, "/livez") == (200, "alive: stopping\n") and http_get(port, "/readyz")[0] == 503
        daemon.main_tick = time.monotonic() - MAIN_LOOP_STALL_S - 5
        status, body = http_get(port, "/livez")
        assert status == 503 and body.startswith("main loop stalled"), body
    finally:
        server.shutdown()
        daemon.pool.shutdown()


@pytest.mark.process
def test_a_second_sigint_stops_a_daemon_whose_shutdown_is_stuck(tmp_path: Path) -> None:
    """The first SIGINT starts the drain; another process holds the SQLite state database's
    write lock, so the stopping daemon waits in SQLite (up to its 60 s busy timeout). The
    second SIGINT stops it at once: exit 130, the one line last on stderr."""
    port = free_port()
    config_path = tmp_path / "icemaint.yaml"
    config_path.write_text(f"home: {tmp_path}\ndaemon:\n  interval: 1s\n  metrics_port: {port}\n  metrics_host: 127.0.0.1\n")
    home = parse_config({"home": str(tmp_path)}, source="tests", base_dir=tmp_path)
    get_catalog(home, home.default_catalog)  # an empty catalog: icemaint never creates the one it maintains
    log = tmp_path / "daemon.log"
    process = start_daemon(config_path, log)
    writer = None
    try:
        wait_for(lambda: healthz(port)[0] == 200, 60, "the daemon's first evaluation", [log])
        memberships = LeaseStore(make_engine(f"sqlite:///{tmp_path / 'state.db'}"))
        # Its membership held: leaving the fleet writes to the database (an evaluation in the
        # locked database is not waited for; this write is).
        wait_for(lambda: any(lease.held for lease in memberships.list(prefix=MEMBERSHIP_PREFIX)), 30, "the daemon's membership", [log])
        writer = sqlite3.connect(tmp_path / "state.db", isolation_level=None)
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("CREATE TABLE a_long_write (x int)")
        process.send_signal(signal.SIGINT)
        wait_for(lambda: "daemon stopping: no new work" in log.read_text(), 30, "the drain to start", [log])
        time.sleep(2)
        assert process.poll() is None, log.read_text()[-2000:]  # stuck in its shutdown
        code, stopped_after_s = signal_and_wait(process, signal.SIGINT, 30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if writer is not None:
            writer.execute("ROLLBACK")
            writer.close()
    assert code == 130 and stopped_after_s < 5, (code, stopped_after_s, log.read_text()[-2000:])
    assert log.read_text().splitlines()[-1] == "icemaint: error: interrupted twice: stopped at once, without cleaning up (leases it held expire by themselves)"


@pytest.mark.process
def test_a_daemon_with_a_scan_reports_token_takes_readers_reports(tmp_path: Path, config: Config, monkeypatch: pytest.MonkeyPatch) -> None:
    """The token comes from the environment (never a command line), a batch posted with it is
    stored in the daemon's state database and counted in /metrics, one without it is refused
    and counted, and the token shows nowhere in the daemon's log."""
    import urllib.request

    from tests.support.scan_reports import REPORT, batch

    token = f"scan-token-{uuid.uuid4().hex}"
    monkeypatch.setenv("ICEMAINT_TEST_SCAN_TOKEN", token)
    state_url = f"sqlite:///{tmp_path / 'state.db'}"
    config_path, port = daemon_config(tmp_path, config, state_url, f"scans_{uuid.uuid4().hex[:6]}", "daemon",
                                      daemon_settings="  scan_reports_token: ${ICEMAINT_TEST_SCAN_TOKEN}\n")
    log = tmp_path / "daemon.log"
    process = start_daemon(config_path, log)

    def post(secret: str) -> int:
        request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/scan-reports", data=batch([REPORT, REPORT], catalog=None), method="POST",
                                         headers={"Authorization": f"Bearer {secret}"})
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return answer.status
        except urllib.error.HTTPError as refused:
            return refused.code

    try:
        wait_for(lambda: healthz(port)[0] == 200, 90, "the daemon to be healthy", [log])
        assert post(token) == 200
        assert post(token[:-1]) == 401
        assert metric(port, 'icemaint_scan_reports_total{outcome="taken"}') == 2.0
        assert metric(port, 'icemaint_scan_reports_total{outcome="unauthorized"}') == 1.0
        with open(f"/proc/{process.pid}/cmdline", "rb") as cmdline:
            assert token.encode() not in cmdline.read()
    finally:
        stop_daemon(process, log)
    stored = open_state(parse_config({"state": {"url": state_url}}, source="test", base_dir=tmp_path)).scans.summaries()
    assert {t: s.scans for t, s in stored.items()} == {f"{config.default_catalog}.sales.orders": 2}
    assert token not in log.read_text()


def test_a_daemon_with_a_budget_dispatches_what_the_hour_has_left_room_for(config: Config) -> None:
    """`daemon.budget`: the jobs that ran in the last hour and those running count against
    it; of the due jobs only those the rest has room for are chosen (`schedule/budget.py`)."""
    import dataclasses

    from maintenance.schedule.value import REPORTED, UPKEEP, Prediction

    daemon = Daemon(dataclasses.replace(config, daemon=dataclasses.replace(config.daemon, budget_s=100.0)))
    unbounded_budget = Daemon(dataclasses.replace(config, daemon=dataclasses.replace(config.daemon, budget_s=1e6)))
    try:
        def due(name: str, cost_s: float, benefit: float) -> Decision:
            decision = Decision(TableRef("local", ("ns",), name), "merge", True, "triggered", "p", NO_COST, cost_s)
            decision.prediction = Prediction(cost_s, benefit, 10.0, REPORTED, 1.0)
            return decision

        decisions = [due("small", 10, 1.0), due("big", 70, 100.0), due("middle", 30, 20.0)]
        alone = Evaluation(decisions=decisions)
        # no upkeep is due: all 100 s go to readers, the best value per second first
        assert [d.table for d in daemon._within_budget(alone)] == ["local.ns.big", "local.ns.middle"]
        daemon.spending.start("local.ns.big merge", 70.0)  # running: its prediction counts
        assert [d.table for d in daemon._within_budget(alone)] == ["local.ns.middle"]
        daemon.spending.settle("local.ns.big merge", 50.0)  # ended: what it measured counts
        assert [d.table for d in daemon._within_budget(alone)] == ["local.ns.middle", "local.ns.small"]
        assert metric_value(daemon, "icemaint_budget_seconds_left") == 50.0
        one_of_two = Evaluation(decisions=decisions, shares={"local": Share(1, 2)})  # half the fleet: half the budget
        assert [d.table for d in daemon._within_budget(one_of_two)] == []  # 50 s less 50 spent
        assert metric_value(daemon, "icemaint_budget_seconds_left") == 0.0
        unbounded = Daemon(config)
        assert unbounded._within_budget(alone) == decisions
        stats = due("big", 5, 0.0)
        stats.job, stats.prediction = "stats", Prediction(5, 0.0, 0.0, UPKEEP, 1.0)  # chosen first, as upkeep
        chosen = unbounded_budget._within_budget(Evaluation(decisions=[stats, *decisions]))
        assert [(d.ref.name, d.job) for d in chosen][:2] == [("big", "merge"), ("big", "stats")]  # a table's jobs in their order
        unbounded.pool.shutdown()
    finally:
        daemon.pool.shutdown()
        unbounded_budget.pool.shutdown()


def metric_value(daemon: Daemon, name: str) -> float:
    return next(s.value for m in daemon.metrics.registry.collect() for s in m.samples if s.name == name)
