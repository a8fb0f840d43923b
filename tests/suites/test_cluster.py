"""Every job on a real Spark standalone cluster: a master and two workers, each a JVM of its
own started from pyspark's `spark-class` (tests/services/spark_cluster.py), the driver in
the icemaint process (client mode), as `spark.master: spark://…` runs it for users.

What only a cluster shows: executors in other JVMs load the Janino-compiled helpers icemaint
ships them as a jar, read and write the catalog's storage themselves (local files; `s3a://`
on Hive + S3), and outlive or lose their worker. The checks are the catalog matrix's own
and independent of icemaint: content through a separate local Spark into a Parquet copy
compared with EXCEPT ALL both ways, stored files through os or boto3, references through
pyiceberg's manifests.

Marker `cluster` (with `s3`: the matrix's services), run by `make test-integration`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from maintenance.catalogs import load_table, parse_table_ref
from tests.services import spark_worker
from tests.services.config import CREDENTIALS_ENV
from tests.services.spark_cluster import SparkCluster, start_cluster
from tests.services.stack import Services
from tests.support.matrix import REPO, Matrix, assert_same_rows, canonical, every_job_end_to_end, make_matrix, referenced_by_snapshots

pytestmark = [pytest.mark.cluster, pytest.mark.s3]


@pytest.fixture(scope="module")
def cluster(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkCluster]:
    folder = tmp_path_factory.mktemp("spark-cluster")
    started = start_cluster(folder, workers=2, cores=1, memory="1g")
    failed_before = request.session.testsfailed
    try:
        yield started
    finally:
        started.stop()
        reporter = request.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"spark cluster: started in {started.startup_s:.1f}s"
                                + (f"; logs kept in {folder}" if request.session.testsfailed > failed_before else ""))


@pytest.fixture(scope="module")
def on_cluster(cluster: SparkCluster, catalog_services: Services, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Matrix]:
    """The catalog matrix, with every icemaint command's Spark on the cluster."""
    with make_matrix(tmp_path_factory.mktemp("cluster-matrix"), catalog_services, cluster.url, cluster.spark_conf()) as made:
        yield made


def executor_tasks(cluster: SparkCluster, since: float) -> int:
    """Tasks executors ran (their own logs' "Running task" lines) in apps started after `since`."""
    count = 0
    for log in cluster.executor_logs():
        if log.stat().st_mtime >= since:
            count += log.read_text(errors="replace").count("Running task")
    return count


@pytest.mark.hive
def test_every_job_verified_on_a_standalone_cluster(on_cluster: Matrix, cluster: SparkCluster, tmp_path: Path) -> None:
    """The matrix's whole sequence (workload, REWRITE, CONVERT, MERGE, another writer,
    COMPACT, MANIFESTS, EXPIRE, ORPHANS), each verified, with executors on the workers, on
    Hive + S3 (executors read and write `s3a://` themselves); this is also Hive + S3's run of
    the whole sequence in the catalog matrix. Local files on a cluster (every worker on this
    one machine) are the worker-kill test's."""
    started, apps_before = time.time(), len(cluster.completed_apps())

    every_job_end_to_end(on_cluster, "hive_s3", tmp_path)

    apps = len(cluster.completed_apps()) - apps_before  # one per command that started Spark
    assert apps >= 5, f"the jobs did not run on the cluster: {apps} applications"
    assert executor_tasks(cluster, started) > 0, "no executor of the cluster ran a task"
    assert cluster.alive_workers() == 2


@pytest.mark.process
def test_a_worker_killed_during_a_multi_group_compact_loses_nothing(on_cluster: Matrix, cluster: SparkCluster, tmp_path: Path) -> None:
    """SIGKILL to one worker and its executors while COMPACT rewrites the first of its groups
    (at least one per partition of eight, at most 192 KiB each, committed two at a time): Spark runs the lost tasks on the
    other worker or the run fails cleanly; either way the content is the frozen copy's, and
    after ORPHANS nothing the run wrote is left unreferenced. Runs last: the cluster has one
    worker afterwards."""
    assert on_cluster.local_config_path is not None
    name = f"sql_local.cluster.kill_{uuid.uuid4().hex[:8]}"
    created = on_cluster.cli_json("workload", "cdc", name, "--rows", "60000", "--commits", "12", "--partitions", "8",
                                  config_path=on_cluster.local_config_path)  # made without the cluster
    frozen = tmp_path / "rows-before"
    assert on_cluster.worker.call(spark_worker.copy_rows, name, str(frozen)) == created["expected_rows"]

    started = time.time()
    env = {**os.environ, **CREDENTIALS_ENV}
    env.pop("ICEMAINT_CONFIG", None)
    compact = subprocess.Popen(
        [sys.executable, "-m", "maintenance", "--config", str(on_cluster.config_path), "compact", name, "--min-input-files", "2", "--max-group-bytes", "192KiB",
         "--max-concurrent-groups", "1", "--commit-every-groups", "2", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
    try:
        deadline = time.monotonic() + 300
        while executor_tasks(cluster, started) == 0:
            assert compact.poll() is None and time.monotonic() < deadline, "COMPACT ended or waited 300 s before any executor ran a task"
            time.sleep(0.2)
        cluster.kill_worker(0)
        out, err = compact.communicate(timeout=900)
    finally:
        if compact.poll() is None:
            compact.kill()
    assert compact.returncode in (0, 1), err[-3000:]
    result = json.loads(out)
    assert "Traceback" not in err, err[-3000:]
    if compact.returncode == 0:
        assert result["status"] == "committed" and result["content_verified"], result
        assert result["groups_rewritten"] == result["groups_planned"] >= 8 and result["snapshots_published"] >= 4, result
    else:
        assert result["status"] == "failed" and result["error"] and "\n" not in result["error"], result
    assert cluster.alive_workers() == 1
    assert_same_rows(on_cluster, name, frozen)

    orphans = on_cluster.cli_json("orphans", name, "--older-than", "0s", "--force", "--verify")
    assert orphans["status"] in ("committed", "noop"), orphans
    assert_same_rows(on_cluster, name, frozen)
    config = on_cluster.config
    table = load_table(config, parse_table_ref(name, config))
    assert_nothing_unreferenced(table)


def assert_nothing_unreferenced(table: object) -> None:
    """Every file under the table's location is one a retained snapshot references, a
    metadata file of its log, or the checksum Hadoop's local file system keeps beside one."""
    metadata = table.metadata  # type: ignore[attr-defined]
    kept = {canonical(p) for p in referenced_by_snapshots(table)}
    kept |= {canonical(m.metadata_file) for m in metadata.metadata_log} | {canonical(table.metadata_location)}  # type: ignore[attr-defined]
    kept |= {canonical(s.statistics_path) for s in metadata.statistics}
    location = canonical(metadata.location)[2]
    stored = {canonical(str(f)) for f in Path(location).rglob("*") if f.is_file()}
    checksums = {(store, bucket, str(Path(path).with_name(f".{Path(path).name}.crc"))) for store, bucket, path in kept}
    left = sorted(path for _, _, path in stored - kept - checksums)
    assert not left, f"{len(left)} unreferenced file(s) left: {left[:5]}"
