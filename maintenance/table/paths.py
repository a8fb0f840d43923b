"""One spelling per file: paths are normalised before they are ever compared.

The same file is `file:/x`, `file:///x` or `/x` depending on who wrote its name (Spark,
Hadoop, pyarrow, Iceberg Java), `s3://`, `s3a://` or `s3n://` depending on the client, and
percent-encoded or not. Comparing raw strings would take a live file for an orphan, or miss
a file when mapping rows back to the table's files.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

_S3_SCHEMES = {"s3", "s3a", "s3n"}
_SLASHES = re.compile(r"/{2,}")


def normalise(path: str) -> str:
    """A canonical key for a file location: `/abs/path` for local files, `s3://bucket/key` for S3."""
    local = _plain_local(path)
    return local if local is not None else _parsed_key(path)


def _parsed_key(path: str) -> str:
    """The general rule: the location parsed as a URI."""
    parts = urlsplit(path)
    scheme = parts.scheme.lower()
    if scheme in ("", "file"):
        local = unquote(parts.path if scheme else path)
        local = _SLASHES.sub("/", local)
        return local.rstrip("/") or "/"
    if scheme in _S3_SCHEMES:
        scheme = "s3"
    key = _SLASHES.sub("/", unquote(parts.path)).rstrip("/")
    return f"{scheme}://{parts.netloc.lower()}{key}"


def _plain_local(path: str) -> str | None:
    """The key of a local path spelled plainly (`/x`, `file:/x`, `file:///x`: nothing to
    unquote, no doubled slash, no query or fragment), without parsing it: the same key the
    general rule below gives, found in a fraction of the time (a listing of millions of
    files asks for millions of keys). None when the general rule must decide."""
    if "%" in path:
        return None
    local = local_uri_path(path)
    if local is None:
        return None
    if "//" in local or (local is not path and ("?" in local or "#" in local)):
        return None
    return local.rstrip("/") or "/"


def local_uri_path(path: str) -> str | None:
    """The path part, as written (not unquoted), of a local location spelled `/x`, `file:/x`
    or `file:///x`; None for any other spelling (a host, another scheme)."""
    if path.startswith("/"):
        return path
    if path.startswith("file:///"):
        return path[7:]
    if path.startswith("file:/") and not path.startswith("file://"):
        return path[5:]
    return None


def is_s3(path: str) -> bool:
    """Whether the file is an S3 object (any of the clients' schemes)."""
    return urlsplit(path).scheme.lower() in _S3_SCHEMES


def is_local(path: str) -> bool:
    """Whether the file is on a local (or locally mounted) disk, not behind an object store's
    requests."""
    return urlsplit(path).scheme.lower() in ("", "file")


def hadoop_path(path: str) -> str:
    """The spelling Spark's Hadoop file systems read: s3:// and s3n:// become s3a://."""
    parts = urlsplit(path)
    if parts.scheme.lower() in ("s3", "s3n"):
        return "s3a" + path[len(parts.scheme) :]
    return path


def without_authority(path: str) -> str:
    """The path part of a normalised key, scheme and authority dropped: two files with the
    same path part but different keys are an authority mismatch, never to be guessed at."""
    key = normalise(path)
    parts = urlsplit(key)
    return parts.path if parts.scheme else key


def authority_of(key: str) -> str:
    """The scheme and authority of a normalised key (`s3://bucket`), '' for a local file:
    cheap enough to ask of every referenced file of a table."""
    if key.startswith("/"):
        return ""
    scheme, _, rest = key.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}"


def is_under(path: str, folder: str) -> bool:
    """Whether `path` lies inside `folder` (same scheme and authority), spellings normalised.
    `/t/a` is not under `/t/ab`: the comparison is by whole path segments."""
    key, root = normalise(path), normalise(folder)
    return key != root and key.startswith(root.rstrip("/") + "/")
