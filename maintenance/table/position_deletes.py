"""Position delete files: their reserved field ids (Iceberg spec, "Position Delete Files")."""

from __future__ import annotations

import pyarrow as pa

DELETE_FILE_PATH_ID = 2147483546
DELETE_POS_ID = 2147483545
POSITION_DELETE_SCHEMA = pa.schema(
    [
        pa.field("file_path", pa.string(), nullable=False, metadata={b"PARQUET:field_id": str(DELETE_FILE_PATH_ID).encode()}),
        pa.field("pos", pa.int64(), nullable=False, metadata={b"PARQUET:field_id": str(DELETE_POS_ID).encode()}),
    ]
)
