"""MERGE and COMPACT with `where` (maintenance/table/row_filter.py) on Spark-written
merge-on-read tables: only the partitions the predicate may touch are rewritten (checked
by the files each partition has before and after, from Spark's `files` table), the content
is the frozen copy's, and a predicate that does not parse or names no column is refused
before anything runs (exit 2, one line)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyiceberg.types import StringType

from maintenance.catalogs import TableRef, get_catalog, load_table
from maintenance.config import Config, parse_config
from maintenance.policy.loader import load_policies
from maintenance.run.outcome import COMMITTED, NOOP
from maintenance.run.runner import run_job
from maintenance.schedule.cycle import evaluate
from maintenance.state.store import open_state
from maintenance.workload.fleet import FleetOptions, make_fleet
from tests.conftest import fresh_ref
from tests.support.cli import in_process
from tests.support.iceberg_oracle import FrozenRows
from tests.support.tables import create


def _files(spark, ref: TableRef) -> dict[int, set[str]]:  # type: ignore[no-untyped-def]
    """Every live file (data and delete) by region."""
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    out: dict[int, set[str]] = {}
    for row in spark.sql(f"SELECT partition.region region, file_path FROM {ref.spark_name}.files").collect():
        out.setdefault(row.region, set()).add(row.file_path)
    return out


def _table(spark, config: Config, partitioning: str = "region") -> TableRef:  # type: ignore[no-untyped-def]
    """Four regions, four commits each, then merge-on-read DELETE and UPDATE in every region."""
    ref = fresh_ref(config, "where")
    create(spark, ref, "id BIGINT, region INT, day DATE, v STRING", properties="'write.distribution-mode'='none'")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD {partitioning}")
    for commit in range(4):
        spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, CAST(id % 4 AS INT), date_add(DATE'2026-11-01', CAST(id % 3 AS INT)), "
                  f"concat('v', id) FROM range({commit * 400}, {(commit + 1) * 400})")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 7 = 0")
    spark.sql(f"UPDATE {ref.spark_name} SET v = 'u' WHERE id % 11 = 0")
    return ref


def test_merge_where_rewrites_only_the_partitions_the_predicate_may_touch(spark, config: Config, tmp_path: Path) -> None:
    ref = _table(spark, config)
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    before = _files(spark, ref)

    outcome = run_job(config, ref, "merge", {"where": "region IN (1, 2) AND day >= '2026-11-01'"}, verify=True)

    assert outcome.status == COMMITTED and outcome.content_verified, outcome.error
    after = _files(spark, ref)
    assert after[0] == before[0] and after[3] == before[3]  # not a file of regions 0 and 3 moved
    for region in (1, 2):
        assert not after[region] & before[region]  # each of their files rewritten, their deletes gone
    deletes = {r.region for r in spark.sql(f"SELECT partition.region region FROM {ref.spark_name}.delete_files").collect()}
    assert deletes == {0, 3}
    frozen.assert_same()


def test_compact_where_on_a_column_no_partition_comes_from_takes_every_partition(spark, config: Config, tmp_path: Path) -> None:
    ref = _table(spark, config)
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    before = _files(spark, ref)

    narrowed = run_job(config, ref, "compact", {"where": "region = 3", "min_input_files": 2}, verify=True)
    assert narrowed.status == COMMITTED and narrowed.content_verified, narrowed.error
    middle = _files(spark, ref)
    assert all(middle[r] == before[r] for r in (0, 1, 2)) and middle[3] != before[3]
    frozen.assert_same()

    everywhere = run_job(config, ref, "compact", {"where": "id > 100", "min_input_files": 2}, verify=True)  # id is no partition's source
    assert everywhere.status == COMMITTED, everywhere.error
    after = _files(spark, ref)
    assert all(after[r] != middle[r] for r in (0, 1, 2))
    frozen.assert_same()


def test_a_predicate_no_partition_matches_is_nothing_to_do(spark, config: Config) -> None:
    ref = _table(spark, config)

    outcome = run_job(config, ref, "merge", {"where": "region = 9"})

    assert outcome.status == NOOP and "where region = 9" in (outcome.reason or ""), outcome


def test_a_bad_predicate_is_refused_in_one_line(spark, config: Config, capsys: pytest.CaptureFixture[str]) -> None:
    ref = _table(spark, config)
    for predicate, words in (("region = = 3", "does not parse"), ("colour = 'red'", "colour")):
        code, out, err = in_process(capsys, "merge", str(ref), "--where", predicate)
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and words in lines[0] and "Traceback" not in out + err, (code, out, err)


def test_a_policy_predicate_one_table_cannot_take_is_that_tables_problem_not_the_cycles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No Spark: a fleet of two tables, one given a column the policy's predicate names."""
    monkeypatch.setenv("ICEMAINT_HOME", str(tmp_path / "home"))
    fleet_config = parse_config({}, source="tests", base_dir=tmp_path / "home")
    make_fleet(get_catalog(fleet_config, fleet_config.default_catalog), fleet_config.default_catalog, FleetOptions(tables=2, commits=3, rows=20))
    with_colour = load_table(fleet_config, TableRef(fleet_config.default_catalog, ("fleet",), "t00001"))
    with with_colour.update_schema() as update:
        update.add_column("colour", StringType())
    folder = tmp_path / "policies"
    folder.mkdir()
    (folder / "p.yaml").write_text("name: p\njobs:\n  compact:\n    when: {data_files: 1}\n    min_input_files: 2\n    where: \"colour = 'red'\"\n")

    evaluation = evaluate(fleet_config, open_state(fleet_config), None, load_policies(folder))

    assert list(evaluation.problems) == ["local.fleet.t00000"] and "colour" in evaluation.problems["local.fleet.t00000"]
    assert [(d.table, d.job, d.due) for d in evaluation.decisions] == [("local.fleet.t00001", "compact", True)]
