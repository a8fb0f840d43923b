"""The rebase: a writer's position deletes (v2) or DVs (v3), committed while MERGE or COMPACT
rewrites the files they name, carried over to the files the rewrite wrote, in its commit.

The oracle is a model of the writer's effect on the generator's model (the deleted keys
gone, the updated key changed), compared with the table as Spark reads it through Iceberg.
"""

from __future__ import annotations

from typing import Any

import pytest

from maintenance.catalogs import TableRef
from maintenance.config import Config
from maintenance.run.outcome import COMMITTED
from maintenance.run.runner import run_job
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory
from tests.support.helpers import NormalRow, model_rows, spark_rows


def live_data_files(spark: Any, ref: TableRef) -> set[str]:
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    return {r.file_path for r in spark.sql(f"SELECT file_path FROM {ref.spark_name}.data_files").collect()}


def deleted_data_files(spark: Any, ref: TableRef) -> set[str]:
    """The data files some live position delete or DV names."""
    return {r.file_path for r in spark.sql(f"SELECT DISTINCT file_path FROM {ref.spark_name}.position_deletes").collect()}


@pytest.mark.parametrize(("job", "format_version", "options"), [("merge", 2, {}), ("merge", 3, {}), ("compact", 2, {"rewrite_all": True})],
                         ids=["merge-v2", "merge-v3-dv", "compact-v2"])
def test_a_writers_deletes_committed_during_a_rewrite_are_carried_over_to_its_files(
        spark: Any, config: Config, cdc_table: CdcFactory, job: str, format_version: int, options: dict[str, Any]) -> None:
    ref, _, model = cdc_table(shape=TableShape("identity", 2, "single"), rows=1600, commits=4, update_ratio=0.2, format_version=format_version)
    keys = [key[0] for key in sorted(model.rows)]
    victims, updated = keys[3:40:9], keys[50]
    expected: list[NormalRow] = sorted(
        (row[:4] + ("late",) + row[5:]) if row[0] == updated else row for row in model_rows(model) if row[0] not in victims
    )
    row_ids = lineage(spark, ref) if format_version >= 3 else {}
    wrote: list[str] = []

    def writer(stage: str, **_counts: int) -> None:
        if stage == "groups written" and not wrote:  # after a group is written, before its commit
            spark.sql(f"DELETE FROM {ref.spark_name} WHERE id IN ({', '.join(map(str, victims))})")
            spark.sql(f"UPDATE {ref.spark_name} SET status = 'late' WHERE id = {updated}")
            wrote.append(stage)

    outcome = run_job(config, ref, job, options, progress=writer, verify=True)

    assert wrote and outcome.status == COMMITTED and outcome.content_verified, outcome.error
    counters = outcome.counters
    assert "groups_refused" not in counters and counters["groups_rewritten"] == counters["groups_planned"] == 2
    assert counters["rows_rebased"] == len(victims) + 1  # the UPDATE deleted the old version of its row too
    assert spark_rows(spark, ref) == expected
    live = live_data_files(spark, ref)
    rebased_onto = deleted_data_files(spark, ref) & live
    assert rebased_onto and counters["deletes_rebased"] == len(rebased_onto)
    if row_ids:  # the very rows deleted, by row id: every other row keeps its id (the update's too)
        assert lineage(spark, ref) == {key: row_id for key, row_id in row_ids.items() if key not in victims}


def lineage(spark: Any, ref: TableRef) -> dict[int, int]:
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    return {r.id: r._row_id for r in spark.sql(f"SELECT id, _row_id FROM {ref.spark_name}").collect()}


def test_a_delete_committed_after_the_rebase_read_the_table_is_rebased_on_the_next_attempt(
        spark: Any, config: Config, cdc_table: CdcFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer commits again between the rebase's reading and the staging: Iceberg refuses
    the staged commit (validated from what the rebase read), and the next attempt carries over both."""
    from maintenance.jobs.file_groups.rebase import Rebaser

    ref, _, model = cdc_table(shape=TableShape("identity", 2, "single"), rows=1600, commits=4, update_ratio=0.2)
    keys = [key[0] for key in sorted(model.rows)]
    first, second = keys[5:30:6], keys[31:60:7]
    real_refresh = Rebaser.refresh
    calls: list[int] = []

    def refresh_then_writer_deletes(self: Rebaser) -> Any:
        rebased = real_refresh(self)
        calls.append(rebased.rows if rebased else 0)
        if len(calls) == 1:
            spark.sql(f"DELETE FROM {ref.spark_name} WHERE id IN ({', '.join(map(str, second))})")
        return rebased

    def writer(stage: str, **_counts: int) -> None:
        if stage == "groups written" and not calls:
            spark.sql(f"DELETE FROM {ref.spark_name} WHERE id IN ({', '.join(map(str, first))})")

    monkeypatch.setattr(Rebaser, "refresh", refresh_then_writer_deletes)
    outcome = run_job(config, ref, "merge", progress=writer, verify=True)

    assert outcome.status == COMMITTED and outcome.content_verified, outcome.error
    assert calls == [len(first), len(first) + len(second)]
    assert outcome.counters["rows_rebased"] == len(first) + len(second) and "groups_refused" not in outcome.counters
    assert spark_rows(spark, ref) == [row for row in model_rows(model) if row[0] not in first + second]


@pytest.mark.parametrize("format_version", [2, 3])
def test_a_delete_committed_while_the_change_is_verified_is_carried_over_when_it_is_applied_again(
        spark: Any, config: Config, cdc_table: CdcFactory, format_version: int) -> None:
    """The writer commits while the staged change is verified: main has moved, so the change
    is built again on the newest state, and that build carries the new deletes over too (on
    v3 the written file's one DV then holds both writers' positions)."""
    ref, _, model = cdc_table(shape=TableShape("identity", 2, "single"), rows=1600, commits=4, update_ratio=0.2, format_version=format_version)
    keys = [key[0] for key in sorted(model.rows)]
    first, second = keys[2:40:5], keys[41:80:6]
    stages: list[str] = []

    def writer(stage: str, **_counts: int) -> None:
        if stage in ("groups written", "staged") and stage not in stages:
            spark.sql(f"DELETE FROM {ref.spark_name} WHERE id IN ({', '.join(map(str, first if stage == 'groups written' else second))})")
            stages.append(stage)

    outcome = run_job(config, ref, "merge", progress=writer, verify=True)

    assert stages == ["groups written", "staged"] and outcome.status == COMMITTED and outcome.content_verified, outcome.error
    assert outcome.counters["rows_rebased"] == len(first) + len(second) and "groups_refused" not in outcome.counters
    assert spark_rows(spark, ref) == [row for row in model_rows(model) if row[0] not in first + second]
    live = live_data_files(spark, ref)
    assert len(deleted_data_files(spark, ref) & live) == outcome.counters["deletes_rebased"]
