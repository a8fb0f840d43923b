"""The catalog matrix: every job end to end on a REST catalog, a Hive Metastore and a SQL catalog, tables on S3.

The services are real and started by the tests (tests/services, fixture `catalog_services`):
SeaweedFS (`weed mini`: an S3 server and an Iceberg REST catalog, neither written here) and
a Hive Metastore (Hive 2.3 from pyspark's jars, Derby). One config file names every
catalog, written as a user would write it (tests/services/config.py: S3 is the catalogs'
`s3.*` settings, no jars); icemaint runs through its command line in a subprocess, the way
users and cron run it. Tables on S3 are read and written through Iceberg's S3FileIO (REST,
SQL) and through Hadoop's s3a (Hive, whose warehouse says s3a://).

Checks are independent of icemaint's own: content through Spark into a Parquet copy and
EXCEPT ALL both ways (tests/services/spark_worker.py); files through boto3 against the
bucket (os on local files); referenced files and per-partition file and manifest counts
through pyiceberg's manifests.

The matrix is {SQL catalog + local files, REST + S3, Hive + S3 (s3a), SQL + S3}: every job
end to end on each (Hive + S3's on the Spark cluster, tests/suites/test_cluster.py), leases and
fencing on Hive and REST, `icemaint run` per table and over every catalog's tables at once
(naming none) from one config naming all four.

Markers: `hive` and `rest` select a catalog; every test here carries `s3` (they all need
the services: the config and the Spark worker name every catalog), so
`pytest -m "hive or rest or s3"` runs exactly the matrix, SQL + local files included,
and `make test` (`not (hive or rest or s3 or faults or slow)`) none of it: each case runs once,
in `make test-integration`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from maintenance.catalogs import load_table, parse_table_ref
from maintenance.config import load_config
from maintenance.run.outcome import FENCED
from tests.services import spark_worker
from tests.services.config import CREDENTIALS_ENV, write_config
from tests.services.stack import Services
from tests.support.fencing import pause_outside_state_writes, read_line, resume_paused_holder
from tests.support.matrix import (
    POLICY_JOBS,
    REPO,
    Matrix,
    assert_same_rows,
    every_job_end_to_end,
    make_matrix,
    object_exists,
    snapshot_summaries,
    write_policies,
)

pytestmark = pytest.mark.s3

S3_CATALOGS = [
    pytest.param("hive_s3", marks=pytest.mark.hive, id="hive+s3a"),
    pytest.param("rest_s3", marks=pytest.mark.rest, id="rest+s3"),
]
# The whole sequence on S3FileIO under a REST catalog and under a SQL catalog (through
# `ResolvingFileIO`). SQL + local files runs its policy cycle's jobs here
# (`test_run_cycle_applies_the_catalogs_policy`); every job on local files has its own suite
# in make test, and the fault injection runs there too.
EVERY_JOB_CATALOGS = [pytest.param("rest_s3", marks=pytest.mark.rest, id="rest+s3"), pytest.param("sql_s3", id="sql+s3")]


@pytest.fixture(scope="module")
def matrix(catalog_services: Services, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Matrix]:
    with make_matrix(tmp_path_factory.mktemp("matrix"), catalog_services) as made:
        yield made


# SQL catalogs carry only the module's `s3` marker: they need the matrix's services (its
# config and Spark worker name every catalog), not a catalog server's own marker.
# Hive + S3's whole sequence (s3a) runs on the Spark cluster (tests/suites/test_cluster.py), the same
# `every_job_end_to_end` with executors in other JVMs: once per catalog keeps CI's time.
@pytest.mark.parametrize("catalog", EVERY_JOB_CATALOGS)
def test_every_job_end_to_end(matrix: Matrix, catalog: str, tmp_path: Path) -> None:
    every_job_end_to_end(matrix, catalog, tmp_path)


# -- leases and fencing ----------------------------------------------------------------------
@pytest.mark.process
@pytest.mark.parametrize("catalog", S3_CATALOGS)
def test_paused_holder_is_fenced_after_takeover(matrix: Matrix, catalog: str, tmp_path: Path) -> None:
    """tests/lease/test_fencing.py's SIGSTOP takeover on a Hive and a REST table: holder A (its own
    process) commits, is paused past its lease, B takes over and commits, A resumes and
    lands nothing and deletes nothing."""
    name = f"{catalog}.matrix.fence_{uuid.uuid4().hex[:8]}"
    matrix.worker.call(spark_worker.make_cdc_table, name, 400, 2)
    raw = {**matrix.raw, "state": {"url": f"sqlite:///{tmp_path / 'state.db'}"}, "leases": {"ttl_seconds": 3.0}}
    config_path = write_config(tmp_path / "fence.yaml", raw)
    config = load_config(str(config_path))
    ref = parse_table_ref(name, config)
    flag = tmp_path / "resume"
    s3 = matrix.s3()

    holder_a = subprocess.Popen(
        [sys.executable, "-m", "tests.support.fencing_worker", str(config_path), name, str(flag)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **CREDENTIALS_ENV},
    )
    try:
        ready = read_line(holder_a, "READY", timeout=300).split()
        a_run_id, scratch = ready[1], ready[2:]
        assert scratch and all(object_exists(s3, p) for p in scratch)
        pause_outside_state_writes(holder_a, raw["state"]["url"], str(ref))
        time.sleep(4.5)  # past A's 3 s lease

        b = matrix.worker.call(spark_worker.fencing_holder_b, str(config_path), name, 20_000_001)
        assert b["status"] == "committed", b["error"]
        after_b = tmp_path / "rows-after-b"
        matrix.worker.call(spark_worker.copy_rows, name, str(after_b))

        refused, status = resume_paused_holder(holder_a, flag)
    finally:
        if holder_a.poll() is None:
            os.kill(holder_a.pid, signal.SIGCONT)
            holder_a.kill()
            holder_a.wait()

    assert refused == "REFUSED delete,commit"
    assert status == f"STATUS {FENCED}"
    summaries = snapshot_summaries(load_table(config, ref))
    a_commits = [s for s in summaries if s.get("icemaint.run-id") == a_run_id]
    b_commits = [s for s in summaries if s.get("icemaint.run-id") == b["run_id"]]
    assert len(a_commits) == 1 and len(b_commits) == 1  # A's one commit before the pause, none after
    assert summaries.index(a_commits[0]) < summaries.index(b_commits[0])
    assert int(b_commits[0]["icemaint.lease-epoch"]) > int(a_commits[0]["icemaint.lease-epoch"])
    assert all(object_exists(s3, p) for p in scratch)  # nothing deleted
    assert_same_rows(matrix, name, after_b)

    from maintenance.state.store import open_state

    a_run = open_state(config).runs.get(a_run_id)
    assert a_run is not None and a_run.status == FENCED
    leases = {lease["table"]: lease for lease in matrix.cli_json("leases", config_path=config_path)}
    assert leases[str(ref)]["held"] is False and leases[str(ref)]["epoch"] == int(b_commits[0]["icemaint.lease-epoch"])


# -- staged publishing under a writer on a REST catalog ----------------------------------------
WRITER_MOMENTS = ["groups written", "staged", "verifying", "verified"]
# The CDC writer (Iceberg's Java API refreshes before it commits) at every moment; the stale
# pyiceberg writer where a change staged in the catalog made it fail: after staging.
WRITER_CASES = [*(("cdc", moment) for moment in WRITER_MOMENTS), ("stale", "staged"), ("stale", "verified")]


@pytest.mark.rest
@pytest.mark.parametrize(("writer", "moment"), WRITER_CASES, ids=[f"{w}-{m.replace(' ', '-')}" for w, m in WRITER_CASES])
def test_a_writer_committing_at_any_moment_of_a_verified_merge_never_fails_and_nothing_is_lost(matrix: Matrix, moment: str, writer: str) -> None:
    """On SeaweedFS's REST catalog, a writer commits while a verified MERGE runs: before it
    stages (groups written), right after (staged), while it verifies, and between
    verification and publishing. The writer is a CDC batch through Iceberg's Java API, or a
    pyiceberg append on metadata loaded before MERGE staged anything (a REST catalog refuses
    a snapshot whose sequence number another took with 400, which nobody retries: a change
    staged in the catalog did that). The writer never fails; MERGE commits, verified,
    published on top of the writer's snapshot (built again when the writer moved main
    after it staged); the rows are the writer's model."""
    name = f"rest_s3.matrix.under_writer_{uuid.uuid4().hex[:8]}"
    matrix.worker.call(spark_worker.make_cdc_table, name, 900, 4)

    done = matrix.worker.call(spark_worker.publish_under_writer, name, "merge", moment, writer, WRITER_MOMENTS.index(moment) + 1)

    assert done["writer"] == "committed", done
    assert moment in done["stages"], done["stages"]
    assert done["status"] == "committed" and done["verified"], done
    lineage = done["lineage"]
    assert lineage[0] == done["snapshot_id"] and done["writer_snapshot"] in lineage[1:], done
    assert done["same_as_writers_model"], done


