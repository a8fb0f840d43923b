"""What a run cost in compute: `compute_s` in its result and its record (issue 59).

A run's compute-seconds are CPU seconds: those of its Spark tasks (every job of its job
group, on local or remote executors: Spark's own task metrics, `spark/task_cpu.py`), of the
JVM thread its calls run on (Iceberg's planning, its commits), and of its own Python thread
(pyiceberg's planning, the plan). What a budget counts, and what the calibration of predicted
costs learns from (`schedule/value.py`).

Why CPU seconds and not the run's wall seconds: on a machine whose cores several runs and
processes share, a run's wall seconds are mostly the others' load (the budget benchmark's
neighbouring runs of one job on tables alike took 0.9 to 3.9 s), which no prediction from the
job's own data can know; its CPU seconds are what its data cost. Not counted: Spark's start
(a process's first run; as `job_seconds` leaves it out), the JVM's garbage collection and
compiler threads, and pools a run's threads hand work to outside Spark's tasks (Iceberg's
worker pool reading many manifests, pyiceberg's readers): a run's own threads wait for them,
so a cost that leaves them out errs low, by the same part for runs alike.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from maintenance.spark import task_cpu

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class ComputeClock:
    """A run's compute-seconds (module docstring), made on the run's own thread."""

    def __init__(self) -> None:
        self._owner = threading.get_ident()
        self._python_started = time.thread_time()
        self._jvm_started: float | None = None

    def spark_reached(self, spark: SparkSession) -> None:
        """Spark is the run's from now on: its tasks are counted (by its job group), and, when
        this is the run's own thread, so is the JVM thread its calls run on."""
        task_cpu.watch(spark)
        if threading.get_ident() == self._owner and self._jvm_started is None:
            self._jvm_started = task_cpu.thread_cpu_s(spark)

    def seconds(self, spark: SparkSession | None, group: str) -> float | None:
        """The run's compute-seconds, at its end, on its own thread; `spark`: the run's, if it
        reached Spark. None where Spark could not say what the run's tasks cost."""
        assert threading.get_ident() == self._owner, "a run's own thread ends it"
        total = time.thread_time() - self._python_started
        if spark is None:
            return total
        tasks = task_cpu.group_cpu_s(spark, group)
        if tasks is None:
            return None
        jvm_now = task_cpu.thread_cpu_s(spark) if self._jvm_started is not None else None
        jvm = jvm_now - self._jvm_started if jvm_now is not None and self._jvm_started is not None else 0.0
        return total + tasks + max(jvm, 0.0)
