"""The jars the services and Spark need: pyspark's own, Iceberg's runtime, and the two S3 jars."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from maintenance.spark.session import SYSTEM_SQLITE_JDBC, iceberg_runtime_jar

REPO = Path(__file__).resolve().parents[2]
S3_JARS_DIR = REPO / ".venv" / "share" / "icemaint-jars"
S3_JAR_NAMES = ("hadoop-aws-3.3.1.jar", "aws-java-sdk-bundle-1.11.901.jar")


def pyspark_jars_dir() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent / "jars"


def s3_jars() -> list[str]:
    """hadoop-aws and the AWS SDK bundle, fetched once by scripts/s3-jars.sh (a no-op when present)."""
    jars = [S3_JARS_DIR / name for name in S3_JAR_NAMES]
    if not all(j.is_file() and j.stat().st_size > 0 for j in jars):
        subprocess.run(["bash", str(REPO / "scripts" / "s3-jars.sh"), sys.executable], check=True, cwd=REPO)
    return [str(j) for j in jars]


def sqlite_jdbc_jar() -> str:
    return SYSTEM_SQLITE_JDBC


__all__ = ["REPO", "iceberg_runtime_jar", "pyspark_jars_dir", "s3_jars", "sqlite_jdbc_jar"]
