"""The Spark session icemaint starts (maintenance/spark/session.py): Iceberg's delete loads
run on the prompt pool (`java/PromptDeleteLoads.java`), and a merge-on-read read through it
returns the model's rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from maintenance.spark.java_helpers import new_helper
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory
from tests.support.cli import assert_one_line_error, run_cli
from tests.support.helpers import model_rows, spark_rows


def test_iceberg_loads_deletes_on_the_prompt_pool_and_reads_every_row_the_model_holds(spark: Any, cdc_table: CdcFactory) -> None:
    pool = spark._jvm.org.apache.iceberg.util.ThreadPools.getDeleteWorkerPool()
    assert pool.getClass().getName() == "icemaint.PromptDeleteLoads"
    assert str(new_helper(spark, "PromptDeleteLoads").install()) == "already installed"  # once per JVM, never wrapped twice

    # equality deletes of every later commit and position deletes of each commit's own duplicates: several per data file
    ref, _, model = cdc_table(shape=TableShape("identity", 2, "single"), rows=3000, commits=8, update_ratio=0.3, delete_ratio=0.1)
    deletes = spark.sql(f"SELECT content, count(*) AS n FROM {ref.spark_name}.delete_files GROUP BY content").collect()
    assert {r.content for r in deletes} == {1, 2} and sum(r.n for r in deletes) >= 8
    assert spark_rows(spark, ref) == model_rows(model)


def test_a_jvm_that_cannot_start_says_why_in_one_line(tmp_path: Path) -> None:
    """A driver heap too small for Java: PySpark says only JAVA_GATEWAY_EXITED while the JVM
    writes the cause to the terminal; icemaint's line carries the cause and where the JVM's
    output is kept."""
    config = tmp_path / "icemaint.yaml"
    config.write_text("spark:\n  conf:\n    spark.driver.memory: 1m\n")

    proc = run_cli("--config", str(config), "workload", "cdc", "demo.t", "--rows", "10", "--commits", "1", home=tmp_path)

    assert_one_line_error(proc, 1, "Spark's JVM did not start: Too small maximum heap", str(tmp_path / "logs" / "spark-jvm.err"))  # run_cli: ICEMAINT_HOME is tmp_path
    assert proc.stdout == ""
