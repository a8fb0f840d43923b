"""The catalog matrix's config, its checking Spark worker, its independent views of stored files and metadata, and its every-job sequence (tests/suites/test_catalog_matrix.py, tests/suites/test_cluster.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.parquet as pq

from maintenance.catalogs import load_table, parse_table_ref
from maintenance.config import Config, load_config
from tests.services import spark_worker
from tests.services.config import CREDENTIALS_ENV, make_sql_catalogs, matrix_config, write_config
from tests.services.s3 import SECRET_KEY
from tests.services.spark_worker import SparkWorker
from tests.services.stack import Services
from tests.support.paths import REPO

CHECKPOINT_KEY = "test.writer-checkpoint"


# Each catalog's policy in the `icemaint run` cycle runs another job: selection is by catalog.
POLICY_JOBS = {"sql_local": "rewrite", "hive_s3": "convert", "rest_s3": "merge", "sql_s3": "merge"}


POLICY_TRIGGERS = {"rewrite": {"position_delete_files": 1}, "convert": {"equality_delete_files": 1}, "merge": {"equality_delete_files": 1}}


@dataclass
class Matrix:
    folder: Path
    raw: dict[str, Any]
    config_path: Path
    services: Services
    worker: SparkWorker  # a Spark session of its own for the checks, always local
    durations: dict[str, float]
    local_config_path: Path | None = None  # when config_path runs jobs elsewhere (a cluster): the same catalogs, Spark local

    @property
    def config(self) -> Config:
        return load_config(str(self.config_path))

    def cli(self, *args: str, config_path: Path | None = None, expect: int | None = 0) -> subprocess.CompletedProcess[str]:
        """`python -m maintenance --config FILE ...` in its own process, as users run it."""
        env = {**os.environ, **CREDENTIALS_ENV}
        env.pop("ICEMAINT_CONFIG", None)
        started = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "maintenance", "--config", str(config_path or self.config_path), *args],
            check=False, capture_output=True, text=True, env=env, cwd=REPO, timeout=900,
        )
        self.durations[" ".join(args[:2])] = self.durations.get(" ".join(args[:2]), 0.0) + time.monotonic() - started
        assert SECRET_KEY not in proc.stdout + proc.stderr, f"icemaint {' '.join(args)} printed the S3 secret"
        if expect is not None:
            assert proc.returncode == expect, f"icemaint {' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-4000:]}\n{proc.stdout[-2000:]}"
        return proc

    def cli_json(self, *args: str, **kwargs: Any) -> Any:
        out = self.cli(*args, "--json", **kwargs).stdout
        return [json.loads(line) for line in out.splitlines() if line.strip()] if args[0] == "run" else json.loads(out)

    def s3(self):  # type: ignore[no-untyped-def]
        return self.services.s3.client()

    def storage(self) -> Storage:
        return Storage(self.s3())


@contextmanager
def make_matrix(folder: Path, catalog_services: Services, spark_master: str | None = None, spark_conf: dict[str, str] | None = None) -> Iterator[Matrix]:
    """The matrix's config and its checking Spark worker; with `spark_master`, the jobs'
    config (`Matrix.config_path`) runs Spark there, with `spark_conf` added."""
    policies = write_policies(folder / "policies")
    raw = matrix_config(folder, s3=catalog_services.s3, hive_uri=catalog_services.hive.uri, policies=policies)
    local_path = write_config(folder / "icemaint.yaml", raw)
    make_sql_catalogs(raw)
    config_path = local_path
    if spark_master is not None:
        spark = raw.get("spark", {})
        raw = {**raw, "spark": {**spark, "master": spark_master, "conf": {**spark.get("conf", {}), **(spark_conf or {})}}}
        config_path = write_config(folder / "icemaint-cluster.yaml", raw)
    saved = {key: os.environ.get(key) for key in CREDENTIALS_ENV}
    os.environ.update(CREDENTIALS_ENV)  # this process reads the same file (pyiceberg checks)
    worker = SparkWorker(local_path, dict(CREDENTIALS_ENV))
    durations: dict[str, float] = {"spark worker start": worker.call(spark_worker.start)}
    try:
        yield Matrix(folder=folder, raw=raw, config_path=config_path, services=catalog_services, worker=worker, durations=durations,
                     local_config_path=local_path if spark_master is not None else None)
    finally:
        worker.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        print("\ncatalog matrix CLI seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in sorted(durations.items())))


def write_policies(folder: Path, namespace: str = "daemon", tables: str = "*") -> Path:
    import yaml

    folder.mkdir(parents=True, exist_ok=True)
    for catalog, job in POLICY_JOBS.items():
        policy = {
            "name": f"matrix-{catalog}",
            "priority": 50,
            "select": {"catalogs": catalog, "namespaces": namespace, "tables": tables},
            "jobs": {job: {"when": POLICY_TRIGGERS[job]}},
        }
        (folder / f"{catalog}.yaml").write_text(yaml.safe_dump(policy, sort_keys=False))
    return folder


# -- independent views of the stored files and of the metadata -------------------------------
def canonical(location: str) -> tuple[str, str, str]:
    """(store, authority, path) of one stored file however it is spelled: s3://, s3a://
    and s3n:// are ("s3", bucket, key); file:/x, file:///x and /x are ("file", "", "/x")."""
    parts = urlsplit(location)
    if parts.scheme in ("s3", "s3a", "s3n"):
        return "s3", parts.netloc, parts.path.lstrip("/")
    assert parts.scheme in ("", "file") and not parts.netloc, location
    return "file", "", os.path.normpath(parts.path)


