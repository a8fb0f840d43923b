"""Every catalog call is bounded in time (`maintenance/timeouts.py`): against a server that
accepts connections and never answers (a hung catalog, a stalled load balancer), `plan`
and `health` end within a minute with one line naming the catalog, exit 1, for a REST
catalog, a Hive Metastore and a SQL catalog on PostgreSQL and MariaDB. Before, `plan` on
such a REST or Hive catalog was still running after nine minutes."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from maintenance.timeouts import bounded_sql_url
from tests.support.cli import assert_one_line_error, run_cli
from tests.support.silent import Silent


@pytest.fixture
def silent() -> Iterator[Silent]:
    server = Silent()
    yield server
    server.close()


CATALOGS = {
    "rest": lambda port: {"type": "rest", "uri": f"http://127.0.0.1:{port}", "warehouse": "lake"},
    "hive": lambda port: {"type": "hive", "uri": f"thrift://127.0.0.1:{port}", "warehouse": "/tmp/never"},
    "postgresql": lambda port: {"type": "sql", "uri": f"postgresql+psycopg://u@127.0.0.1:{port}/cat"},
    "mariadb": lambda port: {"type": "sql", "uri": f"mysql+pymysql://u@127.0.0.1:{port}/cat"},
}


# `plan` lists every catalog's tables; `health` loads one table (the REST client's other
# path): each catalog kind once with `plan`, `health` once, as each case waits for a timeout.
CASES = [*((kind, ["plan"]) for kind in sorted(CATALOGS)), ("rest", ["health", "hung.ns.t"])]


@pytest.mark.slow  # each case waits for a timeout: make test-integration runs them
@pytest.mark.parametrize(("kind", "command"), CASES, ids=[f"{kind}-{command[0]}" for kind, command in CASES])
@pytest.mark.process
def test_a_catalog_that_never_answers_fails_within_a_minute_in_one_line(silent: Silent, tmp_path: Path, kind: str, command: list[str]) -> None:
    config = tmp_path / "icemaint.yaml"
    config.write_text(yaml.safe_dump({"home": str(tmp_path / "home"), "catalogs": {"hung": CATALOGS[kind](silent.port)},
                                      "state": {"url": f"sqlite:///{tmp_path / 'state.db'}"}}))
    started = time.monotonic()
    proc = run_cli("--config", str(config), *command, home=tmp_path)
    took = time.monotonic() - started
    assert took < 60, f"{kind}: {took:.0f} s"
    assert silent.accepted, "the catalog was never asked"
    assert_one_line_error(proc, 1, "hung")


def test_sql_urls_get_the_drivers_timeouts_unless_they_name_their_own() -> None:
    assert "connect_timeout=5" in bounded_sql_url("postgresql+psycopg://u@h/db")
    assert "connect_timeout=9" in bounded_sql_url("postgresql+psycopg://u@h/db?connect_timeout=9")
    mysql = bounded_sql_url("mysql+pymysql://u@h/db?charset=utf8mb4")
    assert all(part in mysql for part in ("charset=utf8mb4", "connect_timeout=5", "read_timeout=20", "write_timeout=20"))
    assert bounded_sql_url("sqlite:////tmp/c.db") == "sqlite:////tmp/c.db"
