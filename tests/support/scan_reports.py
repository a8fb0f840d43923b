"""A scan report as Iceberg writes one, the batch the reporter posts, and a real reader that
reports, for the tests of the readers' door (`maintenance/readers/`) and what uses it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from maintenance.catalogs import load_table, parse_table_ref
from maintenance.config import Config

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


READER_TIMEOUT_S = 300


def read_with_reporter(tmp_path: Path, token: str, url: str, scans: list[dict[str, Any]]) -> dict[str, Any]:
    """A Spark reader process (`workload/readers.py`) on the test home's catalog, reporting its
    scans to `url` with `token` (from a file); what it says it read. The token shows nowhere
    in its output."""
    token_file = tmp_path / "token"
    token_file.write_text(token + "\n")
    settings = tmp_path / "reader.json"
    settings.write_text(json.dumps({"config": {}, "reporter": {"url": url, "token_file": str(token_file)}, "scans": scans}))
    done = subprocess.run([sys.executable, "-m", "maintenance.workload.readers", str(settings)], capture_output=True, text=True,
                          timeout=READER_TIMEOUT_S, env=os.environ.copy(), check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert token not in done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def arrived(count: Callable[[], int], expected: int, timeout_s: float = 30.0) -> int:
    """Wait until `count()` reaches `expected`: a reader's last reports leave with its JVM's
    exit, after its process has ended (`ScanReportSender.sendAtExit`). What it counts then."""
    deadline = time.monotonic() + timeout_s
    while (found := count()) < expected and time.monotonic() < deadline:
        time.sleep(0.2)
    return found


def planned(config: Config, name: str) -> tuple[int, int, int]:
    """What Iceberg's planning of a full scan returns, by pyiceberg: data files, delete files
    over the tasks (each task's own, as Iceberg's `result-delete-files` counts them), bytes."""
    table = load_table(config, parse_table_ref(name, config))
    tasks = list(table.scan().plan_files())
    return len(tasks), sum(len(t.delete_files) for t in tasks), sum(t.file.file_size_in_bytes for t in tasks)
