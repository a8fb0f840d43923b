"""CPU seconds a run spent in the JVM: the one Python door to `java/TaskCpuByGroup.java`.

Two parts, both CPU time and not wall time (what a run costs in compute, `run/compute.py`):
its Spark tasks', summed per job group by a listener registered once per Spark context
(`watch`), and the CPU time of the JVM thread a Python thread's calls run on (PySpark pins
one JVM thread to each Python thread), which is where Iceberg plans and commits for the run.
Every answer is None where the JVM cannot say; never an error: a run's cost is reported, it
does not decide the run.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import structlog

from maintenance.spark.java_helpers import new_helper
from maintenance.spark.jvm import JavaObject

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

WAIT_S = 5.0  # at most this long for Spark's listener events to catch up at a run's end
log = structlog.get_logger(__name__)
_lock = threading.Lock()
_current: tuple[str, object, JavaObject] | None = None  # the Spark context's application id, its gateway, its listener


def watch(spark: SparkSession) -> None:
    """Count the CPU time of this Spark context's tasks by job group from now on (once per
    context; a run calls it before its first Spark job)."""
    _listener(spark)


def _listener(spark: SparkSession) -> JavaObject:
    global _current
    context = spark.sparkContext
    gateway = context._gateway  # type: ignore[attr-defined]
    application = str(context.applicationId)
    with _lock:  # one listener per context: two would count every task twice
        if _current is None or _current[0] != application or _current[1] is not gateway:
            listener = new_helper(spark, "TaskCpuByGroup")
            context._jsc.sc().addSparkListener(listener)  # type: ignore[attr-defined]
            _current = (application, gateway, listener)
        return _current[2]


def group_cpu_s(spark: SparkSession, group: str) -> float | None:
    """CPU seconds of the tasks of `group`'s Spark jobs since `watch`, forgotten once taken;
    None where Spark's events did not catch up within `WAIT_S` or the JVM did not answer."""
    try:
        nanos = int(_listener(spark).take(spark.sparkContext._jsc.sc(), group, int(WAIT_S * 1000)))  # type: ignore[attr-defined]
    except Exception as exc:  # noqa: BLE001 (a cost unknown, not a failed run)
        log.debug("tasks' CPU time unknown", error=type(exc).__name__)
        return None
    return nanos / 1e9 if nanos >= 0 else None


def thread_cpu_s(spark: SparkSession) -> float | None:
    """CPU seconds so far of the JVM thread this Python thread's calls run on."""
    try:
        nanos = int(_listener(spark).threadCpuNanos())
    except Exception as exc:  # noqa: BLE001 (as above)
        log.debug("thread CPU time unknown", error=type(exc).__name__)
        return None
    return nanos / 1e9 if nanos >= 0 else None