class Storage:
    """What is stored, seen without icemaint: boto3 against the bucket, os on local files."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def exists(self, location: str) -> bool:
        store, bucket, key = canonical(location)
        if store == "file":
            return Path(key).is_file()
        try:
            self.client.head_object(Bucket=bucket, Key=key)
            return True
        except self.client.exceptions.ClientError as exc:
            if exc.response["Error"]["Code"] in ("404", "NoSuchKey", "NotFound"):
                return False
            raise

    def with_checksums(self, locations: list[str]) -> list[str]:
        """The files and, on local files, the `.NAME.crc` Hadoop's checksummed local file
        system wrote beside each (an orphan's checksum is an orphan too)."""
        found = list(locations)
        for location in locations:
            store, _, path = canonical(location)
            checksum = Path(path).with_name(f".{Path(path).name}.crc")
            if store == "file" and checksum.is_file():
                found.append(str(checksum))
        return found

    def files(self, location: str) -> set[tuple[str, str, str]]:
        """Every stored file under a location (S3 folder markers included), canonical."""
        store, bucket, prefix = canonical(location)
        if store == "file":
            return {canonical(str(f)) for f in Path(prefix).rglob("*") if f.is_file()}
        found: set[tuple[str, str, str]] = set()
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix.rstrip("/") + "/"):
            found.update(("s3", bucket, obj["Key"]) for obj in page.get("Contents", []))
        return found


def object_exists(client: Any, location: str) -> bool:
    return Storage(client).exists(location)


def referenced_by_snapshots(table: Any) -> set[str]:
    """Every file any retained snapshot references: manifest lists, manifests, data and
    delete files (live entries), read with pyiceberg's manifest readers."""
    io = table.io
    found: set[str] = {table.metadata_location}
    for snapshot in table.metadata.snapshots:
        found.add(snapshot.manifest_list)
        for manifest in snapshot.manifests(io):
            found.add(manifest.manifest_path)
            for entry in manifest.fetch_manifest_entry(io, discard_deleted=True):
                found.add(entry.data_file.file_path)
    return found


def current_files(table: Any) -> tuple[int, dict[str, int], int]:
    """The current snapshot as pyiceberg reads it: (manifests, data files per partition,
    delete files)."""
    from pyiceberg.manifest import DataFileContent

    io, manifests = table.io, table.current_snapshot().manifests(table.io)
    data: dict[str, int] = {}
    deletes = 0
    for manifest in manifests:
        for entry in manifest.fetch_manifest_entry(io, discard_deleted=True):
            if entry.data_file.content == DataFileContent.DATA:
                key = repr(entry.data_file.partition)
                data[key] = data.get(key, 0) + 1
            else:
                deletes += 1
    return len(manifests), data, deletes


def spelled(location: str, scheme: str) -> str:
    """The same file named another way: scheme s3 or s3a on S3; file (file:///x) or ""
    (a bare /x) on local files."""
    store, authority, path = canonical(location)
    if store == "s3":
        assert scheme in ("s3", "s3a", "s3n"), scheme
        return f"{scheme}://{authority}/{path}"
    assert scheme in ("file", ""), scheme
    return f"file://{path}" if scheme == "file" else path