# -- the cycle: `icemaint run`, policies selecting by catalog ----------------------------------
@pytest.mark.parametrize("catalog", [pytest.param("sql_local", id="sql+local"), *S3_CATALOGS, pytest.param("sql_s3", id="sql+s3")])
def test_run_cycle_applies_the_catalogs_policy(matrix: Matrix, catalog: str, tmp_path: Path) -> None:
    """One `icemaint run` per catalog from the config naming all four: each catalog's
    policy (selected by catalog) decides the job; it commits, verified."""
    name = f"{catalog}.daemon.t_{uuid.uuid4().hex[:8]}"
    matrix.worker.call(spark_worker.make_cdc_table, name, 600, 2)
    before = tmp_path / "rows-before"
    matrix.worker.call(spark_worker.copy_rows, name, str(before))

    results = matrix.cli_json("run", name)

    assert [(r["job"], r["status"]) for r in results] == [(POLICY_JOBS[catalog], "committed")], results
    assert all(r["content_verified"] for r in results), results
    assert_same_rows(matrix, name, before)


@pytest.mark.hive
@pytest.mark.rest
def test_run_naming_no_table_lists_every_catalog(matrix: Matrix, tmp_path: Path) -> None:
    """`icemaint run` naming no table, from the config naming all four catalogs: it lists
    the tables of both SQL catalogs, the Hive Metastore and the REST catalog; each catalog's
    policy (selected by catalog) picks its tables and its job; the due jobs run, verified.
    A table that its catalog's policy does not select, though a job would be due on it, is
    left alone. The other tests' tables are in the catalogs too; no policy here selects them."""
    from maintenance.state.store import open_state

    namespace = f"cycle_{uuid.uuid4().hex[:8]}"
    selected = {catalog: f"{catalog}.{namespace}.t_{catalog}" for catalog in POLICY_JOBS}
    left_alone = f"rest_s3.{namespace}.u_not_selected"
    for seed, name in enumerate([*selected.values(), left_alone]):
        made = matrix.worker.call(spark_worker.make_cdc_table, name, 600, 2, 42 + seed)
        assert made["equality_delete_files"] > 0 and made["position_delete_files"] > 0, made
    copies = {name: tmp_path / f"rows-{name}" for name in selected.values()}
    for name, copy in copies.items():
        matrix.worker.call(spark_worker.copy_rows, name, str(copy))
    raw = {**matrix.raw, "policies": str(write_policies(tmp_path / "policies", namespace=namespace, tables="t_*")),
           "state": {"url": f"sqlite:///{tmp_path / 'state.db'}"}}
    config_path = write_config(tmp_path / "cycle.yaml", raw)
    config = load_config(str(config_path))
    untouched = load_table(config, parse_table_ref(left_alone, config))

    results = matrix.cli_json("run", config_path=config_path)

    by_table = {r["table"]: r for r in results}
    assert len(by_table) == len(results), results
    assert {table: (r["job"], r["status"]) for table, r in by_table.items()} == {
        selected[catalog]: (job, "committed") for catalog, job in POLICY_JOBS.items()
    }, results
    assert all(r["content_verified"] for r in results), results
    state = open_state(config)
    for catalog, name in selected.items():
        runs = state.runs.list(table=name)
        assert [(run.job, run.status, run.run_id) for run in runs] == [(POLICY_JOBS[catalog], "committed", by_table[name]["run_id"])], runs
        assert runs[0].counters["content_verified"] is True, runs[0].counters
        table = load_table(config, parse_table_ref(name, config))
        summary = table.current_snapshot().summary
        assert table.metadata.current_snapshot_id == runs[0].snapshot_id
        assert (summary["icemaint.job"], summary["icemaint.run-id"]) == (POLICY_JOBS[catalog], runs[0].run_id), summary
        assert_same_rows(matrix, name, copies[name])
    assert state.runs.list(table=left_alone) == []
    after = load_table(config, parse_table_ref(left_alone, config))
    assert after.metadata_location == untouched.metadata_location and after.metadata.current_snapshot_id == untouched.metadata.current_snapshot_id


