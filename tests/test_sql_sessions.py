"""SQL sessions bounded once connected (`maintenance/sql_sessions.py`), on real servers: the
state database's and pyiceberg's SQL catalog's sessions carry the server-side bounds on
PostgreSQL and MariaDB, and a holder paused inside a state transaction (holding its lease's
row lock) delays a takeover by the idle bound, not for as long as it is paused."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from sqlalchemy import Engine, text

from maintenance.catalogs import get_catalog
from maintenance.config import parse_config
from maintenance.sql_sessions import IDLE_IN_TRANSACTION_S, LOCK_WAIT_S, STATEMENT_S
from maintenance.state.database import ensure_schema, make_engine
from maintenance.state.leases import Lease, LeaseStore
from tests.conftest import new_state_url


@pytest.fixture(params=["postgresql", "mariadb"])
def server_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from new_state_url(request.param, tmp_path)


@pytest.fixture
def postgresql_url(tmp_path: Path) -> Iterator[str]:
    yield from new_state_url("postgresql", tmp_path)


def _bounds(engine: Engine) -> dict[str, int]:
    """The session's bounds in seconds, as the server reports them."""
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            names = ("idle_in_transaction_session_timeout", "lock_timeout", "statement_timeout")
            return {name: int(conn.execute(text(f"SELECT setting::int FROM pg_settings WHERE name = '{name}'")).scalar_one()) // 1000 for name in names}
        row = conn.execute(text("SELECT @@SESSION.idle_transaction_timeout, @@SESSION.innodb_lock_wait_timeout, @@SESSION.max_statement_time")).one()
        return {"idle_transaction_timeout": int(row[0]), "innodb_lock_wait_timeout": int(row[1]), "max_statement_time": int(row[2])}


EXPECTED = {
    "postgresql": {"idle_in_transaction_session_timeout": IDLE_IN_TRANSACTION_S, "lock_timeout": LOCK_WAIT_S, "statement_timeout": STATEMENT_S},
    "mysql": {"idle_transaction_timeout": IDLE_IN_TRANSACTION_S, "innodb_lock_wait_timeout": LOCK_WAIT_S, "max_statement_time": STATEMENT_S},
}


def test_state_and_catalog_sessions_carry_the_server_side_bounds(server_url: str, tmp_path: Path) -> None:
    state = make_engine(server_url)
    ensure_schema(state)  # a migration lifts the bounds on its connection and puts them back
    assert _bounds(state) == EXPECTED[state.dialect.name]
    state.dispose()

    SqlCatalog("lake", uri=server_url, warehouse=(tmp_path / "w").as_uri()).engine.dispose()  # the writers' catalog tables
    config = parse_config({"catalogs": {"lake": {"type": "sql", "uri": server_url, "warehouse": (tmp_path / "w").as_uri()}}, "default_catalog": "lake"},
                          source="tests", base_dir=tmp_path)
    catalog = get_catalog(config, "lake")
    assert isinstance(catalog, SqlCatalog)
    assert _bounds(catalog.engine) == EXPECTED[catalog.engine.dialect.name]
    catalog.engine.dispose()


PAUSED_HOLDER = textwrap.dedent("""
    import os, signal, sys
    from sqlalchemy import text
    from maintenance.state.database import make_engine

    engine = make_engine(sys.argv[1])
    with engine.begin() as conn:  # a renewal, paused between its statements: the row stays locked
        conn.execute(text("UPDATE icemaint_leases SET heartbeat_at_ms = heartbeat_at_ms WHERE table_name = 'lake.ns.paused'"))
        print("locked", flush=True)
        os.kill(os.getpid(), signal.SIGSTOP)
""")


@pytest.mark.process
def test_a_holder_paused_inside_a_state_transaction_delays_a_takeover_by_the_idle_bound(postgresql_url: str) -> None:
    engine = make_engine(postgresql_url)
    ensure_schema(engine)
    store = LeaseStore(engine)
    assert store.acquire("lake.ns.paused", "a", ttl_s=1) is not None
    holder = subprocess.Popen([sys.executable, "-c", PAUSED_HOLDER, postgresql_url], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        _wait_stopped(holder.pid)
        time.sleep(1.5)  # the lease expired: only the paused holder's row lock is in the way
        taken: list[Lease | None] = []
        started = time.monotonic()
        taker = threading.Thread(target=lambda: taken.append(store.acquire("lake.ns.paused", "b", ttl_s=30)), daemon=True)
        taker.start()
        taker.join(IDLE_IN_TRANSACTION_S + 30)
        took = time.monotonic() - started
        assert not taker.is_alive(), f"the takeover still waits for the paused holder after {took:.0f} s"
        assert taken and taken[0] is not None and taken[0].holder == "b"
        assert took < LOCK_WAIT_S  # it waited for the idle bound, and its own lock wait did not end first
    finally:
        holder.kill()
        holder.wait()
        engine.dispose()


def _wait_stopped(pid: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T":
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    raise AssertionError("the holder never paused")
