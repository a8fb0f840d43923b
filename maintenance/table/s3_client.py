"""One boto3 S3 client per set of a catalog's `s3.*` settings, for what pyiceberg's FileIO
does one request at a time: bulk deletion (`bulk_removal.py`) and the flat prefix listing
of a table location (`listing.py`).

boto3 is a dependency of pyiceberg's Glue support. The client reads the same `s3.*`
properties pyiceberg's FileIO reads (Iceberg's `client.*` spellings too), uses botocore's
standard retries for whole requests (throttling, 5xx, dropped connections), and bounds
every request in time: a store that accepts a connection and never answers fails the
call within `READ_TIMEOUT_S` per attempt instead of hanging the job.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

CONNECT_TIMEOUT_S = 5
READ_TIMEOUT_S = 30
ATTEMPTS = 5
_clients: dict[tuple[tuple[str, str], ...], Any] = {}
_clients_lock = threading.Lock()


def s3_client(properties: Mapping[str, str]) -> Any:
    """The client for these settings (clients are thread-safe; making one is slow)."""
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
    style = "virtual" if virtual else "path" if endpoint else "auto"  # a custom endpoint (MinIO, SeaweedFS) is path-style unless told
    config = Config(retries={"mode": "standard", "max_attempts": ATTEMPTS}, max_pool_connections=32, s3={"addressing_style": style},
                    connect_timeout=CONNECT_TIMEOUT_S, read_timeout=READ_TIMEOUT_S)
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=settings.get("s3.access-key-id") or settings.get("client.access-key-id"),
        aws_secret_access_key=settings.get("s3.secret-access-key") or settings.get("client.secret-access-key"),
        aws_session_token=settings.get("s3.session-token") or settings.get("client.session-token"),
        region_name=settings.get("s3.region") or settings.get("client.region"),
        config=config,
    )
