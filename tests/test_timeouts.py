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

from maintenance.catalogs import get_catalog
from maintenance.config import parse_config
from maintenance.spark.session import catalog_spark_conf, spark_conf
from maintenance.timeouts import CONNECT_TIMEOUT_S, READ_TIMEOUT_S, bounded_sql_url
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
    "glue": lambda port: {"type": "glue", "warehouse": "s3://b/w", "properties": {
        "glue.endpoint": f"http://127.0.0.1:{port}", "glue.region": "eu-west-1", "glue.access-key-id": "AKIATEST", "glue.secret-access-key": "not-a-secret"}},
}
# botocore asks an instance-metadata address for credentials it was not given: never here.
NO_INSTANCE_METADATA = {"AWS_EC2_METADATA_DISABLED": "true"}


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
    proc = run_cli("--config", str(config), *command, home=tmp_path, env=NO_INSTANCE_METADATA)
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


def test_spark_catalogs_get_the_rest_jdbc_and_hive_timeouts_unless_they_name_their_own(tmp_path: Path) -> None:
    """Iceberg's Java clients in Spark's JVM: the REST client's, the JDBC drivers' (PostgreSQL
    in seconds, MariaDB in milliseconds) and the Hive Metastore client's bounds."""
    config = parse_config({"catalogs": {
        "rest": {"type": "rest", "uri": "http://127.0.0.1:1"},
        "own": {"type": "rest", "uri": "http://127.0.0.1:1", "spark": {"rest.client.socket-timeout-ms": "7"}},
        "pg": {"type": "sql", "uri": "postgresql+psycopg://u@127.0.0.1:1/cat"},
        "maria": {"type": "sql", "uri": "mysql+pymysql://u@127.0.0.1:1/cat"},
        "hms": {"type": "hive", "uri": "thrift://127.0.0.1:1"},
    }, "default_catalog": "rest"}, source="tests", base_dir=tmp_path)
    rest, own, pg, maria = (catalog_spark_conf(config.catalog(name)) for name in ("rest", "own", "pg", "maria"))
    assert rest["spark.sql.catalog.rest.rest.client.connection-timeout-ms"] == str(CONNECT_TIMEOUT_S * 1000)
    assert rest["spark.sql.catalog.rest.rest.client.socket-timeout-ms"] == str(READ_TIMEOUT_S * 1000)
    assert own["spark.sql.catalog.own.rest.client.socket-timeout-ms"] == "7"
    assert pg["spark.sql.catalog.pg.jdbc.connectTimeout"] == str(CONNECT_TIMEOUT_S)
    assert int(pg["spark.sql.catalog.pg.jdbc.socketTimeout"]) <= 60
    assert maria["spark.sql.catalog.maria.jdbc.connectTimeout"] == str(CONNECT_TIMEOUT_S * 1000)
    assert int(maria["spark.sql.catalog.maria.jdbc.socketTimeout"]) <= 60_000
    hive = spark_conf(config)
    assert hive["spark.hadoop.hive.metastore.client.socket.timeout"] == f"{READ_TIMEOUT_S}s"
    assert int(hive["spark.hadoop.hive.metastore.connect.retries"]) <= 3


def test_a_glue_catalog_through_pyiceberg_has_botocores_timeouts_and_few_retries(tmp_path: Path) -> None:
    """botocore's defaults (60 s to connect, 60 s to read) times pyiceberg's ten retries
    would wait for minutes; a user's own `glue.max-retries` wins. Building the client asks
    nothing of the endpoint."""
    glue = {"type": "glue", "warehouse": "s3://b/w", "properties": {"glue.region": "eu-west-1", "glue.endpoint": "http://127.0.0.1:1",
                                                                     "glue.access-key-id": "AKIATEST", "glue.secret-access-key": "not-a-secret"}}
    own = {**glue, "properties": {**glue["properties"], "glue.max-retries": "4"}}
    config = parse_config({"catalogs": {"glue": glue, "own": own}, "default_catalog": "glue"}, source="tests", base_dir=tmp_path)
    bounded, given = (get_catalog(config, name).glue.meta.config for name in ("glue", "own"))  # type: ignore[attr-defined]
    assert (bounded.connect_timeout, bounded.read_timeout) == (CONNECT_TIMEOUT_S, READ_TIMEOUT_S)
    assert bounded.retries["total_max_attempts"] * READ_TIMEOUT_S + CONNECT_TIMEOUT_S < 60
    assert given.retries["total_max_attempts"] == 5
