"""ORPHANS on S3 (SeaweedFS): orphans go in bulk requests, and a run listed from an S3
Inventory report (CSV or Parquet, written here as S3 writes them) deletes exactly what the
LIST-driven run would.

The tables are pyiceberg's (`workload fleet`) in a SQL catalog whose warehouse is on S3: no
Spark. The tests' own boto3 client is the oracle for what is in the bucket."""

from __future__ import annotations

import csv
import gzip
import io
import json
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote_plus

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from maintenance.catalogs import TableRef, get_catalog, load_table
from maintenance.config import Config, parse_config
from maintenance.run.outcome import COMMITTED, PLANNED
from maintenance.run.runner import run_job
from maintenance.table.s3_client import s3_client
from maintenance.workload.fleet import FleetOptions, make_fleet
from tests.services.s3 import S3Server, pyiceberg_s3_properties, start_s3

pytestmark = pytest.mark.s3
BUCKET = "icemaint-orphans"
INVENTORY = f"s3://{BUCKET}/inventory/{BUCKET}/daily"


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    server = start_s3(tmp_path_factory.mktemp("seaweedfs"))
    server.create_bucket(BUCKET)
    yield server
    server.stop()


@pytest.fixture
def s3_config(s3: S3Server, tmp_path: Path) -> Config:
    return parse_config({
        "home": str(tmp_path / "home"),
        "catalogs": {"local": {"type": "sql", "uri": f"sqlite:///{tmp_path / 'catalog.db'}", "warehouse": f"s3://{BUCKET}/{tmp_path.name}",
                               "properties": pyiceberg_s3_properties(s3)}},
    }, source="tests", base_dir=tmp_path)


def s3_table(config: Config, namespace: str) -> tuple[TableRef, str]:
    make_fleet(get_catalog(config, "local", create=True), "local", FleetOptions(tables=1, namespace=namespace, commits=3, rows=30))
    ref = TableRef("local", (namespace,), "t00000")
    return ref, load_table(config, ref).location().removeprefix(f"s3://{BUCKET}/").rstrip("/")


def keys(s3: S3Server, prefix: str) -> dict[str, dict]:  # type: ignore[type-arg]
    found: dict[str, dict] = {}  # type: ignore[type-arg]
    for page in s3.client().get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
        found.update({o["Key"]: o for o in page.get("Contents", [])})
    return found


def plant(s3: S3Server, prefix: str, count: int) -> set[str]:
    client = s3.client()
    planted = {f"{prefix}/data/region={i % 3}/orphan-{i:05d}.parquet" for i in range(count)}
    planted.add(f"{prefix}/data/region=0/an orphan with spaces+plus.parquet")
    for key in planted:
        client.put_object(Bucket=BUCKET, Key=key, Body=b"x")
    client.put_object(Bucket=BUCKET, Key=f"{prefix}/data/_SUCCESS", Body=b"")  # hidden: stays
    return planted


def test_orphans_on_s3_go_a_thousand_keys_a_request(s3: S3Server, s3_config: Config) -> None:
    ref, prefix = s3_table(s3_config, "bulk")
    live = keys(s3, prefix)
    planted = plant(s3, prefix, 2_400)
    requests: list[int] = []
    client = s3_client(load_table(s3_config, ref).io.properties)
    client.meta.events.register("before-call.s3.DeleteObjects", lambda **_: requests.append(1))
    time.sleep(1.5)

    result = run_job(s3_config, ref, "orphans", {"older_than": 1, "force": True}, verify=True)

    assert result.status == COMMITTED and result.content_verified is True, result.error
    assert result.counters["files_deleted"] == len(planted)
    left = keys(s3, prefix)
    assert not planted & left.keys() and live.keys() <= left.keys() and f"{prefix}/data/_SUCCESS" in left
    assert len(requests) == 3, requests  # 2,401 keys of one bucket in one batch: 1,000 + 1,000 + 401


