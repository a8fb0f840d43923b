"""The CDC generator: what Spark reads back is exactly the model, for every table shape."""

from __future__ import annotations

import pytest

from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory
from tests.support.helpers import model_rows, spark_rows

SHAPES = [
    TableShape("identity", 4, "single"),
    TableShape("bucket", 3, "single"),
    TableShape("none", 4, "single"),
    TableShape("identity", 3, "composite"),
    TableShape("bucket", 4, "composite"),
    TableShape("none", 3, "composite"),
]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.encode())
def test_spark_reads_exactly_the_model(spark, cdc_table: CdcFactory, shape: TableShape) -> None:
    ref, result, model = cdc_table(shape=shape, rows=2400, commits=6, update_ratio=0.2, delete_ratio=0.05)

    assert result.expected_rows == len(model.rows)
    assert spark_rows(spark, ref) == model_rows(model)
    # What a CDC sink writes: equality deletes for keys from earlier commits,
    # position deletes for keys rewritten within a commit.
    assert result.equality_delete_files >= 5
    assert result.position_delete_files >= 1
    assert result.updates > 0 and result.deletes > 0


def test_each_commit_shares_one_sequence_number(spark, cdc_table: CdcFactory) -> None:
    ref, result, _ = cdc_table(rows=1500, commits=5)

    entries = spark.sql(
        f"SELECT snapshot_id, collect_set(sequence_number) seqs, collect_set(data_file.content) contents FROM {ref.spark_name}.entries GROUP BY snapshot_id"
    ).collect()
    assert len(entries) == result.commits
    assert all(len(e.seqs) == 1 for e in entries)
    assert sorted(e.seqs[0] for e in entries) == list(range(1, result.commits + 1))
    later = [e for e in entries if e.seqs[0] > 1]
    assert all(set(e.contents) == {0, 1, 2} for e in later)  # data, position and equality deletes


def test_equality_deletes_of_composite_keys_match_all_columns(spark, cdc_table: CdcFactory) -> None:
    """(region, id) keys repeat ids across regions: deleting one must not delete its namesakes."""
    ref, _, model = cdc_table(shape=TableShape("none", 3, "composite"), rows=900, commits=3, update_ratio=0.3, delete_ratio=0.1)

    ids = [key[1] for key in model.rows]
    assert len(ids) > len(set(ids))  # the same id lives in several regions
    assert spark_rows(spark, ref) == model_rows(model)


def test_extending_a_table_keeps_its_shape_and_rows(spark, cdc_table: CdcFactory) -> None:
    ref, first, _ = cdc_table(shape=TableShape("bucket", 2, "single"), rows=800, commits=2, seed=7)
    _, second, model = cdc_table(ref=ref, rows=600, commits=3, seed=8)

    assert not second.created
    assert second.shape == first.shape
    assert spark_rows(spark, ref) == model_rows(model)


def test_same_seed_same_workload(spark, cdc_table: CdcFactory) -> None:
    _, _, model_a = cdc_table(rows=700, commits=3, seed=11)
    _, _, model_b = cdc_table(rows=700, commits=3, seed=11)
    _, _, model_c = cdc_table(rows=700, commits=3, seed=12)

    assert model_rows(model_a) == model_rows(model_b)
    assert model_rows(model_a) != model_rows(model_c)
