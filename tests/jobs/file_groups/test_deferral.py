"""Hot partitions wait: MERGE and COMPACT leave the partitions that a writer's merge-on-read
statements reached often within `defer_hot_window`, for at most `defer_hot_at_most`.

The writer is Spark itself (merge-on-read DELETE: position deletes on v2, DVs on v3); the
oracle for which partitions are left is the set of data files Spark lists per partition
before and after the run, and the content is the generator's model minus the writer's
deletes, as Spark reads the table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from maintenance.catalogs import TableRef
from maintenance.config import Config
from maintenance.run.outcome import COMMITTED
from maintenance.run.runner import run_job
from maintenance.ui.pages import StatusPages
from maintenance.ui.status import StatusCache
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory, fresh_ref
from tests.support.helpers import model_rows, spark_rows
from tests.support.iceberg_oracle import FrozenRows
from tests.support.tables import create


def files_by_region(spark: Any, ref: TableRef) -> dict[int, set[str]]:
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    out: dict[int, set[str]] = {}
    for r in spark.sql(f"SELECT partition.region AS region, file_path FROM {ref.spark_name}.data_files").collect():
        out.setdefault(r.region, set()).add(r.file_path)
    return out


@pytest.mark.parametrize("format_version", [2, 3])
def test_a_partition_a_writer_deletes_from_often_waits_and_the_others_are_merged(
        spark: Any, config: Config, cdc_table: CdcFactory, format_version: int) -> None:
    ref, _, model = cdc_table(shape=TableShape("identity", 3, "single"), rows=1800, commits=4, update_ratio=0.2, format_version=format_version)
    rows = model_rows(model)
    regions = sorted({row[1] for row in rows})
    hot, warm = regions[0], regions[1]
    in_region = {region: [row[0] for row in rows if row[1] == region] for region in regions}
    victims = [in_region[hot][3], in_region[hot][17], in_region[warm][5]]
    if format_version == 2:  # icemaint's own position deletes (CONVERT's, one commit per sequence number) make no partition hot
        assert run_job(config, ref, "convert", verify=True).status == COMMITTED
    for key in victims:  # two writer commits into the hot partition, one into the warm one
        spark.sql(f"DELETE FROM {ref.spark_name} WHERE id = {key}")
    expected = sorted(row for row in rows if row[0] not in victims)
    before = files_by_region(spark, ref)

    deferring = run_job(config, ref, "merge", {"defer_hot_window": "10m"}, verify=True)

    assert deferring.status == COMMITTED and deferring.content_verified, deferring.error
    assert deferring.counters["partitions_deferred_hot"] == 1
    assert deferring.counters["hot_partitions_deferred"] == [f"region={hot}"]
    after = files_by_region(spark, ref)
    assert after[hot] == before[hot]  # left exactly as it was
    assert all(not (after[region] & before[region]) for region in regions if region != hot)  # the others were merged
    assert spark_rows(spark, ref) == expected

    page = StatusPages(config, StatusCache(config)).handle("/table", urlencode({"name": str(ref)})).body.decode()
    section = page.split("<h2>Hot partitions deferred</h2>", 1)[1].split("<h2>", 1)[0]
    assert f"region={hot}" in section and f"region={warm}" not in section

    waited = run_job(config, ref, "merge", {"defer_hot_window": "10m", "defer_hot_at_most": "0s"}, verify=True)

    assert waited.status == COMMITTED and waited.content_verified, waited.error
    assert waited.counters["partitions_deferred_hot"] == 0 and "hot_partitions_deferred" not in waited.counters
    assert not (files_by_region(spark, ref)[hot] & before[hot])
    assert spark_rows(spark, ref) == expected


def test_compact_defers_a_hot_partition_and_a_dry_run_names_it(spark: Any, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, model = cdc_table(shape=TableShape("identity", 2, "single"), rows=1200, commits=4, update_ratio=0.2)
    rows = model_rows(model)
    hot = min(row[1] for row in rows)
    keys = [row[0] for row in rows if row[1] == hot][:2]
    for key in keys:
        spark.sql(f"UPDATE {ref.spark_name} SET status = 'hot' WHERE id = {key}")
    options = {"rewrite_all": True, "defer_hot_window": "1h", "defer_hot_commits": 2}

    planned = run_job(config, ref, "compact", options, dry_run=True)
    assert planned.counters["hot_partitions_deferred"] == [f"region={hot}"] and planned.counters["partitions_planned"] == 1

    cooler = run_job(config, ref, "compact", {**options, "defer_hot_commits": 3}, dry_run=True)
    assert cooler.counters["partitions_deferred_hot"] == 0 and cooler.counters["partitions_planned"] == 2


def _files_by_partition(spark: Any, ref: TableRef) -> dict[tuple[int, str], set[str]]:
    """Data files per (spec id, partition as Spark prints it), as Spark lists them."""
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    out: dict[tuple[int, str], set[str]] = {}
    for r in spark.sql(f"SELECT spec_id, to_json(partition) AS p, file_path FROM {ref.spark_name}.data_files").collect():
        out.setdefault((r.spec_id, r.p), set()).add(r.file_path)
    return out


def test_a_spark_table_after_partition_evolution_defers_the_hot_partition_of_the_new_spec(spark: Any, config: Config, tmp_path: Path) -> None:
    """A table Spark created and wrote (no generator), partitioned by day, then by day and
    bucket(2, id): the writer deletes twice from one partition of the new spec (hot) and
    once from an old-spec file. MERGE leaves the hot partition's files exactly as they are,
    rewrites the old-spec file with its delete (into the new spec: some of its rows land in
    the hot partition, as files a `replace` adds, which no writer's validation counts), and
    the content is the frozen copy's."""
    ref = fresh_ref(config, "deferevo")
    create(spark, ref, "id BIGINT, day INT, note STRING", "'write.distribution-mode'='none'")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD day")
    for batch in range(3):
        spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, CAST(id % 3 AS INT), concat('old-', id) FROM range({batch * 300}, {(batch + 1) * 300})")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD bucket(2, id) AS id_bucket")
    for batch in range(3, 6):
        spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, CAST(id % 3 AS INT), concat('new-', id) FROM range({batch * 300}, {(batch + 1) * 300})")
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    new_rows = spark.sql(f"SELECT id, _spec_id, _partition FROM {ref.spark_name} WHERE id >= 900 AND day = 1 ORDER BY id").collect()
    bucket = new_rows[0]._partition.id_bucket
    hot_keys = [r.id for r in new_rows if r._partition.id_bucket == bucket][:2]
    old_key = 4  # day 1 of the first spec
    for key in [*hot_keys, old_key]:
        spark.sql(f"DELETE FROM {ref.spark_name} WHERE id = {key}")
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    before = _files_by_partition(spark, ref)
    hot = next(k for k in before if k[0] == new_rows[0]._spec_id and f'"id_bucket":{bucket}' in k[1] and '"day":1' in k[1])
    old = next(k for k in before if k[0] != hot[0] and '"day":1' in k[1])

    merged = run_job(config, ref, "merge", {"defer_hot_window": "10m"}, verify=True)

    assert merged.status == COMMITTED and merged.content_verified, merged.error
    assert merged.counters["hot_partitions_deferred"] == [f"day=1/id_bucket={bucket}"]
    after = _files_by_partition(spark, ref)
    assert before[hot] <= after[hot]  # every file left as it was (the old spec's rows of day 1 join them)
    assert not (before[old] & {f for files in after.values() for f in files})  # the old spec's file with a delete was rewritten
    frozen.assert_same()
    live_deletes = spark.sql(f"SELECT spec_id, to_json(partition) AS p FROM {ref.spark_name}.delete_files").collect()
    assert live_deletes and {(r.spec_id, r.p) for r in live_deletes} == {hot}  # only the hot partition's stay
