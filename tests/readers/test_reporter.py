"""The scan reporter in a real Spark reader (`readers/java/ScanReportSender.java`, run by
`workload/readers.py` as its own process) against the daemon's real door and a real state
database: every scan arrives with what Iceberg planned for it (pyiceberg's plan of the same
snapshot is the oracle), and a daemon that is down or never answers costs the reader
nothing but its reports."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from maintenance.config import Config
from maintenance.daemon.http import serve
from maintenance.readers.endpoint import PATH, ScanReportEndpoint
from maintenance.state.store import StateStore
from tests.conftest import fresh_ref
from tests.support.scan_reports import arrived, planned, read_with_reporter
from tests.support.tables import create

pytestmark = pytest.mark.process

TOKEN = "readers-and-icemaint-share-this"


@pytest.fixture()
def tables(spark: Any, config: Config) -> list[str]:
    """Two tables with equality-free merge-on-read deletes: position delete files apply."""
    names = []
    for rows in (40, 10):
        ref = fresh_ref(config, "read")
        create(spark, ref, "id bigint, region string", partitioned_by="region")
        for start in range(0, rows, 10):
            spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, IF(id % 2 = 0, 'eu', 'us') FROM range({start}, {start + 10})")
        spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 7 = 0")
        names.append(str(ref))
    return names


def test_every_scan_arrives_with_what_iceberg_planned(tmp_path: Path, config: Config, tables: list[str], sqlite_store: StateStore) -> None:
    endpoint = ScanReportEndpoint(TOKEN, config.default_catalog, config.catalogs, lambda: sqlite_store)
    server = serve("127.0.0.1", 0, posts={PATH: endpoint.receive})
    try:
        big, small = tables
        done = read_with_reporter(tmp_path, TOKEN, f"http://127.0.0.1:{server.server_address[1]}", [{"table": big}, {"table": big}, {"table": big}, {"table": small, "at_s": 4}])
        arrived(lambda: sum(s.scans for s in sqlite_store.scans.summaries().values()), 4)
    finally:
        server.shutdown()

    assert [s["rows"] for s in done["scans"]] == [40 - 6, 40 - 6, 40 - 6, 10 - 2]
    third_ended = done["scans"][2]["started_s"] + done["scans"][2]["ms"] / 1000
    assert 4 <= done["scans"][3]["started_s"] < max(4, third_ended) + 2  # a scheduled scan waits for its time (or for the scan before)
    found = sqlite_store.scans.summaries()
    assert {t: s.scans for t, s in found.items()} == {big: 3, small: 1}
    for name in (big, small):
        data_files, delete_files, data_bytes = planned(config, name)
        assert delete_files > 0
        assert (found[name].data_files, found[name].delete_files, found[name].data_bytes) == (data_files, delete_files, data_bytes)
        assert found[name].position_delete_files > 0 and found[name].equality_delete_files == 0
        assert found[name].planning_ms > 0


@pytest.mark.slow  # two reader processes (19 s): make test-integration runs it
def test_a_daemon_down_or_silent_costs_the_reader_nothing_but_its_reports(tmp_path: Path, config: Config, tables: list[str]) -> None:
    """Nothing listens on one address; on the other a socket accepts and never answers. The
    reader's scans return their rows and the process ends (its exit waits at most about a
    second for the reports it still holds)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)  # the kernel completes connections; nobody reads them
    try:
        for port in (closed, silent.getsockname()[1]):
            done = read_with_reporter(tmp_path, TOKEN, f"http://127.0.0.1:{port}", [{"table": tables[1]}] * 3)
            assert [s["rows"] for s in done["scans"]] == [8, 8, 8], port
    finally:
        silent.close()
