"""Deleting objects from S3 in bulk: one DeleteObjects request takes up to 1,000 keys of one
bucket, where pyiceberg's FileIO sends one DeleteObject request a key. A million orphans
are a thousand requests, not a million (and S3 bills and throttles per request).

The client is boto3's (`s3_client.py`: the `s3.*` properties pyiceberg's FileIO reads,
botocore's standard retries for whole requests, every request bounded in time). A key the request reports as failed with a
transient code (SlowDown, InternalError, ServiceUnavailable) is returned for the caller to
send again; any other failure (AccessDenied) is an error. S3 reports a key that was not
there as deleted: on S3 every file is counted deleted, none "already gone".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from maintenance.table.paths import normalise
from maintenance.table.s3_client import s3_client

MAX_KEYS = 1000  # DeleteObjects' limit
TRANSIENT = frozenset({"SlowDown", "InternalError", "ServiceUnavailable", "RequestTimeout", "OperationAborted"})


@dataclass(frozen=True)
class Failed:
    path: str
    code: str
    message: str

    @property
    def transient(self) -> bool:
        return self.code in TRANSIENT


def chunks(paths: Sequence[str]) -> list[list[str]]:
    """Paths grouped by bucket, at most `MAX_KEYS` a group: one request each."""
    by_bucket: dict[str, list[str]] = {}
    for path in paths:
        by_bucket.setdefault(urlsplit(normalise(path)).netloc, []).append(path)
    return [group[i : i + MAX_KEYS] for group in by_bucket.values() for i in range(0, len(group), MAX_KEYS)]


def delete_objects(properties: Mapping[str, str], paths: Sequence[str]) -> list[Failed]:
    """Delete `paths` (one bucket, at most `MAX_KEYS`) in one request; the ones that failed."""
    if not paths:
        return []
    if len(paths) > MAX_KEYS:
        raise ValueError(f"at most {MAX_KEYS} keys a request, not {len(paths)}")
    parts = [urlsplit(normalise(path)) for path in paths]
    buckets = {part.netloc for part in parts}
    if len(buckets) != 1:
        raise ValueError("one bucket a request")
    by_key = {part.path.lstrip("/"): path for part, path in zip(parts, paths)}
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        answer = s3_client(properties).delete_objects(Bucket=buckets.pop(), Delete={"Objects": [{"Key": key} for key in by_key], "Quiet": True})
    except ClientError as exc:  # after botocore's retries; the code only (the message may echo the request)
        raise OSError(f"DeleteObjects refused: {exc.response.get('Error', {}).get('Code', 'unknown error')}") from None
    except BotoCoreError as exc:
        raise OSError(f"DeleteObjects failed: {type(exc).__name__}") from None
    return [Failed(by_key.get(error.get("Key", ""), error.get("Key", "")), error.get("Code", ""), error.get("Message", "")) for error in answer.get("Errors", [])]
