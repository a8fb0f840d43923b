"""A run's compute-seconds (`run/compute.py`, `spark/task_cpu.py`) on the real Spark: its
own Spark jobs' CPU and its threads', not another run's, not time spent waiting; and a
real job's run reports and records them."""

from __future__ import annotations

import threading
import time
import uuid

from maintenance.config import Config
from maintenance.run.compute import ComputeClock
from maintenance.run.outcome import COMMITTED
from maintenance.run.runner import run_job
from maintenance.schedule.value import COMPUTE
from maintenance.spark import task_cpu
from maintenance.state.store import open_state
from tests.conftest import CdcFactory


def busy(spark, group: str, rows: int) -> None:  # type: ignore[no-untyped-def]
    """A Spark job of CPU work (hashing `rows` rows, in 2 tasks) in job group `group`."""
    spark.sparkContext.setJobGroup(group, group)
    spark.range(0, rows, 1, 2).selectExpr("sum(hash(sha2(cast(id as string), 256))) as h").collect()


def sleeping(spark, group: str, tasks: int, ms: int) -> None:  # type: ignore[no-untyped-def]
    """A Spark job whose `tasks` tasks each wait `ms` milliseconds and compute nothing."""
    spark.sparkContext.setJobGroup(group, group)
    spark.range(0, tasks, 1, tasks).selectExpr(f"reflect('java.lang.Thread', 'sleep', cast({ms} as bigint))").collect()


def burn_python(seconds: float) -> None:
    until = time.thread_time() + seconds
    while time.thread_time() < until:
        pass


def test_a_group_is_charged_its_own_tasks_cpu_and_not_their_waiting(spark) -> None:  # type: ignore[no-untyped-def]
    task_cpu.watch(spark)
    mine, other, idle = (f"compute-{name}-{uuid.uuid4().hex[:6]}" for name in ("mine", "other", "idle"))
    busy(spark, mine, 5_000_000)
    busy(spark, other, 100_000)
    began = time.monotonic()
    sleeping(spark, idle, 2, 1500)
    slept = time.monotonic() - began

    mine_s, other_s, idle_s = (task_cpu.group_cpu_s(spark, group) for group in (mine, other, idle))
    assert mine_s is not None and other_s is not None and idle_s is not None
    # Fifty times the rows, each group its own. Not fifty times the CPU: a task's fixed part
    # (deserializing, starting its iterator) is ~0.05 CPU-s and grows on a busy machine (a
    # rehearsal on 2026-12-07: 0.40 for 2M rows against 0.15 for 200k, 2.7x).
    assert mine_s > 0.2 and mine_s > 3 * other_s > 0
    assert slept >= 1.5 and idle_s < 0.5  # 3 s of tasks' wall time, waiting
    assert task_cpu.group_cpu_s(spark, mine) == 0.0  # taken once


def test_a_run_counts_its_own_threads_cpu_and_not_another_threads(spark) -> None:  # type: ignore[no-untyped-def]
    group = f"compute-run-{uuid.uuid4().hex[:6]}"
    clock = ComputeClock()
    clock.spark_reached(spark)
    other = threading.Thread(target=burn_python, args=(1.0,))
    other.start()
    burn_python(0.3)
    other.join()
    time.sleep(0.5)  # waiting is not compute

    seconds = clock.seconds(spark, group)
    assert seconds is not None and 0.3 <= seconds < 0.9


def test_a_jobs_run_reports_and_records_its_compute_seconds(spark, config: Config, cdc_table: CdcFactory) -> None:  # type: ignore[no-untyped-def]
    ref = cdc_table(rows=3000, commits=4)[0]

    result = run_job(config, ref, "merge")

    assert result.status == COMMITTED and result.compute_s is not None and result.compute_s > 0
    assert result.to_json()["compute_s"] == round(result.compute_s, 3)
    [recorded] = open_state(config).runs.list(table=str(ref), job="merge", limit=1)
    assert recorded.counters[COMPUTE] == round(result.compute_s, 3)
