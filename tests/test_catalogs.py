"""Catalogs as an operator points icemaint at them: a mistyped path or name is said, never
maintained as an empty fleet."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog

from tests.support.cli import assert_one_line_error, run_cli


def _config(tmp_path: Path, catalog_name: str, database: Path) -> Path:
    config = tmp_path / "icemaint.yaml"
    config.write_text(f"home: {tmp_path}\ncatalogs:\n  {catalog_name}:\n    type: sql\n    uri: sqlite:///{database}\n"
                      f"    warehouse: file://{tmp_path / 'warehouse'}\n")
    return config


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
