"""Writing one small Parquet file through a table's FileIO (pyiceberg), never over an existing one."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.io import FileIO


def write_parquet(io: FileIO, path: str, table: pa.Table) -> None:
    with io.new_output(path).create(overwrite=False) as stream:
        pq.write_table(table, stream)
