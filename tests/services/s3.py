"""An S3 server for the tests: moto's (`moto_server`), on a free port, buckets created up front."""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.services.process import ServiceProcess, free_port

ACCESS_KEY = "icemaint-test-key"
SECRET_KEY = "icemaint-test-secret"
REGION = "us-east-1"


@dataclass
class S3Server:
    process: ServiceProcess
    endpoint: str  # http://127.0.0.1:<port>
    startup_s: float

    def client(self):  # type: ignore[no-untyped-def]
        """A boto3 client: the tests' own view of the bucket, independent of icemaint's."""
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY, region_name=REGION)

    def create_bucket(self, name: str) -> None:
        self.client().create_bucket(Bucket=name)

    def stop(self) -> None:
        self.process.stop()


def start_s3(folder: Path, timeout: float = 60.0) -> S3Server:
    port = free_port()
    moto = shutil.which("moto_server", path=str(Path(sys.executable).parent)) or "moto_server"
    process = ServiceProcess("moto-s3", [moto, "-H", "127.0.0.1", "-p", str(port)], folder)
    startup = process.wait_for_port(port, timeout)
    return S3Server(process=process, endpoint=f"http://127.0.0.1:{port}", startup_s=startup)


def hadoop_s3a_settings(server: S3Server) -> dict[str, str]:
    """Hadoop's s3a settings for the moto server (as `spark.hadoop.` keys they reach Spark).

    `fs.s3.impl` lets Hadoop read files other writers (pyiceberg, pyarrow) name `s3://`."""
    return {
        "fs.s3a.endpoint": server.endpoint,
        "fs.s3a.path.style.access": "true",
        "fs.s3a.connection.ssl.enabled": "false",
        "fs.s3a.access.key": ACCESS_KEY,
        "fs.s3a.secret.key": SECRET_KEY,
        "fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
        "fs.s3a.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
        "fs.s3.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
    }


def pyiceberg_s3_properties(server: S3Server) -> dict[str, str]:
    """pyiceberg's (pyarrow's) S3 file system settings for the moto server."""
    return {
        "s3.endpoint": server.endpoint,
        "s3.access-key-id": ACCESS_KEY,
        "s3.secret-access-key": SECRET_KEY,
        "s3.region": REGION,
        "s3.force-virtual-addressing": "false",
    }
