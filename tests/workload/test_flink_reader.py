"""The scan reporter in a real Flink reader (`workload/flink_reader.py`: Flink's own `iceberg`
catalog, batch queries, the reporter's jar in `pipeline.jars`) against the daemon's real
door and a real state database: each scan arrives once, with what Iceberg planned for it
(Iceberg's Java `planFiles()` of the same snapshot, through Spark's JVM, is the oracle), on a
partitioned table with equality and position deletes, and the token shows nowhere in the
job's log. Flink's batch planner also lists the partitions through Iceberg's catalog, which
plans every file: that planning reads nothing and is not reported.

Not skipped when PyFlink is missing: `make setup` installs it (`make flink`)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from maintenance.config import Config
from maintenance.daemon.http import serve
from maintenance.readers.endpoint import PATH, ScanReportEndpoint
from maintenance.spark.jvm import load_java_table
from maintenance.state.store import StateStore
from maintenance.workload.flink_reader import read_with_flink
from tests.conftest import CdcFactory
from tests.support.iceberg_oracle import planned_tasks
from tests.support.scan_reports import arrived

pytestmark = [pytest.mark.slow, pytest.mark.process]

TOKEN = "flink-readers-and-icemaint-share-this"


def test_a_flink_readers_scans_arrive_once_with_what_iceberg_planned(spark, config: Config, cdc_table: CdcFactory, sqlite_store: StateStore, tmp_path: Path) -> None:
    ref, _, model = cdc_table(rows=2000, commits=4)
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    endpoint = ScanReportEndpoint(TOKEN, config.default_catalog, config.catalogs, lambda: sqlite_store)
    server = serve("127.0.0.1", 0, posts={PATH: endpoint.receive})
    scans = lambda: sum(s.scans for s in sqlite_store.scans.summaries().values())  # noqa: E731
    try:
        done = read_with_flink(config, [ref, ref], f"http://127.0.0.1:{server.server_address[1]}", token_file)
        arrived(scans, 2)
        time.sleep(2)  # a second report of a scan (a planner that plans twice) would be here by now
        reported = scans()
    finally:
        server.shutdown()

    assert [s["rows"] for s in done["scans"]] == [len(model.rows)] * 2 == [spark.table(ref.spark_name).count()] * 2
    assert reported == 2
    found = sqlite_store.scans.summaries()[str(ref)]
    tasks = planned_tasks(load_java_table(spark, ref))
    deletes = [(str(d.content()), str(d.location())) for task in tasks for d in task.deletes()]
    kinds = [kind for kind, _ in set(deletes)]  # the report counts each delete file once by kind, and per task in all
    assert (found.data_files, found.data_bytes) == (len(tasks), sum(task.file().fileSizeInBytes() for task in tasks))
    assert (found.delete_files, found.equality_delete_files, found.position_delete_files) == (
        len(deletes), kinds.count("EQUALITY_DELETES"), kinds.count("POSITION_DELETES"))
    assert found.equality_delete_files > 0 and found.position_delete_files > 0
    assert TOKEN not in Path(done["log"]).read_text(errors="replace")
    assert not (Path(done["log"]).parent / "settings.json").exists()
