"""What a Flink program of the workload (the CDC writer's `flink_job.py`, the reader's
`flink_reader_job.py`) runs with, and how it is run: PyFlink's own Python environment
(`make flink`: PyFlink pins dependencies icemaint's environment cannot take), Iceberg's
Flink runtime, Hadoop's client from pyspark's jars, and a child process in its own process
group whose settings come in a file (never on a command line: the catalog's properties may
hold secrets) and whose outcome comes back in one.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from maintenance.catalogs import TableRef
from maintenance.config import CatalogConfig, Config
from maintenance.errors import ConfigError, FlinkJobError, UsageError
from maintenance.spark.jars import AWS_BUNDLE, FLINK, jar, jars_for
from maintenance.spark.session import SYSTEM_SQLITE_JDBC, java_catalog_properties

FLINK_PYTHON_ENV = "ICEMAINT_FLINK_PYTHON"
JOB_START_ALLOWANCE_S = 120  # the job's JVM, mini-cluster and Python worker starting, and its last commit

# The Java catalog Flink loads, by the kind of catalog: the same catalog Spark reads and writes through.
_CATALOG_IMPLS = {"sql": "org.apache.iceberg.jdbc.JdbcCatalog", "rest": "org.apache.iceberg.rest.RESTCatalog"}


@dataclass(frozen=True)
class FlinkRuntime:
    """What the job runs with, all found before any work starts (a missing piece is exit 2)."""

    interpreter: Path
    classpath: list[str]
    runtime_jars: list[str]


def flink_python() -> Path:
    """Flink's interpreter: `$ICEMAINT_FLINK_PYTHON`, else `.venv-flink` beside the
    environment icemaint runs in (what `make flink` makes)."""
    configured = os.environ.get(FLINK_PYTHON_ENV)
    path = Path(configured).expanduser() if configured else Path(sys.prefix).parent / ".venv-flink" / "bin" / "python"
    if not path.is_file():
        raise ConfigError(f"Flink's Python environment is not installed ({path} is missing): install it with 'make flink'")
    return path


def hadoop_classpath() -> list[str]:
    """Hadoop's client, which Iceberg's Flink runtime needs (its catalogs and HadoopFileIO)
    and does not bundle, from pyspark's own jars; and the SQLite JDBC driver. They go on the
    JVM's class path, not `pipeline.jars`: Flink loads `org.apache.hadoop` parent-first, and
    JDBC's DriverManager refuses a driver loaded by another class loader than its caller's."""
    import pyspark

    folder = Path(pyspark.__file__).parent / "jars"
    found = []
    for pattern in ("hadoop-client-api-*.jar", "hadoop-client-runtime-*.jar", "commons-logging-*.jar"):
        matches = sorted(folder.glob(pattern))
        if not matches:
            raise ConfigError(f"no {pattern} in {folder}: Flink takes Hadoop's client from pyspark's jars")
        found.append(str(matches[-1]))
    return [*found, SYSTEM_SQLITE_JDBC]


def check_flink(config: Config, refs: Sequence[TableRef], what: str) -> FlinkRuntime:
    """Flink can reach every table of `refs` (`what`: "writer" or "reader", for the message):
    checked before Spark starts, so a missing install costs no JVM. Iceberg's S3FileIO (the
    AWS bundle) goes with the Flink runtime, for tables on an object store."""
    for ref in refs:
        catalog = config.catalog(ref.catalog)
        if catalog.type not in _CATALOG_IMPLS:
            raise UsageError(f"the Flink {what} runs on SQL and REST catalogs, not on '{ref.catalog}' ({catalog.type})")
        if len(ref.namespace) != 1:
            raise UsageError(f"the Flink {what} takes a table in a one-level namespace, not '{ref}'")
    return FlinkRuntime(flink_python(), hadoop_classpath(), [*jars_for(FLINK), jar(AWS_BUNDLE)])


def flink_catalog_properties(catalog: CatalogConfig) -> dict[str, str]:
    """The Iceberg catalog's properties as Flink's `iceberg` catalog and connector take them."""
    return {"catalog-impl": _CATALOG_IMPLS[catalog.type], **java_catalog_properties(catalog)}


def run_flink_program(program: Path, runtime: FlinkRuntime, settings: Mapping[str, Any], folder: Path, timeout_s: float) -> dict[str, object] | None:
    """`program` as a child process in its own process group, killed whole at the deadline:
    its outcome (the settings' `outcome_file`, `folder/outcome.json`), or None when
    something else killed it (a signal ended it). Its log is `folder/job.log`. `settings`
    reach it in `folder/settings.json`, readable by this user alone and removed when it ends
    (never on a command line: they hold the catalog's properties, secrets too)."""
    settings_file = folder / "settings.json"
    settings_file.touch(mode=0o600)
    try:
        settings_file.write_text(json.dumps(settings), encoding="utf-8")
        return _run_program(program, runtime, settings_file, folder, timeout_s)
    finally:
        settings_file.unlink(missing_ok=True)


def _run_program(program: Path, runtime: FlinkRuntime, settings_file: Path, folder: Path, timeout_s: float) -> dict[str, object] | None:
    env = {**os.environ, "HADOOP_CLASSPATH": os.pathsep.join(runtime.classpath), "FLINK_LOG_DIR": str(folder)}
    (folder / "outcome.json").unlink(missing_ok=True)
    with (folder / "job.log").open("ab") as job_log:
        process = subprocess.Popen([str(runtime.interpreter), str(program), str(settings_file)], stdin=subprocess.DEVNULL,
                                   stdout=job_log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            code = process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
            raise FlinkJobError(f"the Flink job did not finish within {timeout_s:.0f} s (log: {folder / 'job.log'})") from None
    if code < 0:
        return None
    outcome_file = folder / "outcome.json"
    outcome = json.loads(outcome_file.read_text()) if outcome_file.is_file() else {}
    if code != 0 or not outcome or "error" in outcome:
        reason = outcome.get("error") or f"exit code {code}"
        raise FlinkJobError(f"the Flink job failed: {reason} (log: {folder / 'job.log'})")
    return outcome
