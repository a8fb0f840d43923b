"""Catalogs as an operator points icemaint at them: a mistyped path, name or database is said,
never maintained as an empty fleet, and nothing is made in a database icemaint did not make."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from sqlalchemy import create_engine, inspect, text

from tests.conftest import new_state_url
from tests.support.cli import assert_one_line_error, run_cli


def _config(tmp_path: Path, catalog_name: str, database: Path) -> Path:
    config = tmp_path / "icemaint.yaml"
    config.write_text(f"home: {tmp_path}\ncatalogs:\n  {catalog_name}:\n    type: sql\n    uri: sqlite:///{database}\n"
                      f"    warehouse: file://{tmp_path / 'warehouse'}\n")
    return config


@pytest.mark.process
def test_a_sqlite_catalog_that_does_not_exist_is_an_error_and_is_not_created(tmp_path: Path) -> None:
    """`catalgo.db` for `catalog.db`: every command that reads the catalog names the path,
    and no empty catalog appears there (SQLAlchemy creates a database file on connect)."""
    missing = tmp_path / "catalgo.db"
    config = _config(tmp_path, "lake", missing)

    health = run_cli("--config", str(config), "health", "ns.t", home=tmp_path)
    plan = run_cli("--config", str(config), "plan", home=tmp_path)
    run = run_cli("--config", str(config), "run", "--dry-run", home=tmp_path)

    assert_one_line_error(health, 2, str(missing), "does not exist")
    for command in (plan, run):  # the configuration's fault: exit 2, as any bad configuration
        assert_one_line_error(command, 2, str(missing), "does not exist")
        assert "nothing due" not in command.stdout
    assert not missing.exists()


@pytest.mark.process
def test_catalogs_spark_cannot_take_are_refused_before_any_job(tmp_path: Path) -> None:
    """What Spark would refuse when it starts, inside a job (exit 1, once per job), is the
    configuration's fault and said before anything runs: a SQL catalog on a database Iceberg's
    JDBC catalog does not support, and two catalogs giving one bucket different s3a settings."""
    oracle = tmp_path / "oracle.yaml"
    oracle.write_text(f"home: {tmp_path}\ncatalogs:\n  lake:\n    type: sql\n    uri: oracle://u@127.0.0.1:1/db\n")
    clash = tmp_path / "clash.yaml"
    catalog = "    type: rest\n    uri: http://127.0.0.1:1\n    warehouse: s3://shared/w{n}\n    properties:\n      s3.endpoint: http://127.0.0.1:{port}\n"
    clash.write_text(f"home: {tmp_path}\ncatalogs:\n  a:\n{catalog.format(n=1, port=9001)}  b:\n{catalog.format(n=2, port=9002)}")

    for config, said in ((oracle, "is not supported by Spark's JDBC catalog"), (clash, "give Hadoop's s3a different 'endpoint'")):
        for command in (("plan",), ("run", "--dry-run"), ("merge", "a.ns.t")):
            assert_one_line_error(run_cli("--config", str(config), *command, home=tmp_path), 2, said)


@pytest.mark.process
def test_a_catalog_named_otherwise_than_its_writers_name_it_is_said(tmp_path: Path) -> None:
    """pyiceberg's SQL catalog keys tables by catalog name: configured as `lake` over a
    database Spark wrote as `spark_catalog`, it lists nothing. `plan` fails naming both names,
    and with the writers' name it finds the table."""
    database = tmp_path / "catalog.db"
    writers = SqlCatalog("spark_catalog", uri=f"sqlite:///{database}", warehouse=f"file://{tmp_path / 'warehouse'}")
    writers.create_namespace("sales")
    writers.create_table("sales.orders", schema=pa.schema([pa.field("id", pa.int64())]))

    wrong = run_cli("--config", str(_config(tmp_path, "lake", database)), "plan", home=tmp_path)

    assert wrong.returncode == 1, wrong.stderr
    assert "nothing due" not in wrong.stdout
    errors = [line for line in wrong.stderr.splitlines() if line.startswith("icemaint: error: ")]
    assert errors == ["icemaint: error: catalog lake: lists no table; its database holds tables of catalog 'spark_catalog': "
                      "a catalog's name in the configuration must be the name its writers use"], wrong.stderr
    right = run_cli("--config", str(_config(tmp_path, "spark_catalog", database)), "plan", "--all", home=tmp_path)
    assert right.returncode == 0, right.stderr
    assert "spark_catalog.sales.orders" in right.stdout


@pytest.mark.process
def test_a_postgresql_database_without_a_catalog_is_an_error_and_nothing_is_made_in_it(tmp_path: Path) -> None:
    """A SQL catalog's uri naming an existing database that holds no Iceberg catalog (the
    application's database, a mistyped name): pyiceberg would make its catalog tables there
    and list nothing. Every command that reads the catalog names it, exit 2, and the database
    is left as it was."""
    for url in new_state_url("postgresql", tmp_path):
        engine = create_engine(url)
        with engine.begin() as conn:
            conn.execute(text("CREATE TABLE orders (id BIGINT PRIMARY KEY)"))  # the user's own
        config = tmp_path / "icemaint.yaml"
        config.write_text(f"home: {tmp_path}\ncatalogs:\n  lake:\n    type: sql\n    uri: {url}\n    warehouse: file://{tmp_path / 'warehouse'}\n")

        plan = run_cli("--config", str(config), "plan", home=tmp_path)
        run = run_cli("--config", str(config), "run", "--dry-run", home=tmp_path)
        health = run_cli("--config", str(config), "health", "ns.t", home=tmp_path)

        for command in (plan, run, health):
            assert_one_line_error(command, 2, "catalog", "lake", "holds no Iceberg catalog")
            assert "nothing due" not in command.stdout
        assert set(inspect(engine).get_table_names()) == {"orders"}
        engine.dispose()


