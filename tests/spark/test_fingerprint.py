"""The content fingerprint: equal for the same rows however stored, different for any change."""

from __future__ import annotations

import pytest

from maintenance.spark.fingerprint import content_fingerprint
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


def _fingerprint_of(spark, config, columns: str, values: str):  # type: ignore[no-untyped-def]
    ref = fresh_ref(config, "fpshape")
    spark.sql(f"CREATE TABLE {ref.spark_name} ({columns}) USING iceberg")
    spark.sql(f"INSERT INTO {ref.spark_name} SELECT {values}")
    return content_fingerprint(spark, ref)


@pytest.mark.parametrize(
    ("columns", "one", "other"),
    [
        # Spark's xxhash64 skips NULL arguments and NULL elements, and maps -0.0 to 0.0.
        ("a INT, b INT", "1, CAST(NULL AS INT)", "CAST(NULL AS INT), 1"),
        ("x DOUBLE", "CAST('-0.0' AS DOUBLE)", "CAST('0.0' AS DOUBLE)"),
        ("x FLOAT", "CAST('-0.0' AS FLOAT)", "CAST('0.0' AS FLOAT)"),
        ("xs ARRAY<INT>", "array(1, NULL)", "array(1)"),
        ("xs ARRAY<DOUBLE>", "array(CAST('-0.0' AS DOUBLE))", "array(0.0D)"),
        ("s STRUCT<a: INT, b: INT>", "named_struct('a', 1, 'b', CAST(NULL AS INT))", "named_struct('a', CAST(NULL AS INT), 'b', 1)"),
        ("s STRUCT<t: TIMESTAMP>", "named_struct('t', TIMESTAMP'2026-01-01 00:00:00.000001')", "named_struct('t', TIMESTAMP'2026-01-01 00:00:00.000002')"),
        ("m MAP<STRING, STRING>", "map('k', 'v')", "map('k', 'w')"),
        ("m MAP<STRING, INT>", "map('k', CAST(NULL AS INT))", "map('k', 0)"),
    ],
    ids=["null-position", "minus-zero", "minus-zero-float", "null-element", "nested-minus-zero", "null-field", "nested-micros", "map-value", "map-null"],
)
def test_values_spark_hashes_alike_fingerprint_apart(spark, config, columns: str, one: str, other: str) -> None:
    assert not _fingerprint_of(spark, config, columns, one).same_content(_fingerprint_of(spark, config, columns, other))


@pytest.mark.parametrize(
    ("columns", "one", "other"),
    [
        ("m MAP<STRING, INT>", "map('a', 1, 'b', 2)", "map('b', 2, 'a', 1)"),  # a map has no order
        ("x DOUBLE", "CAST('NaN' AS DOUBLE)", "CAST('NaN' AS DOUBLE) * -1"),  # SQL: every NaN is equal
        ("`a``b` INT, `c.d` STRING", "1, 'x'", "1, 'x'"),  # names that need quoting
    ],
    ids=["map-order", "nan", "quoted-names"],
)
def test_equal_values_fingerprint_alike(spark, config, columns: str, one: str, other: str) -> None:
    assert _fingerprint_of(spark, config, columns, one).same_content(_fingerprint_of(spark, config, columns, other))


@pytest.mark.parametrize("change", ["DROP COLUMN b", "ALTER COLUMN b FIRST", "ALTER COLUMN n TYPE BIGINT", "ADD COLUMN c STRING", "RENAME COLUMN b TO bb"])
def test_a_schema_change_alone_keeps_the_fingerprint(spark, config, change: str) -> None:
    """Snapshots read in their own schema are compared in the current one: an older
    snapshot's fingerprint is the same before and after a change without a commit, and
    equals the current state's."""
    ref = fresh_ref(config, "fpschema")
    spark.sql(f"CREATE TABLE {ref.spark_name} (id BIGINT, n INT, b STRING) USING iceberg")
    spark.sql(f"INSERT INTO {ref.spark_name} VALUES (1, 2, 'x'), (2, NULL, 'y')")
    if change.startswith("DROP"):  # dropping b changes content: compare with a table that never had it
        spark.sql(f"ALTER TABLE {ref.spark_name} {change}")
        snapshot = spark.sql(f"SELECT snapshot_id FROM {ref.spark_name}.snapshots").collect()[0].snapshot_id
        assert content_fingerprint(spark, ref, snapshot).same_content(_fingerprint_of(spark, config, "id BIGINT, n INT", "* FROM VALUES (1, 2), (2, NULL)"))
        return
    snapshot = spark.sql(f"SELECT snapshot_id FROM {ref.spark_name}.snapshots").collect()[0].snapshot_id
    spark.sql(f"ALTER TABLE {ref.spark_name} {change}")
    assert content_fingerprint(spark, ref, snapshot).same_content(content_fingerprint(spark, ref))
