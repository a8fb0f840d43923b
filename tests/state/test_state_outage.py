"""The state database going away: the CLI says so in one line; a caller trying again recovers.
Stopping to answer while connected: `runs` fails in one line and `/readyz` names it, within
a minute.
Misconfigured (a role that does not exist): a daemon starting exits 2 in one line; a
running daemon stays up, reports 503 and backs off until the role is back."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from maintenance.catalogs import get_catalog
from maintenance.config import Config, parse_config
from maintenance.state.database import StateUnavailableError, ensure_schema, make_engine
from maintenance.state.leases import LeaseStore
from tests.conftest import POSTGRES_ADMIN_URL, new_state_url
from tests.support.cli import assert_one_line_error, run_cli
from tests.support.daemon import EVALUATIONS_OK, daemon_config, healthz, http_get, metric, start_daemon, stop_daemon, wait_for
from tests.support.tcp_proxy import TcpProxy


@pytest.mark.process
def test_cli_reports_an_unreachable_state_database_in_one_line(tmp_path: Path) -> None:
    config = tmp_path / "icemaint.yaml"
    config.write_text("state:\n  url: postgresql://icemaint:hunter2@127.0.0.1:9/state\n")
    for args in (["leases"], ["runs"], ["db", "upgrade"]):
        proc = run_cli("--config", str(config), *args, home=tmp_path)
        assert_one_line_error(proc, 1, "state database unreachable")
        assert "hunter2" not in proc.stderr


def test_a_caller_that_tries_again_recovers_when_the_database_is_back(tmp_path: Path) -> None:
    """A caller that tries again while the database is down gets the one-line error each
    time, and an answer once it is back, on the same engine (its pool drops the dead
    connections); and the database going away again mid-life is detected."""
    url = make_url(POSTGRES_ADMIN_URL)
    proxy = TcpProxy(target_port=url.port or 5432)
    proxied = url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    engine = make_engine(proxied)

    def acquire_once() -> object:
        ensure_schema(engine)
        return LeaseStore(engine).acquire(f"cat.ns.outage_{time.time_ns()}", "daemon", ttl_s=30)

    # Down: a single call fails at once with the one-line error.
    try:
        acquire_once()
        raise AssertionError("expected the database to be unreachable")
    except StateUnavailableError:
        pass

    attempts: list[float] = []
    outcome: dict[str, object] = {}

    def until_it_answers() -> None:
        while True:
            attempts.append(time.monotonic())
            try:
                outcome["lease"] = acquire_once()
                return
            except StateUnavailableError:
                time.sleep(0.2)

    waiter = threading.Thread(target=until_it_answers)
    waiter.start()
    time.sleep(2.0)
    assert waiter.is_alive() and len(attempts) >= 3

    proxy.start()  # the database comes back
    waiter.join(timeout=30)
    assert not waiter.is_alive()
    assert outcome["lease"] is not None

    proxy.stop()  # and goes away again mid-life: the pooled connection is detected dead
    try:
        LeaseStore(engine).acquire("cat.ns.outage_again", "daemon", ttl_s=30)
        raise AssertionError("expected the database to be unreachable")
    except StateUnavailableError:
        pass
    engine.dispose()


# -- a misconfigured state database: a role that does not exist --------------------------------
PASSWORD = "hunter2-state"


class PostgresRole:
    """A login role of its own on the test PostgreSQL, with a database of its own, that the
    test can drop and create again while a daemon uses it: the role owns nothing (its
    sessions act as an owner role, which owns the database and the tables the migrations
    create), so DROP ROLE needs nothing dropped or reassigned first."""

    def __init__(self) -> None:
        tag = uuid.uuid4().hex[:8]
        self.user, self.owner, self.database = f"icemaint_user_{tag}", f"icemaint_owner_{tag}", f"icemaint_db_{tag}"
        self.admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
        self._sql(f"CREATE ROLE {self.owner} NOLOGIN", f"CREATE DATABASE {self.database} OWNER {self.owner}")
        self.create()

    @property
    def url(self) -> str:
        admin = make_url(POSTGRES_ADMIN_URL)
        return admin.set(username=self.user, password=PASSWORD, database=self.database).render_as_string(hide_password=False)

    def create(self) -> None:
        self._sql(f"CREATE ROLE {self.user} LOGIN PASSWORD '{PASSWORD}' IN ROLE {self.owner}", f"ALTER ROLE {self.user} SET role = '{self.owner}'")

    def drop(self) -> None:
        """Drop the role and end its sessions, as an administrator would."""
        self._sql(f"DROP ROLE {self.user}", f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{self.database}'")

    def close(self) -> None:
        self._sql(f"DROP DATABASE IF EXISTS {self.database} WITH (FORCE)", f"DROP ROLE IF EXISTS {self.user}", f"DROP ROLE IF EXISTS {self.owner}")
        self.admin.dispose()

    def _sql(self, *statements: str) -> None:
        with self.admin.connect() as conn:
            for statement in statements:
                conn.execute(text(statement))


def own_home(tmp_path: Path) -> Config:
    """A config on a home of its own (an empty embedded catalog): each evaluation is instant,
    however many tables the session's catalog holds, so the probes keep to the interval."""
    config = parse_config({"home": str(tmp_path / "home")}, source="tests", base_dir=tmp_path)
    get_catalog(config, config.default_catalog)  # made here: icemaint never creates a catalog it maintains
    return config


