"""Listing everything under a table location, with modification times, without the JVM.

The listing goes through the file system pyiceberg built from the catalog's properties
(local, GCS, HDFS, ...), one bulk call per folder: tens of thousands of files list in well
under a second where a Hadoop iterator over Py4J would take a round trip per file, and a
location of tens of millions of files streams folder by folder (`walk_location`). On S3 it
is one flat prefix listing instead (S3 has no folders: a delimiter listing per "folder"
costs a request per partition and per level, the flat one a request per 1,000 keys,
whatever the layout), streamed a page at a time. Each file comes back spelled
`scheme://authority/path` (`file:///x` for local files).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from pyiceberg.io import FileIO

from maintenance.errors import UsageError

UNKNOWN_MTIME_MS = 2**62  # a store that gives no modification time: the file counts as just written (never old enough to delete)


@dataclass(frozen=True, slots=True)
class ListedFile:
    location: str  # fully qualified
    relative: str  # below the listed folder, '/'-separated, never starting with '/'
    mtime_ms: int
    size: int


def list_location(io: FileIO, location: str, folders: list[str] | None = None) -> list[ListedFile]:
    """Every file below `location`, recursively, sorted by relative path; an absent folder
    lists as empty. Folders (relative, as files are) go to `folders` when given. Holds the
    whole listing: for a table of any size, `walk_location` streams it."""
    found = [file for batch in walk_location(io, location, folders) for file in batch]
    return sorted(found, key=lambda f: f.relative)


def walk_location(io: FileIO, location: str, folders: list[str] | None = None) -> Iterator[list[ListedFile]]:
    """The files below `location`, a batch at a time, each batch sorted by name. Memory is
    bounded by one batch and the folders still to visit, never by the whole listing: a
    table location with tens of millions of files walks in the memory of one partition.

    On S3 a batch is one page of a flat prefix listing (up to 1,000 keys, in key order; S3
    has no folders, so `folders` gets none). Elsewhere a batch is one folder's files, from
    one non-recursive listing (a `readdir` on a local or HDFS disk), folders depth first in
    name order."""
    from pyarrow.fs import FileSelector, FileType

    parse = getattr(io, "parse_location", None)
    fs_by_scheme = getattr(io, "fs_by_scheme", None)
    if parse is None or fs_by_scheme is None:
        raise UsageError(f"cannot list {location}: the catalog's FileIO ({type(io).__name__}) is not pyiceberg's PyArrowFileIO")
    scheme, netloc, root = parse(location, getattr(io, "properties", {}))
    root = root.rstrip("/")
    prefix = _qualifier(scheme, netloc, root)
    inside = root + "/"
    if scheme in S3_SCHEMES:
        yield from _walk_s3(getattr(io, "properties", {}), netloc, inside[len(netloc) + 1 :], prefix, location)
        return
    fs = fs_by_scheme(scheme, netloc)
    pending = [root]
    while pending:
        folder = pending.pop()
        files, subfolders = [], []
        for info in fs.get_file_info(FileSelector(folder, recursive=False, allow_not_found=True)):
            kind, path = info.type, info.path  # each a conversion in pyarrow: asked once
            if kind is not FileType.File and kind is not FileType.Directory:
                continue
            if not path.startswith(inside):
                raise UsageError(f"listing {location} returned {path}, outside it; nothing deleted")
            relative = path[len(inside) :].rstrip("/")
            if kind is FileType.Directory:
                subfolders.append(path.rstrip("/"))
                if folders is not None:
                    folders.append(relative)
            else:
                mtime_ns = info.mtime_ns
                files.append(ListedFile(f"{prefix}/{relative}", relative, mtime_ns // 1_000_000 if mtime_ns is not None else UNKNOWN_MTIME_MS, info.size))
        pending.extend(sorted(subfolders, reverse=True))  # popped in name order
        if files:
            files.sort(key=lambda f: f.relative)
            yield files


S3_SCHEMES = ("s3", "s3a", "s3n")


def _walk_s3(properties: dict[str, str], bucket: str, key_prefix: str, qualifier: str, location: str) -> Iterator[list[ListedFile]]:
    """One ListObjectsV2 stream under the location's key prefix (ends with '/'), a page a
    batch. Keys ending in '/' are folder markers some tools write, not files."""
    from botocore.exceptions import BotoCoreError, ClientError

    from maintenance.table.s3_client import s3_client

    pages = s3_client(properties).get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=key_prefix)
    try:
        for page in pages:
            files = []
            for entry in page.get("Contents", ()):
                key = entry["Key"]
                if not key.startswith(key_prefix):
                    raise UsageError(f"listing {location} returned s3://{bucket}/{key}, outside it; nothing deleted")
                if key.endswith("/"):
                    continue
                relative = key[len(key_prefix) :]
                mtime = entry.get("LastModified")
                mtime_ms = int(mtime.timestamp() * 1000) if mtime is not None else UNKNOWN_MTIME_MS
                files.append(ListedFile(f"{qualifier}/{relative}", relative, mtime_ms, int(entry.get("Size", 0))))
            if files:
                files.sort(key=lambda f: f.relative)
                yield files
    except ClientError as exc:  # the code only: the message may echo the request
        code = exc.response.get("Error", {}).get("Code", "unknown error")
        if code == "NoSuchBucket":
            raise OSError(f"cannot list {location}: no bucket {bucket}") from None
        raise OSError(f"cannot list {location}: {code}") from None
    except BotoCoreError as exc:
        raise OSError(f"cannot list {location}: {type(exc).__name__}") from None


def _qualifier(scheme: str, netloc: str, root: str) -> str:
    """How the listed folder is spelled as a URI."""
    if scheme == "file":
        return f"file://{root}"
    if scheme in ("hdfs", "viewfs"):
        return f"{scheme}://{netloc}{root}"
    return f"{scheme}://{root}"  # object stores: pyarrow's path starts with the bucket