# -- the REST catalog's premises ---------------------------------------------------------------
@pytest.mark.rest
def test_the_rest_catalog_serves_what_clients_rely_on(catalog_services: Services) -> None:
    """pyiceberg against SeaweedFS's REST catalog, with only a user's settings (uri,
    warehouse, credential, s3.*): namespaces (nested too), tables, a commit on a stale base
    retried on fresh metadata (neither append lost), a staged create, rename and drop, each
    error as its REST status maps to pyiceberg's exceptions. Where SeaweedFS 4.48 differs
    from Iceberg's reference server: a second create of an existing table answers with the
    existing table (not 409), which keeps its content."""
    from pyiceberg.catalog import load_catalog
    from pyiceberg.exceptions import NamespaceAlreadyExistsError, NoSuchTableError

    store = catalog_services.s3
    catalog = load_catalog("routes", type="rest", uri=store.rest_uri, warehouse=store.warehouse, credential=store.credential, **store.s3_properties())
    ns = f"routes_{uuid.uuid4().hex[:8]}"
    catalog.create_namespace(ns, {"owner": "tests"})
    with pytest.raises(NamespaceAlreadyExistsError):
        catalog.create_namespace(ns)
    assert (ns,) in catalog.list_namespaces()
    catalog.create_namespace((ns, "inner"))
    assert (ns, "inner") in catalog.list_namespaces(ns)

    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())])
    table = catalog.create_table(f"{ns}.a", schema)
    stale = catalog.load_table(f"{ns}.a")
    table.append(pa.table({"id": [1, 2], "v": ["x", "y"]}, schema=schema))
    again = catalog.create_table(f"{ns}.a", schema)
    assert again.metadata.table_uuid == table.metadata.table_uuid and again.scan().to_arrow().num_rows == 2
    # Its base is gone: the server's compare-and-swap refuses the first attempt, and
    # pyiceberg retries on fresh metadata; neither append is lost.
    stale.append(pa.table({"id": [3], "v": ["z"]}, schema=schema))
    assert catalog.load_table(f"{ns}.a").scan().to_arrow().num_rows == 3
    assert len(catalog.load_table(f"{ns}.a").metadata.snapshots) == 2

    with catalog.create_table_transaction(f"{ns}.staged", schema) as txn:
        txn.set_properties({"created": "staged"})
    assert catalog.load_table(f"{ns}.staged").properties["created"] == "staged"

    catalog.rename_table(f"{ns}.a", f"{ns}.b")
    assert sorted(catalog.list_tables(ns)) == [(ns, "b"), (ns, "staged")]
    with pytest.raises(NoSuchTableError):
        catalog.load_table(f"{ns}.a")
    assert catalog.table_exists(f"{ns}.b") and not catalog.table_exists(f"{ns}.a")
    for name in ("b", "staged"):
        catalog.drop_table(f"{ns}.{name}")
    catalog.drop_namespace((ns, "inner"))
    catalog.drop_namespace(ns)
    assert (ns,) not in catalog.list_namespaces()


