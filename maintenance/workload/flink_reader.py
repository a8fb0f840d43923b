"""A Flink reader that reports its scans to icemaint, as users' Flink readers do (issue 59).

icemaint's scan reporter is a plain Iceberg `MetricsReporter`: any engine whose Iceberg
catalog takes `metrics-reporter-impl` reports through it. This runs `flink_reader_job.py`
under Flink's own Python environment (`make flink`) as a child process: Flink's `iceberg`
catalog on the same Iceberg catalog icemaint maintains, told to report
(`readers/reporter_jar.reporter_properties`), the reporter's jar in `pipeline.jars` beside
Iceberg's Flink runtime, and a batch `SELECT count(*)` per table.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from maintenance.catalogs import TableRef
from maintenance.config import Config
from maintenance.errors import FlinkJobError, UsageError
from maintenance.readers.reporter_jar import reporter_jar, reporter_properties
from maintenance.workload.flink_runtime import JOB_START_ALLOWANCE_S, check_flink, flink_catalog_properties, run_flink_program

FLINK_READER_JOB = Path(__file__).with_name("flink_reader_job.py")
SCAN_ALLOWANCE_S = 60  # each scan's own time, beyond the job's start


def read_with_flink(config: Config, tables: list[TableRef], url: str, token_file: Path) -> dict[str, Any]:
    """Scan each table once, whole, with Flink, reporting to the daemon at `url` with the
    token in `token_file`: what the job says it read (`{"scans": [{"table", "rows", "ms"}]}`),
    and where its log is (`log`)."""
    if not tables or len({ref.catalog for ref in tables}) != 1:
        raise UsageError("the Flink reader scans tables of one catalog")
    runtime = check_flink(config, tables, "reader")
    name = tables[0].catalog
    folder = config.home / "flink" / f"reader-{uuid.uuid4().hex[:8]}"
    folder.mkdir(parents=True, exist_ok=True)
    settings = {
        "catalog_name": name,
        "catalog_properties": {**flink_catalog_properties(config.catalog(name)), **reporter_properties(url, str(token_file), name)},
        "scans": [[ref.namespace[0], ref.name] for ref in tables],
        "flink_configuration": {
            "pipeline.jars": ";".join(Path(path).as_uri() for path in [*runtime.runtime_jars, str(reporter_jar())]),
            "pipeline.name": "icemaint flink reader",
            "parallelism.default": "1",
            "python.executable": str(runtime.interpreter),
            "python.client.executable": str(runtime.interpreter),
        },
        "outcome_file": str(folder / "outcome.json"),
    }
    outcome = run_flink_program(FLINK_READER_JOB, runtime, settings, folder, JOB_START_ALLOWANCE_S + SCAN_ALLOWANCE_S * len(tables))
    if outcome is None:
        raise FlinkJobError(f"the Flink reader's process was killed (log: {folder / 'job.log'})")
    return {**outcome, "log": str(folder / "job.log")}
