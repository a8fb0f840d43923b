"""The Spark session icemaint starts (maintenance/spark/session.py): the configuration it is
started with (the catalogs' JDBC URLs, Iceberg's worker pool); Iceberg's delete loads run on
the prompt pool (`java/PromptDeleteLoads.java`), and a merge-on-read read through it returns
the model's rows; local files are written without sidecars or forked processes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from maintenance.config import parse_config
from maintenance.errors import ConfigError
from maintenance.spark.java_helpers import new_helper
from maintenance.spark.session import jdbc_properties, spark_conf
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


def test_a_delete_file_that_cannot_be_loaded_fails_the_read_through_the_prompt_pool(spark: Any, cdc_table: CdcFactory) -> None:
    """The prompt pool changes when a load's future answers, never what it answers: a delete
    file that is gone fails the read (Iceberg's `Tasks` gathers the failure from the future)
    rather than letting the rows it deletes through."""
    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=2000, commits=4, update_ratio=0.3, delete_ratio=0.1)
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    equality = [r.file_path for r in spark.sql(f"SELECT file_path FROM {ref.spark_name}.delete_files WHERE content = 2").collect()]
    assert equality
    Path(equality[0].removeprefix("file:")).unlink()
    spark.sql(f"REFRESH TABLE {ref.spark_name}")

    with pytest.raises(Exception, match="NotFound|No such file|does not exist"):
        spark.sql(f"SELECT count(*) FROM {ref.spark_name}").collect()


@pytest.mark.process
def test_a_jvm_that_cannot_start_says_why_in_one_line(tmp_path: Path) -> None:
    """A driver heap too small for Java: PySpark says only JAVA_GATEWAY_EXITED while the JVM
    writes the cause to the terminal; icemaint's line carries the cause and where the JVM's
    output is kept."""
    config = tmp_path / "icemaint.yaml"
    config.write_text("spark:\n  conf:\n    spark.driver.memory: 1m\n")

    proc = run_cli("--config", str(config), "workload", "cdc", "demo.t", "--rows", "10", "--commits", "1", home=tmp_path)

    assert_one_line_error(proc, 1, "Spark's JVM did not start: Too small maximum heap", str(tmp_path / "logs" / "spark-jvm.err"))  # run_cli: ICEMAINT_HOME is tmp_path
    assert proc.stdout == ""


def test_jdbc_urls_for_spark() -> None:
    assert jdbc_properties("postgresql+psycopg://u:p%40ss@db:5433/cat") == {
        "uri": "jdbc:postgresql://db:5433/cat", "jdbc.user": "u", "jdbc.password": "p@ss"
    }
    assert jdbc_properties("mysql+pymysql://root@db/cat")["uri"] == "jdbc:mysql://db/cat"
    with pytest.raises(ConfigError):
        jdbc_properties("oracle://db/x")


def test_iceberg_worker_pool_is_sized_for_storage_waits_unless_the_user_sized_it(tmp_path: Path) -> None:
    from maintenance.spark.session import MIN_ICEBERG_WORKER_THREADS

    config = parse_config({"home": str(tmp_path)}, source="t", base_dir=tmp_path)
    options = spark_conf(config)["spark.driver.extraJavaOptions"].split()
    threads = [int(o.split("=")[1]) for o in options if o.startswith("-Diceberg.worker.num-threads=")]
    assert len(threads) == 1 and threads[0] >= MIN_ICEBERG_WORKER_THREADS
    own = parse_config({"home": str(tmp_path), "spark": {"conf": {"spark.driver.extraJavaOptions": "-Diceberg.worker.num-threads=3"}}},
                       source="t", base_dir=tmp_path)
    options = spark_conf(own)["spark.driver.extraJavaOptions"].split()
    assert [o for o in options if "iceberg.worker.num-threads" in o] == ["-Diceberg.worker.num-threads=3"]


@pytest.mark.process
def test_the_session_writes_local_files_without_sidecars_or_forked_processes(spark, config, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Spark's data files and Iceberg's metadata, manifests included, land without `.crc`
    files and without a forked `chmod` each (Hadoop's local file system forks one per file and
    folder it creates when its native library is missing), with the permissions Hadoop gives
    them (0666 and 0777 less its umask 022), and the table reads back. The JVM's process
    starts are traced with strace where it is installed (a machine-wide count of forks counts
    every new thread too): none while an insert writes 40 partitions."""
    import shutil
    import subprocess
    import time

    from tests.conftest import fresh_ref

    ref = fresh_ref(config, "crc")
    spark.sql(f"CREATE TABLE {ref.spark_name} (id BIGINT, part INT) USING iceberg PARTITIONED BY (part)")
    location = spark.sql(f"DESCRIBE TABLE EXTENDED {ref.spark_name}").where("col_name = 'Location'").first().data_type
    hadoop = spark._jvm.org.apache.hadoop
    for fs in (hadoop.fs.FileSystem.getLocal(spark._jsc.hadoopConfiguration()), hadoop.fs.Path(location).getFileSystem(spark._jsc.hadoopConfiguration())):
        assert fs.getRawFileSystem().getClass().getName() == "icemaint.NioLocalFileSystem"
    tracer = None
    if shutil.which("strace"):
        jvm_pid = spark._jvm.java.lang.ProcessHandle.current().pid()
        trace = tmp_path / "execs.txt"
        tracer = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=execve", "-o", str(trace), "-p", str(jvm_pid)], stderr=subprocess.DEVNULL)
        time.sleep(1.0)  # attached to every thread
    spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, CAST(id % 40 AS INT) FROM range(0, 400)")
    if tracer is not None:
        tracer.terminate()
        tracer.wait()
        # Spark's executor asks `getconf PAGESIZE` once, at its first heartbeat after start
        # (`ProcfsMetricsGetter`), through the JDK's `jspawnhelper`: when that heartbeat falls
        # in the insert it is traced too. Any other program (Hadoop's `chmod`) is a fork per file.
        started = [line for line in trace.read_text().splitlines() if "execve(" in line]
        assert [line for line in started if "jspawnhelper" not in line and "getconf" not in line] == [], started
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id = 1")
    folder = Path(location.removeprefix("file:"))
    created = list(folder.rglob("*"))
    assert len([p for p in created if p.name.endswith(".parquet")]) >= 40 and any(p.name.endswith(".avro") for p in created)
    assert not [p for p in created if p.name.endswith(".crc")]
    assert {oct(p.stat().st_mode & 0o777) for p in created if p.is_file()} == {oct(0o644)}
    assert {oct(p.stat().st_mode & 0o777) for p in created if p.is_dir()} == {oct(0o755)}
    assert spark.sql(f"SELECT count(*) AS n FROM {ref.spark_name}").first().n == 399
