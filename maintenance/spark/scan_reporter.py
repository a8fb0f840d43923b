"""What the readers' scan reporter did in this JVM (`readers/java/ScanReportSender.java`):
the reports it was handed, the time that took the threads planning scans, and how many the
daemon took and how many were dropped. Only a
reader's session has the reporter's jar (`workload/readers.py`); icemaint's own never does."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from maintenance.readers.reporter_jar import CLASS_NAME
from maintenance.spark.jvm import jvm

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True)
class ReporterCounts:
    reports: int  # handed to `report`
    report_ms: float  # what `report` took them
    sent: int  # taken by the daemon
    dropped: int  # not: the queue full, the daemon down or refusing


def reporter_counts(spark: SparkSession) -> ReporterCounts:
    """The reporter's counts so far, over the JVM."""
    sender = jvm(spark)
    for part in CLASS_NAME.split("."):
        sender = getattr(sender, part)
    return ReporterCounts(int(sender.reported()), int(sender.reportNanos()) / 1e6, int(sender.sent()), int(sender.dropped()))
