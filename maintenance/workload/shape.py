"""The shapes of generated CDC tables: key, partitioning, schema.

A shape is stored in the table's properties when the table is created, so extending a
table later writes rows of the same shape whatever flags the new call passes.
"""

from __future__ import annotations

from dataclasses import dataclass

from maintenance.errors import UsageError

PARTITIONINGS = ("identity", "bucket", "none")
KEYS = ("single", "composite")
SHAPE_PROPERTY = "icemaint.workload.shape"

# Column name, Spark SQL type, nullable. Field ids are assigned by Iceberg in this order.
COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("id", "BIGINT", False),
    ("region", "INT", False),
    ("customer", "STRING", True),
    ("amount", "DECIMAL(12,2)", True),
    ("status", "STRING", True),
    ("updated_at", "TIMESTAMP", True),
    ("version", "INT", True),
)
COLUMN_NAMES = tuple(name for name, _, _ in COLUMNS)


@dataclass(frozen=True)
class TableShape:
    """How a generated table is keyed and partitioned."""

    partitioning: str = "identity"
    partitions: int = 4
    key: str = "single"

    def __post_init__(self) -> None:
        if self.partitioning not in PARTITIONINGS:
            raise UsageError(f"partitioning must be one of {', '.join(PARTITIONINGS)}")
        if self.key not in KEYS:
            raise UsageError(f"key must be one of {', '.join(KEYS)}")
        if self.partitions < 1:
            raise UsageError("--partitions must be at least 1")

    @property
    def key_columns(self) -> tuple[str, ...]:
        """Single: `id` (its region is derived from it). Composite: ids repeat across regions."""
        return ("region", "id") if self.key == "composite" else ("id",)

    @property
    def partitioned(self) -> bool:
        return self.partitioning != "none"

    def partition_clause(self) -> str:
        if self.partitioning == "identity":
            return "PARTITIONED BY (region)"
        if self.partitioning == "bucket":
            return f"PARTITIONED BY (bucket({self.partitions}, id))"
        return ""

    def create_table_sql(self, spark_name: str, format_version: int = 2) -> str:
        columns = ", ".join(f"{name} {sql_type}{'' if nullable else ' NOT NULL'}" for name, sql_type, nullable in COLUMNS)
        properties = {
            "format-version": str(format_version),
            "write.delete.mode": "merge-on-read",
            "write.update.mode": "merge-on-read",
            "write.merge.mode": "merge-on-read",
            SHAPE_PROPERTY: self.encode(),
        }
        props = ", ".join(f"'{k}'='{v}'" for k, v in properties.items())
        return f"CREATE TABLE {spark_name} ({columns}) USING iceberg {self.partition_clause()} TBLPROPERTIES ({props})"

    def encode(self) -> str:
        return f"{self.partitioning}:{self.partitions}:{self.key}"

    @classmethod
    def decode(cls, text: str) -> TableShape:
        try:
            partitioning, partitions, key = text.split(":")
            return cls(partitioning=partitioning, partitions=int(partitions), key=key)
        except ValueError:
            raise UsageError(f"table property {SHAPE_PROPERTY}='{text}' is not a workload shape") from None
