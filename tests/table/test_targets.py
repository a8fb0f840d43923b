"""What a table asks its writers for: the codec a rewrite asks Iceberg's writer for."""

from __future__ import annotations

from maintenance.table.targets import rewrite_parquet_codec


def test_a_rewrite_asks_for_zstd_only_where_neither_the_table_nor_the_session_names_a_codec() -> None:
    assert rewrite_parquet_codec({}, None) == "zstd"
    assert rewrite_parquet_codec({"write.format.default": "PARQUET"}, None) == "zstd"
    assert rewrite_parquet_codec({"write.parquet.compression-codec": "gzip"}, None) is None  # Iceberg applies the table's
    assert rewrite_parquet_codec({}, "snappy") is None  # the session's setting stands above the table's
    assert rewrite_parquet_codec({"write.format.default": "orc"}, None) is None  # ORC and Avro keep Iceberg's defaults
