"""The state database going away: the CLI says so in one line; a waiting caller recovers."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from sqlalchemy.engine import make_url

from maintenance.state.database import StateUnavailableError, ensure_schema, make_engine
from maintenance.state.leases import LeaseStore
from maintenance.state.retry import retry_while_unavailable
from tests.conftest import POSTGRES_ADMIN_URL
from tests.tcp_proxy import TcpProxy
from tests.test_cli import assert_one_line_error, run_cli


def test_cli_reports_an_unreachable_state_database_in_one_line(tmp_path: Path) -> None:
    config = tmp_path / "icemaint.yaml"
    config.write_text("state:\n  url: postgresql://icemaint:hunter2@127.0.0.1:9/state\n")
    for args in (["leases"], ["runs"], ["db", "upgrade"]):
        proc = run_cli("--config", str(config), *args, home=tmp_path)
        assert_one_line_error(proc, 1, "state database unreachable")
        assert "hunter2" not in proc.stderr


def test_waiting_caller_retries_with_backoff_and_recovers(tmp_path: Path) -> None:
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

    def counted() -> object:
        attempts.append(time.monotonic())
        return acquire_once()

    outcome: dict[str, object] = {}
    waiter = threading.Thread(target=lambda: outcome.setdefault("lease", retry_while_unavailable(counted, stop=threading.Event(), initial_s=0.2, max_s=1.0)))
    waiter.start()
    time.sleep(2.0)
    assert waiter.is_alive() and len(attempts) >= 3
    gaps = [b - a for a, b in zip(attempts, attempts[1:])]
    assert gaps[-1] > gaps[0]  # backing off

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
