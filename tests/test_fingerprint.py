"""The content fingerprint: equal for the same rows however stored, different for any change."""

from __future__ import annotations

from maintenance.fingerprint import content_fingerprint
from tests.conftest import CdcFactory, fresh_ref


def test_same_rows_in_different_layouts_agree(spark, config, cdc_table: CdcFactory) -> None:
    ref, result, _ = cdc_table(rows=2000, commits=5)
    # The same rows without any delete file, re-partitioned into many small files, reversed.
    copy = fresh_ref(config, "copy")
    spark.sql(f"CREATE TABLE {copy.spark_name} USING iceberg PARTITIONED BY (status) AS SELECT * FROM {ref.spark_name} ORDER BY id DESC")

    original = content_fingerprint(spark, ref)
    rewritten = content_fingerprint(spark, copy)
    files = spark.sql(f"SELECT count(*) n FROM {copy.spark_name}.files").collect()[0].n
    deletes = spark.sql(f"SELECT count(*) n FROM {ref.spark_name}.delete_files").collect()[0].n

    assert deletes > 0 and files > 0
    assert original.rows == result.expected_rows
    assert original.same_content(rewritten)


def test_one_changed_row_changes_the_fingerprint(spark, config, cdc_table: CdcFactory) -> None:
    ref, _, model = cdc_table(rows=1000, commits=3)
    copy = fresh_ref(config, "copy")
    spark.sql(f"CREATE TABLE {copy.spark_name} USING iceberg TBLPROPERTIES ('format-version'='2') AS SELECT * FROM {ref.spark_name}")
    before = content_fingerprint(spark, copy)
    assert before.same_content(content_fingerprint(spark, ref))

    some_id = next(iter(model.rows))[0]
    spark.sql(f"UPDATE {copy.spark_name} SET amount = amount + 0.01 WHERE id = {some_id}")
    after = content_fingerprint(spark, copy)

    assert after.rows == before.rows
    assert after.fingerprint != before.fingerprint


def test_duplicate_rows_count(spark, config) -> None:
    """A sum, not a set: a duplicated row changes rows and fingerprint."""
    one, two = fresh_ref(config, "dup"), fresh_ref(config, "dup")
    for ref, values in ((one, "(1, 'a')"), (two, "(1, 'a'), (1, 'a')")):
        spark.sql(f"CREATE TABLE {ref.spark_name} (id BIGINT, v STRING) USING iceberg")
        spark.sql(f"INSERT INTO {ref.spark_name} VALUES {values}")
    a, b = content_fingerprint(spark, one), content_fingerprint(spark, two)
    assert (a.rows, b.rows) == (1, 2)
    assert int(b.fingerprint) == 2 * int(a.fingerprint)


def test_fingerprint_at_an_older_snapshot(spark, config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(rows=600, commits=2)
    first = spark.sql(f"SELECT snapshot_id FROM {ref.spark_name}.snapshots ORDER BY committed_at LIMIT 1").collect()[0].snapshot_id
    expected = spark.sql(f"SELECT count(*) n FROM {ref.spark_name} VERSION AS OF {first}").collect()[0].n

    old = content_fingerprint(spark, ref, first)
    assert old.snapshot_id == first and old.rows == expected
    assert not old.same_content(content_fingerprint(spark, ref))


def test_empty_table_fingerprint_is_zero(spark, config) -> None:
    ref = fresh_ref(config, "empty")
    spark.sql(f"CREATE TABLE {ref.spark_name} (id BIGINT) USING iceberg")
    result = content_fingerprint(spark, ref)
    assert (result.rows, result.fingerprint) == (0, "0")
