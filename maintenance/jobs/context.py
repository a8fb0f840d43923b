"""What a job body gets: its table behind the fence, Spark, and its options."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from maintenance.catalogs import TableRef
from maintenance.config import Config
from maintenance.fencing import Fence
from maintenance.spark.fenced_table import FencedTable
from maintenance.spark.jvm import load_java_table
from maintenance.spark.session import get_spark

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass
class JobContext:
    config: Config
    ref: TableRef
    job: str
    run_id: str
    fence: Fence
    dry_run: bool = False
    options: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def spark(self) -> SparkSession:
        """Spark, with this run's job group, so a lost lease cancels exactly its Spark jobs."""
        session = get_spark(self.config)
        session.sparkContext.setJobGroup(self.run_id, f"icemaint {self.job} {self.ref}", interruptOnCancel=True)
        return session

    @cached_property
    def table(self) -> FencedTable:
        """The Iceberg table; every commit and deletion through it passes the fence."""
        return FencedTable(self.spark, load_java_table(self.spark, self.ref), self.fence)
