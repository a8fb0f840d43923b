"""The file sizes a table asks its writers for (Iceberg's properties and defaults), read in one place."""

from __future__ import annotations

from collections.abc import Mapping

DATA_TARGET_PROPERTY = "write.target-file-size-bytes"
DATA_TARGET_DEFAULT = 512 * 1024 * 1024
DELETE_TARGET_PROPERTY = "write.delete.target-file-size-bytes"
DELETE_TARGET_DEFAULT = 64 * 1024 * 1024
PAGE_ROW_LIMIT_PROPERTY = "write.parquet.page-row-limit"
PAGE_ROW_LIMIT_DEFAULT = 20_000


def data_file_target(properties: Mapping[str, str]) -> int:
    return int(properties.get(DATA_TARGET_PROPERTY, DATA_TARGET_DEFAULT))


def delete_file_target(properties: Mapping[str, str]) -> int:
    return int(properties.get(DELETE_TARGET_PROPERTY, DELETE_TARGET_DEFAULT))


def parquet_page_row_limit(properties: Mapping[str, str]) -> int:
    """Rows per Parquet page: how many rows a writer holds uncompressed per column before
    it compresses them (what its measure of a file's size may be off by)."""
    return int(properties.get(PAGE_ROW_LIMIT_PROPERTY, PAGE_ROW_LIMIT_DEFAULT))
