"""`icemaint workload fleet`: many small real tables without Spark, grown by calling again."""

from __future__ import annotations

import json

import pytest

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.table.health import table_health
from tests.support.cli import in_process


def test_a_fleet_is_real_small_tables_and_grows_when_asked_again(config: Config, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = in_process(capsys, "workload", "fleet", "--tables", "12", "--namespace", "fleet_a", "--commits", "2", "--rows", "50",
                                "--partitions", "3", "--json")
    assert code == 0 and json.loads(out) | {"seconds": 0} == {"catalog": "local", "namespace": "fleet_a", "tables_created": 12,
                                                              "tables_existing": 0, "commits": 24, "seconds": 0}, (out, err)
    table = load_table(config, TableRef("local", ("fleet_a",), "t00011"))
    health = table_health("t", table, small_file_bytes=2**20)
    assert (health.snapshots, health.data_records, health.data_files, len(health.partitions)) == (2, 100, 6, 3)

    code, out, _ = in_process(capsys, "workload", "fleet", "--tables", "15", "--namespace", "local.fleet_a", "--commits", "2", "--json")
    assert code == 0 and (json.loads(out)["tables_created"], json.loads(out)["tables_existing"]) == (3, 12), out
    code, out, _ = in_process(capsys, "plan", "--json")
    planned = {d["table"] for d in json.loads(out)["decisions"]}
    assert {f"local.fleet_a.t{i:05d}" for i in range(15)} <= planned


def test_a_fleet_in_an_unknown_catalog_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = in_process(capsys, "workload", "fleet", "--tables", "2", "--namespace", "nowhere.fleet")
    assert code == 2 and out == "" and "unknown catalog 'nowhere'" in err and len(err.strip().splitlines()) == 1, err
