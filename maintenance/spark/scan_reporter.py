"""What the readers' scan reporter did in this JVM (`readers/java/ScanReportSender.java`):
the reports it was handed and the time that took the threads planning scans. Only a
reader's session has the reporter's jar (`workload/readers.py`); icemaint's own never does."""

from __future__ import annotations

from typing import TYPE_CHECKING

from maintenance.readers.reporter_jar import CLASS_NAME
from maintenance.spark.jvm import jvm

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def reporter_counts(spark: SparkSession) -> tuple[int, float]:
    """(reports handed to the reporter, milliseconds its `report` took them), over the JVM."""
    sender = jvm(spark)
    for part in CLASS_NAME.split("."):
        sender = getattr(sender, part)
    return int(sender.reported()), int(sender.reportNanos()) / 1e6
