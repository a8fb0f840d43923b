"""Small real job bodies for the fencing tests: each effect goes through the fence."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from decimal import Decimal

import pyarrow as pa

from maintenance.catalogs import load_table
from maintenance.run.context import JobContext
from maintenance.workload.model import Batch, PartitionBatch
from maintenance.workload.shape import TableShape
from maintenance.workload.writer import BatchWriter, write_parquet


def append_marker_row(ctx: JobContext, row_id: int) -> int:
    """Commit one row (region 0) through the fenced table; returns the new snapshot id."""
    table = load_table(ctx.config, ctx.ref)
    ctx.table.claim()
    shape = TableShape("identity", 4, "single")
    writer = BatchWriter(ctx.spark, ctx.table.java, table.io, table.schema(), shape)
    row = (row_id, 0, "fencing", Decimal("1.00"), "new", datetime(2026, 1, 1, tzinfo=timezone.utc), 1)
    with ctx.table.commit_errors(f"append marker row {row_id}"):
        writer.commit(Batch(partitions={"region=0": PartitionBatch(rows=[row])}), label=f"marker-{row_id}", summary=ctx.fence.summary())
    ctx.table.java.refresh()
    return int(ctx.table.java.currentSnapshot().snapshotId())


def write_scratch_files(ctx: JobContext, count: int) -> list[str]:
    """Files under the table location that no snapshot references (a job's leftovers)."""
    table = load_table(ctx.config, ctx.ref)
    paths = []
    for _ in range(count):
        path = f"{table.location().rstrip('/')}/data/scratch-{uuid.uuid4().hex[:8]}.parquet"
        write_parquet(table.io, path, pa.table({"x": [1]}))
        paths.append(path)
    return paths
