"""Listing a table location from an S3 Inventory report instead of LIST requests.

A bucket of hundreds of millions of objects takes hours to LIST; S3 Inventory writes the
same listing daily or weekly as data files (CSV, gzip-compressed, or Parquet) described by
a `manifest.json`. ORPHANS can read that instead: `--inventory` names a report's
`manifest.json`, or the report configuration's folder
(`destination-prefix/source-bucket/config-ID/`), whose newest complete report is used
(one whose `manifest.checksum` is written, which S3 writes last).

Why a report as old as a day is safe to delete from: a file the report lists is deleted
only if no metadata read at planning time or right before each deletion batch references
it and it is older than the age margin (its LastModified, from the report); a file written
after the report is simply not listed, so not deleted (the next report has it). A listed
file already gone counts as such.

The entries stream (one data file at a time, a Parquet row group at a time): memory does
not grow with the report. Only the latest, non-delete-marker versions count, where the
report has version columns.
"""

from __future__ import annotations

import csv
import gzip
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import unquote_plus, urlsplit

from pyiceberg.io import FileIO

from maintenance.errors import UsageError
from maintenance.table.listing import ListedFile
from maintenance.table.paths import is_s3

BATCH = 10_000
_REPORT_FOLDER = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}Z$")
_COLUMNS = {"bucket": "Bucket", "key": "Key", "size": "Size", "last_modified_date": "LastModifiedDate",
            "is_latest": "IsLatest", "is_delete_marker": "IsDeleteMarker"}


@dataclass(frozen=True)
class InventoryReport:
    manifest: str  # where its manifest.json is
    source_bucket: str
    file_format: str  # CSV or Parquet
    csv_columns: tuple[str, ...]  # CSV only: the fileSchema's names, in order
    files: tuple[str, ...]  # the data files, as s3:// locations
    created_ms: int


def find_report(io: FileIO, location: str) -> str:
    """`location` if it names a manifest.json; else the newest complete report under it."""
    if location.rstrip("/").endswith("manifest.json"):
        return location
    from pyarrow.fs import FileSelector, FileType

    parse, fs_by_scheme = getattr(io, "parse_location", None), getattr(io, "fs_by_scheme", None)
    if parse is None or fs_by_scheme is None:
        raise UsageError(f"cannot read {location}: the catalog's FileIO ({type(io).__name__}) is not pyiceberg's PyArrowFileIO")
    scheme, netloc, root = parse(location, getattr(io, "properties", {}))
    fs = fs_by_scheme(scheme, netloc)
    root = root.rstrip("/")
    folders = sorted((info.base_name for info in fs.get_file_info(FileSelector(root, allow_not_found=True))
                      if info.type == FileType.Directory and _REPORT_FOLDER.match(info.base_name)), reverse=True)
    for folder in folders:
        if fs.get_file_info(f"{root}/{folder}/manifest.checksum").type == FileType.File:
            return f"{location.rstrip('/')}/{folder}/manifest.json"
    raise UsageError(f"no complete S3 Inventory report under {location} (a YYYY-MM-DDTHH-MMZ folder with manifest.json and manifest.checksum)")


