"""`icemaint workload fleet`: many small real tables without Spark, grown by calling again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config, parse_config
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


@pytest.mark.rest
def test_a_fleet_made_again_in_a_rest_catalog_that_answers_a_create_of_an_existing_table_is_left_as_it_was(tmp_path: Path) -> None:
    """SeaweedFS's REST catalog answers a create of a table that exists with that table (no
    409): the generator leaves the tables the catalog lists, so a fleet made again (or grown)
    gets no second round of commits."""
    from maintenance.catalogs import get_catalog
    from maintenance.workload.fleet import FleetOptions, make_fleet
    from tests.services.s3 import start_s3

    store = start_s3(tmp_path / "seaweedfs")
    try:
        config = parse_config({"home": str(tmp_path / "home"), "catalogs": {"rest": {
            "type": "rest", "uri": store.rest_uri, "warehouse": store.warehouse, "credential": store.credential, "properties": store.s3_properties()}}},
            source="tests", base_dir=tmp_path)
        catalog = get_catalog(config, "rest")
        options = FleetOptions(tables=3, commits=2, rows=10)
        first = make_fleet(catalog, "rest", options)
        locations = {name: catalog.load_table(f"fleet.{name}").metadata_location for name in ("t00000", "t00001", "t00002")}
        again = make_fleet(catalog, "rest", FleetOptions(tables=4, commits=2, rows=10))

        assert (first.tables_created, again.tables_created, again.tables_existing, again.commits) == (3, 1, 3, 2)
        assert {name: catalog.load_table(f"fleet.{name}").metadata_location for name in locations} == locations
        assert len(catalog.load_table("fleet.t00003").metadata.snapshots) == 2
    finally:
        store.stop()
