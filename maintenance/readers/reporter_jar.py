"""The jar readers put on their classpath to report their scans to icemaint
(`readers/java/ScanReportSender.java`).

`make setup` builds it (`python -m maintenance.readers.reporter_jar build`) with the JDK's
`javac` against the Iceberg runtime icemaint runs with and Spark's SLF4J, for Java 11 and
newer (Spark 3.5 and Flink 1.20 readers run on 11 or 17). It holds only icemaint's class:
the reader's own Iceberg runtime provides the rest, so it works with whichever Iceberg
release the reader runs that has the `MetricsReporter` API (1.1 and later). The file's name
carries a digest of the source, so a changed source is a new jar, never a stale one.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from maintenance.errors import ConfigError
from maintenance.spark.jars import SPARK_RUNTIME, jar, jars_dir

SOURCE = Path(__file__).resolve().parent / "java" / "ScanReportSender.java"
CLASS_NAME = "icemaint.readers.ScanReportSender"  # what a reader's `metrics-reporter-impl` names
JAVA_RELEASE = "11"
COMPILE_TIMEOUT_S = 120


def reporter_properties(url: str, token_file: str, catalog: str) -> dict[str, str]:
    """The catalog properties that make a reader's Iceberg catalog report its scans to the
    daemon at `url` (docs/deployment.md, "Readers' scan reports"), as icemaint's `catalog`."""
    return {"metrics-reporter-impl": CLASS_NAME, "icemaint.url": url, "icemaint.token-file": token_file, "icemaint.catalog": catalog}


def reporter_jar_path() -> Path:
    """Where the jar for this source is (built or not)."""
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    return jars_dir().parent / "readers" / f"icemaint-scan-reporter-{digest}.jar"


def reporter_jar() -> Path:
    """The built jar; a ConfigError naming the command that builds it when it is missing."""
    path = reporter_jar_path()
    if not path.is_file():
        raise ConfigError(f"{path.name} is not built: build it with 'make setup' (or 'python -m maintenance.readers.reporter_jar build')")
    return path


def build() -> Path:
    """Compile the reporter and write its jar (atomically); a no-op when it is there."""
    path = reporter_jar_path()
    if path.is_file():
        return path
    javac = shutil.which("javac")
    if javac is None:
        raise ConfigError("javac is not installed: the scan reporter is built with a JDK (Debian: openjdk-17-jdk-headless)")
    import pyspark

    classpath = [jar(SPARK_RUNTIME), str(Path(pyspark.__file__).parent / "jars" / "*")]
    with tempfile.TemporaryDirectory(prefix="icemaint-reporter-") as scratch:
        classes = Path(scratch) / "classes"
        done = subprocess.run([javac, "--release", JAVA_RELEASE, "-nowarn", "-cp", ":".join(classpath), "-d", str(classes), str(SOURCE)],
                              capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S, check=False)
        if done.returncode != 0:
            raise ConfigError(f"the scan reporter did not compile: {(done.stderr or done.stdout).strip().splitlines()[0]}")
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".part")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nCreated-By: icemaint\n\n")
            for compiled in sorted(classes.rglob("*.class")):
                archive.write(compiled, compiled.relative_to(classes).as_posix())
        partial.replace(path)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maintenance.readers.reporter_jar", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["build", "path"])
    args = parser.parse_args(argv)
    try:
        path = build() if args.command == "build" else reporter_jar()
    except (ConfigError, subprocess.TimeoutExpired) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"scan reporter: {path} (metrics-reporter-impl={CLASS_NAME})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
