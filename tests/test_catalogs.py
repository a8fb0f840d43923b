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

    assert_one_line_error(health, 2, str(missing), "does not exist")
    assert plan.returncode != 0 and str(missing) in plan.stderr and "Traceback" not in plan.stderr, plan.stderr
    assert "nothing due" not in plan.stdout
    assert not missing.exists()


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
