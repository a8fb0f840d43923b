"""Comparisons the tests share: the model's rows against what Spark reads."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from pyiceberg.manifest import DataFileContent

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.workload.model import CdcModel
from tests.support.file_checks import local

_UNIX_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)

NormalRow = tuple[Any, ...]


def model_rows(model: CdcModel) -> list[NormalRow]:
    return sorted(_normal(row) for row in model.rows.values())


def spark_rows(spark: Any, ref: TableRef) -> list[NormalRow]:
    """The table's rows through Spark, every delete applied, in the model's normal form."""
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    rows = spark.sql(
        f"SELECT id, region, customer, cast(amount as string) amount, status, unix_micros(updated_at) ts, version FROM {ref.spark_name}"
    ).collect()
    return sorted(tuple(r) for r in rows)


def _normal(row: tuple[Any, ...]) -> NormalRow:
    row_id, region, customer, amount, status, updated_at, version = row
    micros = (updated_at - _UNIX_EPOCH) // _MICRO
    return (row_id, region, customer, f"{amount:.2f}", status, micros, version)



_MICRO = timedelta(microseconds=1)


class DeleteLiveFileAt:
    """A run's progress callback that deletes one data file the table's current snapshot
    reads when the run first reports `stage`: a referenced file going missing mid-run, for
    the tests of EXPIRE's and ORPHANS' verification."""

    def __init__(self, config: Config, ref: TableRef, stage: str, *, manifest: bool = False) -> None:
        """With `manifest`, one of the snapshot's manifests goes instead of a data file."""
        self.config, self.ref, self.stage, self.manifest = config, ref, stage, manifest
        self.deleted: str | None = None

    def __call__(self, stage: str, **counts: int) -> None:
        if stage != self.stage or self.deleted is not None:
            return
        table = load_table(self.config, self.ref)
        snapshot = table.current_snapshot()
        assert snapshot is not None
        if self.manifest:
            self.deleted = min(m.manifest_path for m in snapshot.manifests(table.io))
        else:
            self.deleted = min(
                e.data_file.file_path
                for m in snapshot.manifests(table.io)
                for e in m.fetch_manifest_entry(table.io, discard_deleted=True)
                if e.data_file.content == DataFileContent.DATA
            )
        local(self.deleted).unlink()