@pytest.mark.process
def test_a_daemon_whose_state_role_does_not_exist_exits_2_in_one_line(tmp_path: Path) -> None:
    """Misconfigured at start-up is the user's mistake, as for every other command: one line
    naming the state database, exit 2, no traceback, no password."""
    url = make_url(POSTGRES_ADMIN_URL).set(username=f"nosuchrole_{uuid.uuid4().hex[:6]}", password=PASSWORD).render_as_string(hide_password=False)
    config_path, port = daemon_config(tmp_path, own_home(tmp_path), url, "misconfigured", "daemon")
    log = tmp_path / "daemon.log"
    started = time.monotonic()
    process = start_daemon(config_path, log)
    try:
        code = process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        pytest.fail(f"the daemon did not exit:\n{healthz(port)}\n{log.read_text()[-3000:]}")
    text = log.read_text()
    assert code == 2, text[-3000:]
    errors = [line for line in text.splitlines() if line.startswith("icemaint: error: ")]
    assert len(errors) == 1 and errors[0].startswith("icemaint: error: state database: ") and "does not exist" in errors[0], text
    assert "Traceback" not in text and PASSWORD not in text, text
    assert time.monotonic() - started < 30


@pytest.mark.process
@pytest.mark.slow
def test_a_state_role_dropped_while_the_daemon_runs_turns_healthz_503_backing_off_and_its_return_200(tmp_path: Path) -> None:
    """The daemon's role dropped under it: the daemon stays up, /healthz says 503 naming the
    state database with the database's one-line reason (no password), the failed evaluations
    are counted by cause `state` and none as ok, the probes back off (doubling), the log has
    one line per change and no traceback; the role created again: 200 and ok evaluations."""
    role = PostgresRole()
    try:
        config_path, port = daemon_config(tmp_path, own_home(tmp_path), role.url, f"dropped_{uuid.uuid4().hex[:6]}", "daemon")
        log = tmp_path / "daemon.log"
        process = start_daemon(config_path, log)
        try:
            wait_for(lambda: healthz(port)[0] == 200 and metric(port, EVALUATIONS_OK) >= 1, 90, "the daemon to be healthy", [log])
            role.drop()
            dropped = time.monotonic()
            failed_at = failures_over_time(port, STATE_FAILURES, count=1, timeout_s=30, logs=[log])
            ok = metric(port, EVALUATIONS_OK)  # no evaluation runs beside a probe: none is under way now
            failed_at += failures_over_time(port, STATE_FAILURES, count=2, timeout_s=30, logs=[log])
            assert failed_at[0] - dropped <= 2 * 2 + 1
            gaps = [b - a for a, b in zip(failed_at, failed_at[1:])]
            # Backing off: 2 s, then 4 s (interval 2 s), each give or take how long a failed
            # probe took to fail (up to half a second more or less on a loaded machine).
            assert gaps[1] - gaps[0] > 1.0, gaps
            status, body = healthz(port)
            assert status == 503 and body.startswith("state: failing for ") and f'role "{role.user}" does not exist' in body, body
            assert "\n" not in body.strip() and PASSWORD not in body, body
            assert metric(port, EVALUATIONS_OK) == ok and metric(port, STATE_UP) == 0.0
            assert process.poll() is None
            role.create()
            wait_for(lambda: healthz(port)[0] == 200, 30, "200 after the role's return", [log])
            wait_for(lambda: metric(port, EVALUATIONS_OK) > ok, 30, "evaluations counted ok again", [log])
            assert metric(port, STATE_UP) == 1.0
        finally:
            code = stop_daemon(process, log)
        text = log.read_text()
        assert code == 0, text[-3000:]
        assert "Traceback" not in text and PASSWORD not in text, text[-3000:]
        assert text.count('"dependency failing"') == 1 and text.count('"dependency works again"') == 1, text[-3000:]
    finally:
        role.close()