def other_spelling(location: str) -> str:
    """s3:// <-> s3a://; file:/x or file:///x <-> /x."""
    scheme = urlsplit(location).scheme
    return spelled(location, {"s3": "s3a", "s3a": "s3", "s3n": "s3", "file": "", "": "file"}[scheme])


def snapshot_summaries(table: Any) -> list[dict[str, str]]:
    snapshots = sorted(table.metadata.snapshots, key=lambda s: s.sequence_number or 0)
    return [{**(s.summary.additional_properties if s.summary else {}), "snapshot_id": s.snapshot_id} for s in snapshots]


def assert_same_rows(matrix: Matrix, table: str, copy: Path) -> dict[str, int]:
    diff = matrix.worker.call(spark_worker.compare_rows, table, str(copy))
    assert diff["added"] == 0 and diff["lost"] == 0 and diff["rows"] == diff["rows_before"], diff
    return diff


def row_file(table: Any, ids: range, region: int) -> pa.Table:
    """Rows in the table's schema, without Parquet field ids (as an outside writer's file)."""
    from pyiceberg.io.pyarrow import schema_to_pyarrow

    schema = schema_to_pyarrow(table.schema(), include_field_ids=False)
    when = datetime(2026, 1, 2, tzinfo=timezone.utc)
    rows = [(i, region, "outside-writer", Decimal("2.50"), "new", when, 1) for i in ids]
    return pa.table({name: list(values) for name, values in zip(schema.names, zip(*rows))}, schema=schema)


def write_bytes(io: Any, location: str, data: bytes) -> str:
    with io.new_output(location).create(overwrite=False) as stream:
        stream.write(data)
    return location


def write_frame(io: Any, location: str, frame: pa.Table) -> str:
    with io.new_output(location).create(overwrite=False) as stream:
        pq.write_table(frame, stream)
    return location


# -- the pipeline ----------------------------------------------------------------------------
# The table location's scheme, and the two spellings orphans are planted under, per catalog.
LOCATION_SCHEMES = {"sql_local": ("file",), "hive_s3": ("s3a",), "rest_s3": ("s3",), "sql_s3": ("s3",)}


PLANT_SPELLINGS = {"sql_local": ("file", ""), "hive_s3": ("s3", "s3a"), "rest_s3": ("s3", "s3a"), "sql_s3": ("s3", "s3a")}
# The catalogs whose tables Spark writes through Hadoop's file system (so orphans are planted
# through it too, named as Hadoop names them); on the others Spark uses Iceberg's S3FileIO, and
# SeaweedFS's table bucket (the REST catalog's) refuses s3a's writes: 403 for a key not there.
HADOOP_WRITTEN = ("sql_local", "hive_s3")
TABLE_BUCKET = ("rest_s3",)  # tables in SeaweedFS's table bucket, which accepts only the object names it expects