def read_report(io: FileIO, manifest: str) -> InventoryReport:
    try:
        with io.new_input(manifest).open() as stream:
            raw = json.load(stream)
        destination = raw["destinationBucket"].rsplit(":", 1)[-1]  # arn:aws:s3:::bucket
        file_format = raw["fileFormat"]
        files = tuple(f"s3://{destination}/{entry['key']}" for entry in raw["files"])
        columns = tuple(name.strip() for name in raw.get("fileSchema", "").split(",")) if file_format.upper() == "CSV" else ()
        report = InventoryReport(manifest, raw["sourceBucket"], file_format, columns, files, int(raw.get("creationTimestamp", 0)))
    except FileNotFoundError:
        raise UsageError(f"no S3 Inventory manifest at {manifest}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UsageError(f"{manifest} is not an S3 Inventory manifest.json ({type(exc).__name__}: {exc})") from None
    if report.file_format.upper() not in ("CSV", "PARQUET"):
        raise UsageError(f"S3 Inventory reports in {report.file_format} are not read; use CSV or Parquet")
    if report.file_format.upper() == "CSV" and not {"Bucket", "Key", "Size", "LastModifiedDate"} <= set(columns):
        raise UsageError(f"the S3 Inventory report {manifest} lacks Size or LastModifiedDate (add them to the inventory's fields)")
    return report


def walk_inventory(io: FileIO, report: InventoryReport, location: str) -> Iterator[list[ListedFile]]:
    """The report's objects below `location`, in batches, spelled as `walk_location` spells
    them (`s3://bucket/key`, relative to the location)."""
    parts = urlsplit(location)
    if not is_s3(location):
        raise UsageError(f"an S3 Inventory report lists S3 objects; the table is at {location}")
    bucket, root = parts.netloc, parts.path.strip("/")
    if bucket != report.source_bucket:
        raise UsageError(f"the S3 Inventory report {report.manifest} is of bucket {report.source_bucket}, the table is in {bucket}")
    prefix = f"{root}/" if root else ""
    qualifier = f"s3://{bucket}/{root}" if root else f"s3://{bucket}"
    batch: list[ListedFile] = []
    found = 0
    for key, size, mtime_ms in _entries(io, report):
        if not key.startswith(prefix) or key.endswith("/"):
            continue
        relative = key[len(prefix) :]
        batch.append(ListedFile(f"{qualifier}/{relative}", relative, mtime_ms, size))
        found += 1
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch
    if not found:
        raise UsageError(f"the S3 Inventory report {report.manifest} lists nothing under {location} (it covers another prefix?); nothing deleted")


def _entries(io: FileIO, report: InventoryReport) -> Iterator[tuple[str, int, int]]:
    """(key, size, last modified ms) of every current object of the report's source bucket."""
    for data_file in report.files:
        if report.file_format.upper() == "CSV":
            yield from _csv_entries(io, data_file, report)
        else:
            yield from _parquet_entries(io, data_file, report)


def _csv_entries(io: FileIO, data_file: str, report: InventoryReport) -> Iterator[tuple[str, int, int]]:
    index = {name: i for i, name in enumerate(report.csv_columns)}
    with io.new_input(data_file).open() as raw, gzip.open(raw, "rt", encoding="utf-8", newline="") as text:
        for row in csv.reader(text):
            if row[index["Bucket"]] != report.source_bucket or not _current(row, index):
                continue
            yield unquote_plus(row[index["Key"]]), int(row[index["Size"]] or 0), _iso_ms(row[index["LastModifiedDate"]])  # CSV keys are URL-encoded


def _current(row: list[str], index: dict[str, int]) -> bool:
    latest = index.get("IsLatest")
    marker = index.get("IsDeleteMarker")
    return (latest is None or row[latest].lower() != "false") and (marker is None or row[marker].lower() != "true")


def _parquet_entries(io: FileIO, data_file: str, report: InventoryReport) -> Iterator[tuple[str, int, int]]:
    import pyarrow.parquet as pq

    with io.new_input(data_file).open() as raw:
        parquet = pq.ParquetFile(raw)
        names = set(parquet.schema_arrow.names)
        if not {"bucket", "key", "size", "last_modified_date"} <= names:
            raise UsageError(f"the S3 Inventory data file {data_file} lacks size or last_modified_date")
        columns = [name for name in _COLUMNS if name in names]
        for batch in parquet.iter_batches(columns=columns, batch_size=BATCH):
            rows = batch.to_pydict()
            count = len(rows["key"])
            latest, markers = rows.get("is_latest") or [True] * count, rows.get("is_delete_marker") or [False] * count
            for key, bucket, size, modified, is_latest, is_marker in zip(rows["key"], rows["bucket"], rows["size"], rows["last_modified_date"], latest, markers):
                if bucket != report.source_bucket or is_latest is False or is_marker is True:
                    continue
                yield key, int(size or 0), int(modified.timestamp() * 1000) if isinstance(modified, datetime) else int(modified)


def _iso_ms(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)
