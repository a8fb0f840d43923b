"""A REST catalog for the tests: tests/rest_fixture/RestCatalogFixture.java, compiled here.

The Java source is compiled with javac against the Iceberg Spark runtime jar the package
pins, into a folder under .venv keyed by the source's hash (so it compiles once per
change, and nothing binary is ever committed). The server keeps its tables in a JdbcCatalog
on SQLite and writes metadata through HadoopFileIO, over s3a to the tests' S3 server.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.services.jars import (
    REPO,
    iceberg_runtime_jar,
    pyspark_jars_dir,
    s3_jars,
    sqlite_jdbc_jar,
)
from tests.services.process import ServiceError, ServiceProcess

SOURCE = REPO / "tests" / "rest_fixture" / "RestCatalogFixture.java"
MAIN_CLASS = "RestCatalogFixture"
BUILD_ROOT = REPO / ".venv" / "share" / "icemaint-rest-fixture"


@dataclass
class RestCatalog:
    process: ServiceProcess
    uri: str  # http://127.0.0.1:<port>
    startup_s: float
    compile_s: float

    def stop(self) -> None:
        self.process.stop()


def compile_fixture() -> tuple[Path, float]:
    """The compiled classes' folder (compiled now unless this source was compiled before)."""
    runtime = iceberg_runtime_jar()
    key = hashlib.sha256(SOURCE.read_bytes() + runtime.encode()).hexdigest()[:16]
    classes = BUILD_ROOT / key
    if (classes / f"{MAIN_CLASS}.class").is_file():
        return classes, 0.0
    javac = shutil.which("javac")
    if javac is None:
        raise ServiceError("javac not found: the REST catalog fixture needs a JDK (make test-tools installs openjdk-17-jdk-headless)")
    started = time.monotonic()
    staging = BUILD_ROOT / f".{key}.{os.getpid()}"
    staging.mkdir(parents=True, exist_ok=True)
    hadoop_api = sorted(pyspark_jars_dir().glob("hadoop-client-api-*.jar"))
    classpath = os.pathsep.join([runtime, *map(str, hadoop_api)])
    result = subprocess.run([javac, "-nowarn", "-d", str(staging), "-cp", classpath, str(SOURCE)], check=False, capture_output=True, text=True)
    if result.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise ServiceError(f"javac failed on {SOURCE}:\n{result.stdout}{result.stderr}")
    try:
        staging.rename(classes)
    except OSError:  # compiled concurrently by another run: theirs is as good
        shutil.rmtree(staging, ignore_errors=True)
    return classes, time.monotonic() - started


def start_rest(folder: Path, *, warehouse: str, hadoop: dict[str, str], timeout: float = 120.0) -> RestCatalog:
    """Start the server; it binds a free port itself and prints it."""
    classes, compile_s = compile_fixture()
    folder.mkdir(parents=True, exist_ok=True)
    settings = {
        "name": "rest_backend",
        "host": "127.0.0.1",
        "port": "0",
        "catalog.uri": f"jdbc:sqlite:{folder / 'rest-catalog.db'}",
        "catalog.warehouse": warehouse,
        "catalog.io-impl": "org.apache.iceberg.hadoop.HadoopFileIO",
        # One pooled connection: on SQLite, a second connection could hold a stale read
        # snapshot (see maintenance/spark/session.py) and fail commits with SQLITE_BUSY.
        "catalog.clients": "1",
        **{f"hadoop.{k}": v for k, v in hadoop.items()},
    }
    properties = folder / "rest-fixture.properties"
    properties.write_text("".join(f"{_escape(k)}={_escape(v)}\n" for k, v in settings.items()))
    classpath = os.pathsep.join([str(classes), iceberg_runtime_jar(), str(pyspark_jars_dir() / "*"), *s3_jars(), sqlite_jdbc_jar()])
    java = shutil.which("java") or "java"
    process = ServiceProcess("rest-catalog", [java, "-Xmx512m", "-cp", classpath, MAIN_CLASS, str(properties)], folder)
    line = process.wait_for_line("LISTENING ", timeout)
    port = int(line.split()[1])
    return RestCatalog(process=process, uri=f"http://127.0.0.1:{port}", startup_s=time.monotonic() - process.started, compile_s=compile_s)


def _escape(text: str) -> str:
    """A Java properties value: backslashes and separators escaped."""
    return text.replace("\\", "\\\\").replace(":", "\\:").replace("=", "\\=")
