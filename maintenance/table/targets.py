"""The file sizes a table asks its writers for (Iceberg's properties and defaults), read in one place."""

from __future__ import annotations

from collections.abc import Mapping

DATA_TARGET_PROPERTY = "write.target-file-size-bytes"
DATA_TARGET_DEFAULT = 512 * 1024 * 1024
DELETE_TARGET_PROPERTY = "write.delete.target-file-size-bytes"
DELETE_TARGET_DEFAULT = 64 * 1024 * 1024


def data_file_target(properties: Mapping[str, str]) -> int:
    return int(properties.get(DATA_TARGET_PROPERTY, DATA_TARGET_DEFAULT))


def delete_file_target(properties: Mapping[str, str]) -> int:
    return int(properties.get(DELETE_TARGET_PROPERTY, DELETE_TARGET_DEFAULT))