# -- S3 as one setting, and a store that cannot be reached ---------------------------------------
@pytest.mark.hive
def test_the_catalogs_s3_settings_reach_spark_and_a_wrong_endpoint_fails_within_a_minute(matrix: Matrix, tmp_path: Path) -> None:
    """Spark reads `s3a://` with only the catalog's `s3.*` properties (the matrix's config has
    no `spark:` section at all): a verified job reads and commits. With the catalog's
    endpoint for Spark pointing at a port nothing listens on, `verify` ends within a minute
    in one line naming that endpoint (Hadoop's defaults retried for minutes, silently)."""
    import copy
    import socket

    name = f"hive_s3.one_setting.t_{uuid.uuid4().hex[:8]}"
    matrix.worker.call(spark_worker.make_cdc_table, name, 600, 3)
    raw = copy.deepcopy(matrix.raw)
    assert "spark" not in raw
    merged = matrix.cli_json("merge", name)
    assert merged["status"] == "committed" and merged["content_verified"], merged

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]  # nothing listens once the probe is closed
    raw["catalogs"]["hive_s3"]["spark"] = {**raw["catalogs"]["hive_s3"]["spark"], "s3.endpoint": f"http://127.0.0.1:{closed}"}
    del raw["catalogs"]["sql_s3"]  # on the same bucket with the right endpoint: s3a's one setting per bucket would disagree (exit 2)
    wrong = write_config(tmp_path / "wrong-endpoint.yaml", raw)
    started = time.monotonic()
    proc = matrix.cli("verify", name, config_path=wrong, expect=None)
    took = time.monotonic() - started
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1 and lines[0].startswith("icemaint: error:"), proc.stderr[-3000:]
    assert f"127.0.0.1:{closed}" in lines[0], lines[0]
    assert took < 60, took
