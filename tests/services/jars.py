"""The jars the services need: pyspark's own, and the pinned ones `make setup` fetched (`maintenance/spark/jars.py`)."""

from __future__ import annotations

from pathlib import Path

from maintenance.spark.jars import S3A, jars_for
from maintenance.spark.session import SYSTEM_SQLITE_JDBC, iceberg_runtime_jar

REPO = Path(__file__).resolve().parents[2]


def pyspark_jars_dir() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent / "jars"


def s3a_jars() -> list[str]:
    """hadoop-aws and the AWS SDK bundle it was built against, for Hadoop's s3a://."""
    return jars_for(S3A)


def sqlite_jdbc_jar() -> str:
    return SYSTEM_SQLITE_JDBC


__all__ = ["REPO", "iceberg_runtime_jar", "pyspark_jars_dir", "s3a_jars", "sqlite_jdbc_jar"]