@pytest.mark.parametrize("file_format", ["CSV", "Parquet"])
def test_an_inventory_driven_run_deletes_exactly_what_the_list_driven_run_would(s3: S3Server, s3_config: Config, file_format: str) -> None:
    ref, prefix = s3_table(s3_config, f"inv_{file_format.lower()}")
    planted = plant(s3, prefix, 300)
    time.sleep(1.5)
    write_inventory(s3, file_format, "2026-11-26T00-00Z", complete=True, stale=True)  # an older report: not used
    write_inventory(s3, file_format, "2026-11-27T00-00Z", complete=True)
    write_inventory(s3, file_format, "2026-11-28T00-00Z", complete=False)  # being written: no manifest.checksum yet
    late = f"{prefix}/data/region=1/written-after-the-report.parquet"
    s3.client().put_object(Bucket=BUCKET, Key=late, Body=b"x")
    time.sleep(1.5)
    options = {"older_than": 1, "force": True}

    listed = run_job(s3_config, ref, "orphans", options, dry_run=True)
    assert listed.status == PLANNED
    would_delete = {p.removeprefix(f"s3://{BUCKET}/") for p in listed.counters["would_delete"]}
    assert would_delete == planted | {late}

    before = keys(s3, "")
    result = run_job(s3_config, ref, "orphans", {**options, "inventory": INVENTORY + "/"}, verify=True)
    assert result.status == COMMITTED and result.content_verified is True, result.error
    assert result.counters["files_deleted"] == len(planted) and result.counters["inventory_age_seconds"] >= 0
    after = keys(s3, "")
    assert before.keys() - after.keys() == planted  # exactly the LIST run's orphans that the report lists
    assert late in after  # not in the report: kept for the next one
    metadata = [k for k in after if k.startswith(f"{prefix}/metadata/")]
    assert metadata and all(k in after for k in before if k.startswith(prefix) and k not in planted)


def test_an_inventory_of_another_bucket_is_refused_in_one_line(s3: S3Server, s3_config: Config) -> None:
    ref, _ = s3_table(s3_config, "inv_other")
    write_inventory(s3, "CSV", "2026-11-27T00-00Z", complete=True, source_bucket="someone-elses-bucket", folder="elsewhere")
    result = run_job(s3_config, ref, "orphans", {"older_than": 1, "force": True, "inventory": f"s3://{BUCKET}/inventory/elsewhere/"}, verify=True)
    assert result.status == "failed" and "is of bucket someone-elses-bucket" in (result.error or ""), result.error
    assert result.counters.get("files_deleted", 0) == 0


def write_inventory(s3: S3Server, file_format: str, stamp: str, *, complete: bool, stale: bool = False, source_bucket: str = BUCKET,
                    folder: str = f"{BUCKET}/daily") -> None:
    """An S3 Inventory report of the bucket as it is now, laid out as S3 writes one: data files
    under `data/`, then `manifest.json`, then `manifest.checksum` (last, when complete). A
    `stale` report lists nothing (it must not be the one used)."""
    client = s3.client()
    objects = [] if stale else [o for k, o in keys(s3, "").items() if not k.startswith("inventory/")]
    base = f"inventory/{folder}/{stamp}"
    halves = [objects[: len(objects) // 2], objects[len(objects) // 2 :]]
    files = []
    for n, part in enumerate(halves):
        key = f"inventory/{folder}/data/{stamp}-{n}.{'csv.gz' if file_format == 'CSV' else 'parquet'}"
        body = _csv(part, source_bucket) if file_format == "CSV" else _parquet(part, source_bucket)
        client.put_object(Bucket=BUCKET, Key=key, Body=body)
        files.append({"key": key, "size": len(body), "MD5checksum": "0"})
    manifest = {"sourceBucket": source_bucket, "destinationBucket": f"arn:aws:s3:::{BUCKET}", "version": "2016-11-30",
                "creationTimestamp": str(int(time.time() * 1000)), "fileFormat": file_format,
                "fileSchema": "Bucket, Key, Size, LastModifiedDate, IsLatest, IsDeleteMarker", "files": files}
    client.put_object(Bucket=BUCKET, Key=f"{base}/manifest.json", Body=json.dumps(manifest).encode())
    if complete:
        client.put_object(Bucket=BUCKET, Key=f"{base}/manifest.checksum", Body=b"0")


def _csv(objects: list[dict], bucket: str) -> bytes:  # type: ignore[type-arg]
    text = io.StringIO()
    writer = csv.writer(text, quoting=csv.QUOTE_ALL)
    for o in objects:
        writer.writerow([bucket, quote_plus(o["Key"], safe="/"), o["Size"], o["LastModified"].strftime("%Y-%m-%dT%H:%M:%S.000Z"), "true", "false"])
    writer.writerow([bucket, "deleted-long-ago.parquet", "", "2020-01-01T00:00:00.000Z", "false", "true"])  # a delete marker
    return gzip.compress(text.getvalue().encode())


def _parquet(objects: list[dict], bucket: str) -> bytes:  # type: ignore[type-arg]
    table = pa.table({
        "bucket": [bucket] * len(objects), "key": [o["Key"] for o in objects], "size": pa.array([o["Size"] for o in objects], pa.int64()),
        "last_modified_date": pa.array([o["LastModified"] for o in objects], pa.timestamp("ms", tz="UTC")),
        "is_latest": [True] * len(objects), "is_delete_marker": [False] * len(objects),
    })
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()
