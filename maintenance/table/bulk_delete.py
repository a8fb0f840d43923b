"""Deleting objects from S3 in bulk: one DeleteObjects request takes up to 1,000 keys of one
bucket, where pyiceberg's FileIO sends one DeleteObject request a key. A million orphans
are a thousand requests, not a million (and S3 bills and throttles per request).

The client is boto3's (a dependency of pyiceberg's Glue support), configured from the same
`s3.*` properties pyiceberg's FileIO reads, with botocore's standard retries for whole
requests (throttling, 5xx, dropped connections). A key the request reports as failed with a
transient code (SlowDown, InternalError, ServiceUnavailable) is returned for the caller to
send again; any other failure (AccessDenied) is an error. S3 reports a key that was not
there as deleted: on S3 every file is counted deleted, none "already gone".
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from maintenance.table.paths import normalise

MAX_KEYS = 1000  # DeleteObjects' limit
TRANSIENT = frozenset({"SlowDown", "InternalError", "ServiceUnavailable", "RequestTimeout", "OperationAborted"})
_clients: dict[tuple[tuple[str, str], ...], Any] = {}
_clients_lock = threading.Lock()


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
        answer = _client(properties).delete_objects(Bucket=buckets.pop(), Delete={"Objects": [{"Key": key} for key in by_key], "Quiet": True})
    except ClientError as exc:  # after botocore's retries; the code only (the message may echo the request)
        raise OSError(f"DeleteObjects refused: {exc.response.get('Error', {}).get('Code', 'unknown error')}") from None
    except BotoCoreError as exc:
        raise OSError(f"DeleteObjects failed: {type(exc).__name__}") from None
    return [Failed(by_key.get(error.get("Key", ""), error.get("Key", "")), error.get("Code", ""), error.get("Message", "")) for error in answer.get("Errors", [])]


def _client(properties: Mapping[str, str]) -> Any:
    """One boto3 client per set of S3 settings (clients are thread-safe; making one is slow)."""
    settings = {key: str(value) for key, value in properties.items() if key.startswith(("s3.", "client."))}
    frozen = tuple(sorted(settings.items()))
    with _clients_lock:
        found = _clients.get(frozen)
        if found is None:
            found = _clients[frozen] = _new_client(settings)
        return found


def _new_client(settings: Mapping[str, str]) -> Any:
    import boto3
    from botocore.config import Config

    virtual = settings.get("s3.force-virtual-addressing", "").lower() == "true"
    endpoint = settings.get("s3.endpoint")
    style = "virtual" if virtual else "path" if endpoint else "auto"  # a custom endpoint (MinIO, moto) is path-style unless told
    config = Config(retries={"mode": "standard", "max_attempts": 5}, max_pool_connections=32, s3={"addressing_style": style})
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=settings.get("s3.access-key-id") or settings.get("client.access-key-id"),
        aws_secret_access_key=settings.get("s3.secret-access-key") or settings.get("client.secret-access-key"),
        aws_session_token=settings.get("s3.session-token") or settings.get("client.session-token"),
        region_name=settings.get("s3.region") or settings.get("client.region"),
        config=config,
    )
