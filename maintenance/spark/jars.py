"""The Java artifacts icemaint runs with, from Maven Central, pinned by checksum.

Apache Iceberg's own jars, one version for all of them (`ICEBERG_VERSION`), and Hadoop's
`s3a` for tables whose paths say `s3a://`, matching the `hadoop-client` pyspark ships. They
are fetched once, by `make setup` (or the Docker build) running `python -m
maintenance.spark.jars fetch`, into one folder that the tests, the CLI and the daemon share
(`jars_dir`). A job never downloads anything: a jar that is missing or altered is a
configuration error naming the command that fetches it.

Why Iceberg 1.11.0: the newest release that ships all three of the Spark 3.5 runtime, the
AWS bundle and the Flink 1.20 runtime (1.12.0 has no Flink 1.20 runtime), and the Java
helpers in `spark/java/` compile against it (`java/README.md` lists the internals each one
touches and the version it was checked against).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from maintenance.errors import ConfigError

ICEBERG_VERSION = "1.11.0"
HADOOP_VERSION = "3.3.4"  # pyspark 3.5's hadoop-client-api / -runtime
MAVEN = os.environ.get("ICEMAINT_MAVEN_REPOSITORY", "https://repo1.maven.org/maven2").rstrip("/")
JARS_ENV = "ICEMAINT_JARS"
DOWNLOAD_TIMEOUT_S = 60  # per read: a stalled mirror fails instead of hanging setup

SPARK, S3A, FLINK = "spark", "s3a", "flink"
SPARK_RUNTIME = "iceberg-spark-runtime-3.5_2.12"
AWS_BUNDLE = "iceberg-aws-bundle"


@dataclass(frozen=True)
class Artifact:
    """One jar of Maven Central, with the SHA-256 it must have."""

    group: str
    name: str
    version: str
    sha256: str
    size: int
    purpose: str  # SPARK: every Spark session; S3A: Hadoop's s3a:// (sessions with S3 catalogs, the Hive Metastore); FLINK: the Flink writer

    @property
    def file_name(self) -> str:
        return f"{self.name}-{self.version}.jar"

    @property
    def url(self) -> str:
        return f"{MAVEN}/{self.group.replace('.', '/')}/{self.name}/{self.version}/{self.file_name}"


ARTIFACTS: tuple[Artifact, ...] = (
    Artifact("org.apache.iceberg", SPARK_RUNTIME, ICEBERG_VERSION,
             "94b8e36fc329f0293d44ba9e01b784a56e9501affec1842d898144c51f6e486a", 47_964_645, SPARK),
    # S3FileIO (and the other clouds' FileIOs) with the AWS SDK v2, shaded: what a catalog's s3.* settings configure.
    Artifact("org.apache.iceberg", AWS_BUNDLE, ICEBERG_VERSION,
             "38f01da7e96850cdd05e6616d758b77b43314b712a8808e3f9a824d56976162f", 63_613_165, SPARK),
    Artifact("org.apache.hadoop", "hadoop-aws", HADOOP_VERSION,
             "53f9ae03c681a30a50aa17524bd9790ab596b28481858e54efd989a826ed3a4a", 962_685, S3A),
    # The AWS SDK v1 bundle hadoop-aws 3.3.4 was built against (its pom's version).
    Artifact("com.amazonaws", "aws-java-sdk-bundle", "1.12.262",
             "873fe7cf495126619997bec21c44de5d992544aea7e632fdc77adb1a0915bae5", 280_645_251, S3A),
    Artifact("org.apache.iceberg", "iceberg-flink-runtime-1.20", ICEBERG_VERSION,
             "33f7c29e2d53ef2c6e2942c1c324d817a03e32cc080f8a8b3056a3d0846e3691", 39_118_327, FLINK),
)


def jars_dir() -> Path:
    """Where the jars are: `$ICEMAINT_JARS`, else `share/icemaint/jars` under the Python
    environment icemaint is installed in (the venv of `make setup`, the image's)."""
    configured = os.environ.get(JARS_ENV)
    return Path(configured).expanduser() if configured else Path(sys.prefix) / "share" / "icemaint" / "jars"


def artifact(name: str) -> Artifact:
    return next(a for a in ARTIFACTS if a.name == name)


def jar(name: str) -> str:
    """The path of an artifact's jar, which must be there with its pinned size (the checksum
    was checked when it was fetched; reading 300 MB at every start would cost seconds)."""
    wanted = artifact(name)
    path = jars_dir() / wanted.file_name
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise ConfigError(f"{wanted.file_name} is not in {jars_dir()}: fetch it with 'make setup' "
                          f"(or 'python -m maintenance.spark.jars fetch --for {wanted.purpose}')") from None
    if size != wanted.size:
        raise ConfigError(f"{path} has {size} bytes, not the {wanted.size} pinned: fetch it again with 'python -m maintenance.spark.jars fetch'")
    return str(path)


def jars_for(*purposes: str) -> list[str]:
    return [jar(a.name) for a in ARTIFACTS if a.purpose in purposes]


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def fetch(purposes: Iterable[str], folder: Path | None = None, log=print, recheck: bool = False) -> list[Path]:  # type: ignore[no-untyped-def]
    """Download the artifacts of `purposes` not already in `folder`. Each is written under a
    temporary name, checked against its SHA-256, then renamed, so a jar of the right name
    and size was checked when it came; `recheck` hashes those again."""
    folder = folder or jars_dir()
    folder.mkdir(parents=True, exist_ok=True)
    wanted = [a for a in ARTIFACTS if a.purpose in set(purposes)]
    paths = []
    for item in wanted:
        path = folder / item.file_name
        paths.append(path)
        if path.is_file() and path.stat().st_size == item.size and (not recheck or sha256_of(path) == item.sha256):
            continue
        log(f"jars: downloading {item.file_name} ({item.size / 2**20:.0f} MiB) from {MAVEN}")
        partial = folder / f".{item.file_name}.{os.getpid()}.part"
        try:
            with urllib.request.urlopen(item.url, timeout=DOWNLOAD_TIMEOUT_S) as response, partial.open("wb") as out:
                while chunk := response.read(1 << 20):
                    out.write(chunk)
            got = sha256_of(partial)
            if got != item.sha256:
                raise ConfigError(f"{item.url} has SHA-256 {got}, not the pinned {item.sha256}: not used")
            partial.replace(path)
        finally:
            partial.unlink(missing_ok=True)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maintenance.spark.jars", description="Fetch or locate icemaint's pinned Java artifacts.")
    commands = parser.add_subparsers(dest="command", required=True)
    fetching = commands.add_parser("fetch", help="download the missing jars into the jars folder, checking their SHA-256")
    fetching.add_argument("--for", dest="purposes", default=f"{SPARK},{S3A},{FLINK}", help=f"comma-separated: {SPARK}, {S3A}, {FLINK} (default: all)")
    fetching.add_argument("--dir", type=Path, default=None, help=f"the folder (default: ${JARS_ENV} or <python prefix>/share/icemaint/jars)")
    fetching.add_argument("--recheck", action="store_true", help="hash the jars already there again (they were checked when fetched)")
    commands.add_parser("dir", help="print the jars folder")
    args = parser.parse_args(argv)
    if args.command == "dir":
        print(jars_dir())
        return 0
    purposes = [p.strip() for p in args.purposes.split(",") if p.strip()]
    unknown = sorted(set(purposes) - {SPARK, S3A, FLINK})
    if unknown:
        print(f"jars: unknown purpose {', '.join(unknown)} (use {SPARK}, {S3A}, {FLINK})", file=sys.stderr)
        return 2
    try:
        fetch(purposes, args.dir, log=lambda line: print(line, file=sys.stderr), recheck=args.recheck)
    except (OSError, ConfigError) as exc:
        print(f"jars: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
