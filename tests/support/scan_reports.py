"""A scan report as Iceberg writes one, and the batch the reporter posts, for the tests of
the readers' door (`maintenance/readers/`)."""

from __future__ import annotations

import json

# As Iceberg 1.11's ScanReportParser writes one (the reporter test checks real ones end to end).
REPORT = {
    "table-name": "readers.sales.orders", "snapshot-id": 7, "filter": True, "schema-id": 0,
    "projected-field-ids": [1, 2], "projected-field-names": ["id", "v"],
    "metrics": {
        "total-planning-duration": {"count": 1, "time-unit": "nanoseconds", "total-duration": 2_500_000},
        "result-data-files": {"unit": "count", "value": 4}, "result-delete-files": {"unit": "count", "value": 3},
        "total-file-size-in-bytes": {"unit": "bytes", "value": 4096}, "total-delete-file-size-in-bytes": {"unit": "bytes", "value": 512},
        "scanned-data-manifests": {"unit": "count", "value": 2}, "scanned-delete-manifests": {"unit": "count", "value": 1},
        "equality-delete-files": {"unit": "count", "value": 1}, "positional-delete-files": {"unit": "count", "value": 1},
        "dvs": {"unit": "count", "value": 1},
    },
}


def batch(reports: list[object], catalog: str | None = "lake") -> bytes:
    return json.dumps({"catalog": catalog, "reports": reports}).encode()
