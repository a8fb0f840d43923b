"""The model's rows as a Parquet file (`workload cdc --model-out`): the row-level oracle of a
workload run in another process, e.g. the Flink writer's, for a test or a benchmark to
compare with the table (EXCEPT ALL both ways) without replaying the workload."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from maintenance.workload.model import CdcModel
from maintenance.workload.shape import COLUMN_NAMES

# The table's column types (shape.COLUMNS) as Arrow's, so Spark reads the file with the table's schema.
ARROW_SCHEMA = pa.schema([
    pa.field("id", pa.int64(), nullable=False),
    pa.field("region", pa.int32(), nullable=False),
    pa.field("customer", pa.string()),
    pa.field("amount", pa.decimal128(12, 2)),
    pa.field("status", pa.string()),
    pa.field("updated_at", pa.timestamp("us", tz="UTC")),
    pa.field("version", pa.int32()),
])


def write_model_rows(model: CdcModel, path: Path) -> int:
    """Write the model's live rows to `path` (one Parquet file); returns how many."""
    rows = list(model.rows.values())
    columns = list(zip(*rows)) if rows else [()] * len(COLUMN_NAMES)
    frame = pa.table({name: list(values) for name, values in zip(COLUMN_NAMES, columns)}, schema=ARROW_SCHEMA)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(frame, path)
    return len(rows)
