"""What a Flink program of the workload needs, found before any JVM starts: a catalog Flink
can load, a one-level namespace, Flink's own Python environment (`make flink`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from maintenance.catalogs import parse_table_ref
from maintenance.config import Config, parse_config
from maintenance.errors import ConfigError, UsageError
from maintenance.workload.flink_runtime import FLINK_PYTHON_ENV, check_flink


@pytest.fixture()
def two_catalogs(tmp_path: Path) -> Config:
    return parse_config({"home": str(tmp_path), "default_catalog": "lake", "catalogs": {
        "lake": {"type": "sql", "uri": f"sqlite:///{tmp_path / 'catalog.db'}", "warehouse": str(tmp_path / "warehouse")},
        "hms": {"type": "hive", "uri": "thrift://127.0.0.1:9083", "warehouse": str(tmp_path / "hive")}}}, source="test", base_dir=tmp_path)


def test_flink_takes_sql_and_rest_catalogs_and_one_level_namespaces(two_catalogs: Config) -> None:
    with pytest.raises(UsageError, match="the Flink reader runs on SQL and REST catalogs, not on 'hms' \\(hive\\)"):
        check_flink(two_catalogs, [parse_table_ref("lake.db.t", two_catalogs), parse_table_ref("hms.db.t", two_catalogs)], "reader")
    with pytest.raises(UsageError, match="the Flink writer takes a table in a one-level namespace, not 'lake.a.b.t'"):
        check_flink(two_catalogs, [parse_table_ref("lake.a.b.t", two_catalogs)], "writer")


def test_a_missing_flink_environment_names_its_make_target(two_catalogs: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FLINK_PYTHON_ENV, str(tmp_path / "no-such-python"))

    with pytest.raises(ConfigError, match="no-such-python is missing\\): install it with 'make flink'"):
        check_flink(two_catalogs, [parse_table_ref("lake.db.t", two_catalogs)], "reader")