def every_job_end_to_end(matrix: Matrix, catalog: str, tmp_path: Path) -> None:
    """workload -> REWRITE -> CONVERT -> MERGE -> another writer's commits -> COMPACT ->
    MANIFESTS -> EXPIRE (the writer's checkpoint kept) -> ORPHANS (planted old orphans
    under both spellings of the store, s3:// and s3a:// or file:// and a bare path; a live
    file named in the other spelling kept), each run with --verify and checked by the
    independent content oracle."""
    name = f"{catalog}.matrix.cdc_{uuid.uuid4().hex[:8]}"
    storage = matrix.storage()

    created = matrix.cli_json("workload", "cdc", name, "--rows", "900", "--commits", "3")
    assert created["created"] and created["equality_delete_files"] > 0 and created["position_delete_files"] > 0

    config = matrix.config
    ref = parse_table_ref(name, config)
    table = load_table(config, ref)
    location = table.location().rstrip("/")
    assert urlsplit(location).scheme in LOCATION_SCHEMES[catalog], location

    # Plant now, so that by ORPHANS they are older than its margin, as the live files are.
    tag = uuid.uuid4().hex[:8]
    first, second = PLANT_SPELLINGS[catalog]
    def write_raw(path: str, data: bytes) -> str:
        if catalog in HADOOP_WRITTEN:
            return str(matrix.worker.call(spark_worker.write_hadoop_file, path, data))
        return write_bytes(table.io, path, data)

    old_orphans = [
        write_frame(table.io, f"{spelled(location, first)}/data/region=0/orphan-{first or 'bare'}-{tag}.parquet", row_file(table, range(1, 3), 0)),
        write_raw(f"{spelled(location, second)}/data/region=1/orphan-{second or 'bare'}-{tag}.parquet", b"PAR1 not really"),
        write_raw(f"{location}/metadata/{tag}-orphan-m0.avro", b"Obj1 as if a failed commit left it"),
    ]
    planted = storage.with_checksums(old_orphans)
    # A file another writer will add, named in the other spelling of the table location.
    live_other = write_frame(table.io, f"{other_spelling(location)}/data/region=2/outside-{tag}.parquet", row_file(table, range(90_000_001, 90_000_004), 2))
    planted_at = time.time()

    before = tmp_path / "rows-before"
    assert matrix.worker.call(spark_worker.copy_rows, name, str(before)) == created["expected_rows"]

    # REWRITE first, while the writer's position deletes are many per partition (CONVERT
    # folds the ones it finds into its own, which leaves REWRITE nothing to do).
    rewrite = matrix.cli_json("rewrite", name, "--verify")
    assert rewrite["status"] == "committed" and rewrite["content_verified"], rewrite
    health = matrix.cli_json("health", name)
    assert all(p["position_delete_files"] <= 1 for p in health["partitions"]), health
    assert health["equality_delete_files"] == created["equality_delete_files"], health
    assert_same_rows(matrix, name, before)

    convert = matrix.cli_json("convert", name, "--verify")
    assert convert["status"] == "committed" and convert["content_verified"], convert
    assert convert["equality_delete_files_removed"] == created["equality_delete_files"]
    health = matrix.cli_json("health", name)
    assert health["equality_delete_files"] == 0 and all(p["position_delete_files"] <= 1 for p in health["partitions"]), health
    assert_same_rows(matrix, name, before)

    merge = matrix.cli_json("merge", name, "--verify")
    assert merge["status"] == "committed" and merge["content_verified"], merge
    health = matrix.cli_json("health", name)
    assert health["position_delete_files"] == 0 and health["equality_delete_files"] == 0, health
    assert_same_rows(matrix, name, before)

    # Another writer (pyiceberg) commits: first a file named in the other spelling, marking
    # its resume point in the summary; then one more append, so the checkpoint is not the head.
    table = load_table(config, ref)
    table.add_files([live_other], snapshot_properties={CHECKPOINT_KEY: "42"})
    checkpoint_id = load_table(config, ref).metadata.current_snapshot_id
    load_table(config, ref).append(row_file(table, range(90_000_101, 90_000_103), 3))
    table = load_table(config, ref)
    append_id = table.metadata.current_snapshot_id
    assert live_other in referenced_by_snapshots(table)  # referenced as spelled
    after_writers = tmp_path / "rows-after-writers"
    assert matrix.worker.call(spark_worker.copy_rows, name, str(after_writers)) == created["expected_rows"] + 5

    # COMPACT: MERGE left one file per partition; the writers' files make two in two of
    # them, and COMPACT makes those one again (all are far below the target size). The live
    # file in the other spelling leaves the current snapshot; the checkpoint keeps it live.
    _, data_files, delete_files = current_files(table)
    assert delete_files == 0 and sorted(data_files.values()) == [1, 1, 2, 2], data_files
    compact = matrix.cli_json("compact", name, "--min-input-files", "2", "--verify")
    assert compact["status"] == "committed" and compact["content_verified"], compact
    table = load_table(config, ref)
    assert table.current_snapshot().snapshot_id == compact["snapshot_id"]
    manifests, compacted, delete_files = current_files(table)
    assert compacted.keys() == data_files.keys() and set(compacted.values()) == {1} and delete_files == 0, (data_files, compacted)
    assert_same_rows(matrix, name, after_writers)

    # MANIFESTS: the commits so far each left manifests of their own; rewritten, fewer hold them all.
    assert manifests >= 2, manifests
    rewritten = matrix.cli_json("manifests", name, "--verify")
    assert rewritten["status"] == "committed" and rewritten["content_verified"] and rewritten["manifests_rewritten"] >= 2, rewritten
    table = load_table(config, ref)
    head_id = table.metadata.current_snapshot_id
    assert head_id == rewritten["snapshot_id"] and table.current_snapshot().summary["icemaint.job"] == "manifests"
    manifests_after, files_after, _ = current_files(table)
    assert manifests_after < manifests and files_after == compacted, (manifests, manifests_after)
    assert_same_rows(matrix, name, after_writers)

    # STATS: a distinct-value sketch (Puffin) and a partition statistics file, written to the
    # store and registered for the current snapshot, which adds no snapshot. SeaweedFS's table
    # bucket (the REST catalog's) refuses Iceberg's partition statistics file by its name: the
    # run says so in one line, and the sketches alone are written.
    if catalog in TABLE_BUCKET:
        refused = matrix.cli("stats", name, "--verify", expect=1)
        assert "refused to write the partition statistics file (403)" in refused.stderr.strip().splitlines()[0], refused.stderr
        stats = matrix.cli_json("stats", name, "--no-partition-stats", "--verify")
    else:
        stats = matrix.cli_json("stats", name, "--verify")
    assert stats["status"] in ("committed", "noop") and stats.get("content_verified") is not False, stats
    table = load_table(config, ref)
    assert table.metadata.current_snapshot_id == head_id
    registered = [f for f in (*table.metadata.statistics, *table.metadata.partition_statistics) if f.snapshot_id == head_id]
    assert len(registered) == (1 if catalog in TABLE_BUCKET else 2) and all(storage.exists(f.statistics_path) for f in registered), registered

    expire = matrix.cli_json("expire", name, "--older-than", "0s", "--retain-last", "1", "--checkpoint-key", CHECKPOINT_KEY, "--verify")
    assert expire["status"] == "committed" and expire["files_deleted"] > 0 and expire["content_verified"], expire
    table = load_table(config, ref)
    # Kept: the head and every snapshot back to the checkpoint (a sink walks parents to find it).
    assert {s.snapshot_id for s in table.metadata.snapshots} == {checkpoint_id, append_id, compact["snapshot_id"], head_id}
    assert live_other in referenced_by_snapshots(table)  # by the checkpoint
    missing = sorted(f for f in referenced_by_snapshots(table) if not storage.exists(f))
    assert not missing, f"referenced files gone after EXPIRE: {missing[:5]}"
    assert_same_rows(matrix, name, after_writers)

    # ORPHANS. With the policy floor of an hour, nothing planted here is old enough yet.
    recent = write_frame(table.io, f"{location}/data/region=3/orphan-recent-{tag}.parquet", row_file(table, range(5, 6), 3))
    cautious = matrix.cli_json("orphans", name, "--older-than", "1h", "--verify")
    # EXPIRE deleted the delete files REWRITE and CONVERT wrote into their output folders: on a
    # local disk the empty folders are left, and ORPHANS removes them whatever its age margin.
    assert cautious["status"] == ("committed" if cautious["staging_folders_found"] else "noop") and cautious.get("files_deleted", 0) == 0, cautious
    assert cautious["staging_folders_found"] == (cautious.get("staging_folders_removed", 0) if catalog == "sql_local" else 0), cautious
    assert cautious["orphan_files_found"] == 0 and cautious["recent_files_kept"] >= len(old_orphans) + 1, cautious

    # The store cannot be made to backdate a file (S3 cannot): take a margin that the
    # planted files (and every live file, all written before them) have outlived, and that
    # the fresh orphan, planted seconds ago, has not.
    age = time.time() - planted_at
    if age < 90:
        time.sleep(90 - age)
        age = 90.0
    margin = f"{int(age) - 30}s"
    dry = matrix.cli_json("orphans", name, "--older-than", margin, "--force", "--dry-run")
    assert sorted(canonical(p) for p in dry["would_delete"]) == sorted(canonical(p) for p in planted), dry

    files_before = storage.files(location)
    orphans = matrix.cli_json("orphans", name, "--older-than", margin, "--force", "--verify")
    files_after = storage.files(location)
    assert orphans["status"] == "committed" and orphans["files_deleted"] == len(planted), orphans
    assert orphans["content_verified"] is True and orphans["fingerprint_before"] == orphans["fingerprint_after"], orphans
    assert files_before - files_after == {canonical(p) for p in planted}
    assert storage.exists(recent) and storage.exists(live_other)
    table = load_table(config, ref)
    missing = sorted(f for f in referenced_by_snapshots(table) if not storage.exists(f))
    assert not missing, f"referenced files gone after ORPHANS: {missing[:5]}"
    assert_same_rows(matrix, name, after_writers)
    logs = sorted((config.home / "logs").glob("*"))
    assert logs and not [log.name for log in logs if SECRET_KEY in log.read_text(errors="replace")], "the S3 secret reached a log"
