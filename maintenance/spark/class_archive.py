"""A class-data-sharing archive of the classes a job loads, so a new JVM maps them instead of
loading them: the fixed cost of every CLI job (and every cron run) is the JVM's start.

A job's JVM loads some 15,000 classes (Spark, Iceberg, the AWS SDK, Hadoop, Parquet) and
verifies each one; measured on a 2-core machine, a MERGE of a 20,000-row table took 9.0 s as
a CLI process and 7.4 s with this archive, and of a million-event table 16.4 s and 13.3 s
(`benchmarks/native_peer.py` reports the whole effect). The JDK's dynamic archive
(`-XX:ArchiveClassesAtExit`, Java 13+) is written once, by a training run
(`python -m maintenance.cli.class_archive build`, which `make setup` runs): tiny CDC
tables in a scratch home, on a local catalog and on the test store's REST catalog and S3,
every job on each, then the JVM's exit writes the archive, which is then moved into place
atomically. Every later driver JVM gets
`-XX:SharedArchiveFile=` when the archive for this Java and this Spark exists.

Why it is safe: the JVM checks an archive against its own build and class path before it
maps anything, and if they differ it says so in its log and loads classes as usual
(`-Xshare:auto`, the default); a class whose bytes differ from the archived one's is loaded
from its jar. The one failure seen was a crash of the JVM, at start, when Java Flight
Recorder hooked class loading in a JVM mapping the archive: so no archive is offered where
the user's or the environment's Java options load an agent (`AGENT_OPTIONS`). The archive is named by a digest of the `java` binary and of Spark's jars
(name, size, time), so a new JDK or Spark gets a new archive and never a stale one. Nothing
here changes what a job does, only how its classes get into memory.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from maintenance.spark.java_helpers import helper_cache_dir

ARCHIVE_OPTIONS = ("-XX:SharedArchiveFile", "-XX:ArchiveClassesAtExit", "-Xshare")
# Agents that hook class loading (JFR, -javaagent, JVMTI): OpenJDK 17.0.15 crashed
# (SIGSEGV in KlassFactory::check_shared_class_file_load_hook) when JFR recorded in a JVM
# mapping a dynamic archive. Where one may be loaded, no archive is offered.
AGENT_OPTIONS = ("-javaagent", "-agentlib", "-agentpath", "-XX:StartFlightRecording", "-XX:+FlightRecorder")
JAVA_OPTIONS_ENV = ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS")  # options every JVM of this environment takes


def _java_binary() -> Path | None:
    """The `java` Spark's launcher runs: `$JAVA_HOME/bin/java`, else the first on PATH."""
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    return Path(found).resolve() if found and Path(found).exists() else None


def _spark_jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


def archive_path() -> Path | None:
    """Where the archive for this Java and this Spark is kept (None without a `java`)."""
    java = _java_binary()
    if java is None:
        return None
    digest = hashlib.sha256()
    for path in [java, *sorted(_spark_jars().glob("*.jar"))]:
        stat = path.stat()
        digest.update(f"{path.name}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    digest.update(str(java).encode())
    return helper_cache_dir() / f"classes-{digest.hexdigest()[:24]}.jsa"


def java_option(extra_java_options: str) -> str:
    """The driver's option that maps the archive, when it exists, the user's own Java
    options choose nothing about class sharing, and neither they nor the environment's
    Java options load an agent (`AGENT_OPTIONS`); else ''."""
    if any(option in extra_java_options for option in ARCHIVE_OPTIONS):
        return ""
    every_option = " ".join([extra_java_options, *(os.environ.get(name, "") for name in JAVA_OPTIONS_ENV)])
    if any(option in every_option for option in AGENT_OPTIONS):
        return ""
    path = archive_path()
    return f"-XX:SharedArchiveFile={path}" if path is not None and path.is_file() else ""


def install(written: Path) -> Path:
    """Move a freshly written archive into place atomically (another process may be
    writing its own, or mapping the one there); its path."""
    target = archive_path()
    if target is None:
        raise RuntimeError("no java found: install Java 17 (make setup)")
    if not written.is_file() or written.stat().st_size == 0:
        raise RuntimeError(f"no class archive was written at {written}")
    target.parent.mkdir(parents=True, exist_ok=True)
    staged = target.with_suffix(f".{os.getpid()}.tmp")
    shutil.copyfile(written, staged)
    os.replace(staged, target)
    return target