STATE_FAILURES = 'icemaint_evaluation_failures_total{cause="state"}'
STATE_UP = 'icemaint_dependency_up{dependency="state"}'


def failures_over_time(port: int, sample: str, *, count: int, timeout_s: float, logs: list[Path]) -> list[float]:
    """When the next `count` increments of a counter were seen (polled every 0.1 s)."""
    seen, last, deadline = [], metric(port, sample), time.monotonic() + timeout_s
    while len(seen) < count:
        if time.monotonic() > deadline:
            pytest.fail(f"only {len(seen)} of {count} increments of {sample}:\n" + "\n".join(p.read_text()[-3000:] for p in logs))
        value = metric(port, sample)
        if value > last:
            seen.append(time.monotonic())
            last = value
        time.sleep(0.1)
    return seen


# -- a state database that stops answering (accepts, never answers) ------------------------------
@pytest.fixture
def proxied_state(tmp_path: Path) -> Iterator[tuple[TcpProxy, str]]:
    """A migrated PostgreSQL state database behind a proxy the test can make hang."""
    for url in new_state_url("postgresql", tmp_path):
        engine = make_engine(url)
        ensure_schema(engine)
        engine.dispose()
        target = make_url(url)
        proxy = TcpProxy(target_port=target.port or 5432)
        proxy.start()
        try:
            # in clear, so the proxy sees which statement it holds back
            yield proxy, target.set(host="127.0.0.1", port=proxy.port, query={"sslmode": "disable"}).render_as_string(hide_password=False)
        finally:
            proxy.stop()


@pytest.mark.process
@pytest.mark.slow  # it waits for the answer's time bound: make test-integration runs it
def test_runs_on_a_state_database_that_stops_answering_exits_1_in_one_line_within_a_minute(proxied_state: tuple[TcpProxy, str], tmp_path: Path) -> None:
    """Connected, then no answer: TCP keepalives do not see a peer whose kernel still answers
    them, and libpq has no read timeout. Before, `runs` waited for ever."""
    proxy, url = proxied_state
    config = tmp_path / "icemaint.yaml"
    config.write_text(f"state:\n  url: {url}\n")
    proxy.hang_on(b"icemaint_runs")  # the history's query: after connecting and reading the schema's revision
    started = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-m", "maintenance", "--config", str(config), "runs"], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "ICEMAINT_HOME": str(tmp_path)})
    except subprocess.TimeoutExpired:
        pytest.fail("`icemaint runs` still waited for the state database after 120 s")
    took = time.monotonic() - started
    assert_one_line_error(proc, 1, "state database unreachable", "did not answer")
    assert took < 60, f"{took:.0f} s"


@pytest.mark.process
@pytest.mark.slow  # it waits for the answer's time bound: make test-integration runs it
def test_readyz_says_the_state_database_fails_within_a_minute_once_it_stops_answering(proxied_state: tuple[TcpProxy, str], tmp_path: Path) -> None:
    """The daemon's pooled connection is established when the database stops answering: its
    next probe fails within the answer's bound, and `/readyz` names the state database.
    Before, the probe waited for ever and `/readyz` said 200 for ten minutes and more."""
    proxy, url = proxied_state
    config_path, port = daemon_config(tmp_path, own_home(tmp_path), url, f"hung_{uuid.uuid4().hex[:6]}", "daemon")
    log = tmp_path / "daemon.log"
    process = start_daemon(config_path, log)
    try:
        wait_for(lambda: healthz(port)[0] == 200 and metric(port, EVALUATIONS_OK) >= 1, 90, "the daemon to be ready", [log])
        proxy.hang()
        hung = time.monotonic()

        def readyz_names_the_state_database() -> bool:
            code, body = http_get(port, "/readyz")
            return code == 503 and body.startswith("state: failing")

        wait_for(readyz_names_the_state_database, 90, "/readyz naming the state database", [log])
        named_after = time.monotonic() - hung
    finally:
        process.kill()  # SIGTERM's stop is another test's (tests/daemon/test_hung_catalog.py)
        process.wait()
    assert named_after < 60, f"{named_after:.0f} s"
    assert "Traceback" not in log.read_text()
