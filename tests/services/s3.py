"""The object store and REST catalog of the tests: SeaweedFS (`maintenance/workload/seaweedfs.py`),
on free ports of 127.0.0.1, with the buckets a test names created at start.

One `weed mini` serves both S3 and an Iceberg REST catalog (warehouse `lake`, OAuth2 client
credentials = the S3 key pair): servers nobody here wrote, as users run them.
"""

from __future__ import annotations

from pathlib import Path

from maintenance.workload.seaweedfs import ACCESS_KEY, REGION, SECRET_KEY, SeaweedFS, start

S3Server = SeaweedFS

__all__ = ["ACCESS_KEY", "REGION", "SECRET_KEY", "S3Server", "hadoop_s3a_settings", "pyiceberg_s3_properties", "start_s3"]


def start_s3(folder: Path, *, buckets: tuple[str, ...] = (), timeout: float = 90.0) -> S3Server:
    return start(folder, buckets=buckets, timeout=timeout)


def hadoop_s3a_settings(server: S3Server) -> dict[str, str]:
    """Hadoop's s3a settings for the store (the Hive Metastore's core-site.xml).

    `fs.s3.impl` lets Hadoop read files other writers (pyiceberg, pyarrow) name `s3://`."""
    return {
        "fs.s3a.endpoint": server.endpoint,
        "fs.s3a.path.style.access": "true",
        "fs.s3a.connection.ssl.enabled": "false",
        "fs.s3a.access.key": server.access_key,
        "fs.s3a.secret.key": server.secret_key,
        "fs.s3a.endpoint.region": server.region,
        "fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
        "fs.s3a.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
        "fs.s3.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
    }


def pyiceberg_s3_properties(server: S3Server) -> dict[str, str]:
    """A catalog's `s3.*` properties for the store, as a user writes them (pyiceberg's names)."""
    return server.s3_properties()
