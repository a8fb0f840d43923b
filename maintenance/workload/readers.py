"""A Spark reader that reports its scans to icemaint, as users' readers do (issue 59).

Run as its own process (`python -m maintenance.workload.readers SETTINGS.json`), like any
application reading the tables: its own Spark session on icemaint's catalog configuration,
with the scan reporter's jar on its class path and the catalog told to use it
(`metrics-reporter-impl` = `readers/reporter_jar.CLASS_NAME`, `icemaint.url`,
`icemaint.token-file`). Its settings come in a file (never a command line: the catalogs'
properties may hold secrets):

    {"config": <icemaint's configuration, as its YAML would say it>, "reporter": {"url": ...,
     "token_file": ..., "catalog": ...} or null, "scans": [{"table": "catalog.ns.table",
     "where": "SQL predicate" or null, "at_s": seconds or absent}, ...]}

A scan with `at_s` waits until that many seconds after the first scan began (a schedule
several readers can share); one that is late starts at once.

Each scan reads every row the predicate selects (a count and a sum of the rows' hashes, so
no file is skipped by an aggregate's pushdown) and is timed; the output is one JSON object:
`{"scans": [{"table", "where", "rows", "ms", "started_s", "report_ms"}, ...], "reporter": {"reports",
"report_ms", "sent", "dropped"}}`: with the reporter, what its `report` took the thread of each scan (its only
work on a scan's path, read from the reporter's own clock outside the scan's timing), and
in all. What it still holds when the process ends is sent at the
JVM's exit (`ScanReportSender`).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

from maintenance.config import Config, parse_config
from maintenance.readers.reporter_jar import reporter_jar, reporter_properties


def reader_config(config: Config, reporter: dict[str, Any] | None) -> Config:
    """`config` with every catalog reporting its scans to `reporter` (`url`, `token_file`,
    optional `catalog`), and the reporter's jar on the class path; `config` when None."""
    if reporter is None:
        return config
    catalogs = {}
    for name, catalog in config.catalogs.items():
        told = reporter_properties(reporter["url"], reporter["token_file"], reporter.get("catalog") or name)
        catalogs[name] = dataclasses.replace(catalog, spark_properties={**catalog.spark_properties, **told})
    spark = dataclasses.replace(config.spark, jars=(*config.spark.jars, str(reporter_jar())))
    return dataclasses.replace(config, catalogs=catalogs, spark=spark)


def run(settings: dict[str, Any]) -> dict[str, Any]:
    from maintenance.catalogs import parse_table_ref
    from maintenance.spark.scan_reporter import reporter_counts
    from maintenance.spark.session import get_spark

    config = reader_config(parse_config(settings["config"], source="reader settings", base_dir=Path.cwd()), settings.get("reporter"))
    spark = get_spark(config)
    reporting = settings.get("reporter") is not None
    done = []
    began = time.monotonic()
    for scan in settings["scans"]:
        if scan.get("at_s") is not None:
            time.sleep(max(0.0, began + float(scan["at_s"]) - time.monotonic()))
        ref = parse_table_ref(scan["table"], config)
        where = f" WHERE {scan['where']}" if scan.get("where") else ""
        reported_before = reporter_counts(spark).report_ms if reporting else 0.0
        started, started_s = time.perf_counter(), time.monotonic() - began
        row = spark.sql(f"SELECT count(*) AS rows, sum(hash(*)) AS digest FROM {ref.spark_name}{where}").collect()[0]
        took = {"table": scan["table"], "where": scan.get("where"), "rows": int(row["rows"]), "ms": round((time.perf_counter() - started) * 1000, 3),
                "started_s": round(started_s, 3)}
        if reporting:
            took["report_ms"] = round(reporter_counts(spark).report_ms - reported_before, 4)
        done.append(took)
    found: dict[str, Any] = {"scans": done}
    if reporting:
        found["reporter"] = dataclasses.asdict(reporter_counts(spark))  # sent: so far; the last leave at the JVM's exit
    return found


def main(argv: list[str]) -> int:
    settings = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    print(json.dumps(run(settings)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