def _v0_catalog(tmp_path: Path) -> Path:
    """A SQLite catalog of the schema without views (no `iceberg_type` column), as catalogs
    made before Iceberg 1.7 and pyiceberg 0.8 are, with one table."""
    database = tmp_path / "catalog.db"
    SqlCatalog("lake", uri=f"sqlite:///{database}", warehouse=f"file://{tmp_path / 'warehouse'}").engine.dispose()
    with sqlite3.connect(database) as conn:
        conn.execute("ALTER TABLE iceberg_tables DROP COLUMN iceberg_type")
    writers = SqlCatalog("lake", uri=f"sqlite:///{database}", warehouse=f"file://{tmp_path / 'warehouse'}")  # finds the v0 schema
    writers.create_namespace("sales")
    table = writers.create_table("sales.orders", schema=pa.schema([pa.field("id", pa.int64(), nullable=False)]))
    table.append(pa.table({"id": pa.array([1, 2, 3], pa.int64())}, schema=pa.schema([pa.field("id", pa.int64(), nullable=False)])))
    writers.engine.dispose()
    return database


def _columns(database: Path) -> set[str]:
    with sqlite3.connect(database) as conn:
        return {row[1] for row in conn.execute("PRAGMA table_info(iceberg_tables)")}


@pytest.mark.process
@pytest.mark.slow  # two Spark starts
def test_schema_version_v0_keeps_iceberg_from_adding_the_iceberg_type_column(tmp_path: Path) -> None:
    """docs/deployment.md's opt-out: with `spark: {jdbc.schema-version: V0}`, Spark's JDBC
    catalog reads a catalog of the schema without views as it is; without it, Iceberg adds
    the column `iceberg_type` the first time Spark opens the catalog (the documented change)."""
    spark = "spark:\n  master: local[1]\n  conf:\n    spark.sql.shuffle.partitions: '1'\n"
    results = {}
    for opt_out in (True, False):
        folder = tmp_path / ("v0" if opt_out else "v1")
        folder.mkdir()
        database = _v0_catalog(folder)
        entry = f"    type: sql\n    uri: sqlite:///{database}\n    warehouse: file://{folder / 'warehouse'}\n"
        entry += "    spark:\n      jdbc.schema-version: V0\n" if opt_out else ""
        config = folder / "icemaint.yaml"
        config.write_text(f"home: {folder / 'home'}\ncatalogs:\n  lake:\n{entry}{spark}")
        verify = run_cli("--config", str(config), "verify", "lake.sales.orders", "--json", home=folder)
        assert verify.returncode == 0, verify.stderr
        assert json.loads(verify.stdout)["rows"] == 3
        results[opt_out] = _columns(database)
    assert "iceberg_type" not in results[True], results
    assert "iceberg_type" in results[False], results  # the change the opt-out prevents


def test_a_sql_catalogs_listing_in_one_query_is_its_namespace_walk(tmp_path: Path) -> None:
    """`catalog_listing` reads a SQL catalog's tables and their metadata locations in one
    query: the same tables as pyiceberg's namespace walk (`list_tables`: nested namespaces,
    an empty one, another catalog's rows in the same database left out), each at the
    location loading it finds; a view's row (a Java writer's, in the same table) is no table."""
    from sqlalchemy import text

    from maintenance.catalogs import catalog_listing, list_tables, load_table
    from maintenance.config import load_config

    database = tmp_path / "catalog.db"
    schema = pa.schema([pa.field("id", pa.int64())])
    mine = SqlCatalog("lake", uri=f"sqlite:///{database}", warehouse=(tmp_path / "warehouse").as_uri())
    other = SqlCatalog("elsewhere", uri=f"sqlite:///{database}", warehouse=(tmp_path / "warehouse").as_uri())
    for namespace in ("a", "a.b", "a.b.c", "z", "empty"):
        mine.create_namespace(namespace)
    for identifier in ("a.t1", "a.b.t2", "a.b.c.t3", "a.b.c.t4", "z.t5"):
        mine.create_table(identifier, schema).append(pa.table({"id": [1]}, schema=schema))
    other.create_namespace("a")
    other.create_table("a.theirs", schema)
    config = load_config(str(_config(tmp_path, "lake", database)))

    refs, locations = catalog_listing(config, "lake")

    assert refs == list_tables(config, "lake") and len(refs) == 5
    assert locations == {str(ref): load_table(config, ref).metadata_location for ref in refs}
    with mine.engine.begin() as conn:  # a view, as iceberg-java's JDBC catalog keeps one in the same table
        conn.execute(text("INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, iceberg_type) "
                          "VALUES ('lake', 'z', 'v1', 'file:///nowhere/v1.metadata.json', 'VIEW')"))
    assert catalog_listing(config, "lake") == (list_tables(config, "lake"), locations)
