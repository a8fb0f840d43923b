"""What a reader's scan report says, in icemaint's terms.

A batch is what `ScanReportSender` (`readers/java/`) posts: `{"catalog": NAME or null,
"reports": [...]}`, each report Iceberg's own `ScanReport` JSON (`ScanReportParser`, the REST
specification's `ReportMetricsRequest` without its `report-type`): the table's name as the
reader's catalog spells it, and the scan's metrics as counters (`{"unit", "value"}`) and one
timer (`{"count", "time-unit", "total-duration"}`). A metric the reader's Iceberg did not
count (older releases have fewer) reads 0.

A reader names a table `<its catalog's name>.<namespace>.<table>` (Iceberg's
`fullTableName`; a catalog named by a path: `<path>/<namespace>.<table>`). Its catalog's name
is the reader's own, so the batch says which of icemaint's catalogs it is (the reporter's
`icemaint.catalog`, else the daemon's default catalog), and the table is that catalog's
`namespace.table`.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

MAX_REPORTS = 2_000  # in one batch (the sender posts at most 500)
MAX_NAME = 512  # characters in a table's name (the state database's column)
_NANOS = {"nanoseconds": 1, "microseconds": 1_000, "milliseconds": 1_000_000, "seconds": 1_000_000_000,
          "minutes": 60_000_000_000, "hours": 3_600_000_000_000, "days": 86_400_000_000_000}


class BadReports(ValueError):
    """A batch that cannot be taken, said in one line (the sender drops it)."""


@dataclass(frozen=True)
class ScanFacts:
    """One scan: what planning it cost and what it left readers to read."""

    table: str  # icemaint's name: catalog.namespace.table
    planning_ms: float
    data_files: int
    delete_files: int
    equality_delete_files: int
    position_delete_files: int  # position delete files and deletion vectors
    data_bytes: int
    delete_bytes: int
    manifests_read: int  # data and delete manifests the planning read
    snapshot_id: int | None = None  # the snapshot the scan read (what `state/run_scans.py` credits it to)


def parse_batch(body: bytes, default_catalog: str, catalogs: Collection[str]) -> list[ScanFacts]:
    """The scans of a posted batch, or BadReports saying what is wrong with it."""
    try:
        batch = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise BadReports("the body is not JSON") from None
    if not isinstance(batch, dict) or not isinstance(batch.get("reports"), list):
        raise BadReports("the body must be an object with a list 'reports'")
    catalog = batch.get("catalog") or default_catalog
    if not isinstance(catalog, str) or catalog not in catalogs:
        raise BadReports(f"catalog '{catalog}' is not one of icemaint's ({', '.join(sorted(catalogs))})")
    reports = batch["reports"]
    if len(reports) > MAX_REPORTS:
        raise BadReports(f"{len(reports)} reports in one batch, at most {MAX_REPORTS}")
    return [_facts(report, catalog, i) for i, report in enumerate(reports)]


def icemaint_name(reader_name: str, catalog: str) -> str:
    """The table a reader's name for it means in icemaint's catalog `catalog`."""
    if "/" in reader_name:
        identifier = reader_name.rsplit("/", 1)[1]
    else:
        _, _, identifier = reader_name.partition(".")
    if "." not in identifier:
        raise BadReports(f"table name '{reader_name[:100]}' is not <catalog>.<namespace>.<table>")
    return f"{catalog}.{identifier}"


def _facts(report: Any, catalog: str, index: int) -> ScanFacts:
    if not isinstance(report, dict) or not isinstance(report.get("table-name"), str) or not isinstance(report.get("metrics", {}), dict):
        raise BadReports(f"report {index} is not a scan report (an object with 'table-name' and 'metrics')")
    table = icemaint_name(report["table-name"], catalog)
    if len(table) > MAX_NAME:
        raise BadReports(f"report {index}: the table's name is longer than {MAX_NAME} characters")
    metrics: Mapping[str, Any] = report.get("metrics", {})
    count = lambda name: _counter(metrics, name, index)  # noqa: E731 (one line per metric below)
    return ScanFacts(
        table=table,
        planning_ms=_timer_ms(metrics, "total-planning-duration", index),
        data_files=count("result-data-files"),
        delete_files=count("result-delete-files"),
        equality_delete_files=count("equality-delete-files"),
        position_delete_files=count("positional-delete-files") + count("dvs"),
        data_bytes=count("total-file-size-in-bytes"),
        delete_bytes=count("total-delete-file-size-in-bytes"),
        manifests_read=count("scanned-data-manifests") + count("scanned-delete-manifests"),
        snapshot_id=_snapshot_id(report, index),
    )


def _snapshot_id(report: Mapping[str, Any], index: int) -> int | None:
    found = report.get("snapshot-id")
    if found is None:
        return None
    if isinstance(found, bool) or not isinstance(found, int):
        raise BadReports(f"report {index}: 'snapshot-id' is not a number")
    return found


def _counter(metrics: Mapping[str, Any], name: str, index: int) -> int:
    found = metrics.get(name)
    if found is None:
        return 0
    value = found.get("value") if isinstance(found, dict) else None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadReports(f"report {index}: metric '{name}' has no count")
    return value


def _timer_ms(metrics: Mapping[str, Any], name: str, index: int) -> float:
    found = metrics.get(name)
    if found is None:
        return 0.0
    total = found.get("total-duration") if isinstance(found, dict) else None
    unit = _NANOS.get(str(found.get("time-unit", "")).lower()) if isinstance(found, dict) else None
    if isinstance(total, bool) or not isinstance(total, int) or total < 0 or unit is None:
        raise BadReports(f"report {index}: timer '{name}' has no duration in a known unit")
    return total * unit / 1e6
