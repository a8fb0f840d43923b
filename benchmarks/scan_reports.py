"""What the scan reporter costs a reader: a Spark reader's scans with and without it.

    .venv/bin/python benchmarks/scan_reports.py [--rows N] [--commits K] [--scans N] [--warmup W] [--repeat R] [--json-out F]

Issue 59's bound: readers keep working, with no added scan latency beyond 1 ms at the
median, while the daemon is stopped. One generated CDC table (delete files, so every scan
report has something to say); a reader process (`maintenance/workload/readers.py`) scans it
whole `--scans` times after `--warmup` unmeasured scans, as each contender:

- no reporter;
- the reporter, the daemon up (a real door: `daemon/http.py` with `readers/endpoint.py` on a
  SQLite state database);
- the reporter, the daemon down (nothing listens on its port);
- the reporter, the daemon silent (a socket that accepts and never answers).

Each contender runs `--repeat` times, in turn, so a slow spell of the machine falls on all
alike; the latency is the median (and 90th percentile) of every measured scan of a
contender; the reader process's wall time from start to exit says what its exit waited. The
reporter also says what its `report` took the threads planning the scans (its only work on
a scan's path), which the scans' own spread would hide.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import fresh_embedded, generate_cdc, write_json  # noqa: E402

TOKEN = "benchmark-scan-reports-token"
CONTENDERS = ("no reporter", "reporter, daemon up", "reporter, daemon down", "reporter, daemon silent")


def reader(scratch: Path, table: str, scans: int, url: str | None) -> tuple[list[float], float, list[float]]:
    """One reader process: the ms of each of its scans, its wall time, and the ms its
    reporter's `report` took in each scan (none without the reporter)."""
    token_file = scratch / "token"
    token_file.write_text(TOKEN)
    settings = scratch / "reader.json"
    reporter = {"url": url, "token_file": str(token_file)} if url is not None else None
    settings.write_text(json.dumps({"config": {}, "reporter": reporter, "scans": [{"table": table}] * scans}))
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "maintenance.workload.readers", str(settings)], capture_output=True, text=True,
                          timeout=1800, env=os.environ.copy(), check=True)
    wall = time.monotonic() - started
    said = json.loads(done.stdout.strip().splitlines()[-1])
    return [s["ms"] for s in said["scans"]], wall, [s["report_ms"] for s in said["scans"] if "report_ms" in s]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--commits", type=int, default=20)
    parser.add_argument("--scans", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json-out")
    args = parser.parse_args()

    config, spark = fresh_embedded("scan-reports", spark_master="local[1]")
    ref, _ = generate_cdc(spark, config, "bench.read", rows=args.rows, commits=args.commits, partitions=4, seed=77)
    from maintenance.daemon.http import serve
    from maintenance.readers.endpoint import PATH, ScanReportEndpoint
    from maintenance.spark.session import stop_spark
    from maintenance.state.database import ensure_schema, make_engine
    from maintenance.state.store import StateStore

    stop_spark()  # the readers have the machine to themselves
    scratch = Path(tempfile.mkdtemp(prefix="icemaint-bench-readers-"))
    engine = make_engine(f"sqlite:///{scratch / 'state.db'}")
    ensure_schema(engine)
    state = StateStore.on(engine)
    server = serve("127.0.0.1", 0, posts={PATH: ScanReportEndpoint(TOKEN, config.default_catalog, config.catalogs, lambda: state).receive})
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1024)
    urls = {CONTENDERS[0]: None, CONTENDERS[1]: f"http://127.0.0.1:{server.server_address[1]}",
            CONTENDERS[2]: f"http://127.0.0.1:{closed}", CONTENDERS[3]: f"http://127.0.0.1:{silent.getsockname()[1]}"}
    measured: dict[str, list[float]] = {c: [] for c in CONTENDERS}
    walls: dict[str, list[float]] = {c: [] for c in CONTENDERS}
    in_report: dict[str, list[float]] = {c: [] for c in CONTENDERS}  # ms of report() in each measured scan
    for _ in range(args.repeat):
        for contender in CONTENDERS:
            times, wall, reporting = reader(scratch, str(ref), args.warmup + args.scans, urls[contender])
            in_report[contender] += reporting[args.warmup:]
            measured[contender] += times[args.warmup:]
            walls[contender].append(wall)
            print(f"{contender}: median {statistics.median(times[args.warmup:]):.2f} ms, process {wall:.1f} s", flush=True)
    server.shutdown()
    silent.close()
    taken = state.scans.summaries([str(ref)]).get(str(ref))

    def row(contender: str) -> dict[str, Any]:
        times = sorted(measured[contender])
        return {"contender": contender, "scans": len(times), "median_ms": statistics.median(times), "p90_ms": times[int(0.9 * (len(times) - 1))],
                "process_s": statistics.median(walls[contender]),
                "report_us": statistics.median(in_report[contender]) * 1000 if in_report[contender] else None,
                "report_us_max": max(in_report[contender]) * 1000 if in_report[contender] else None}

    result = {"rows": args.rows, "commits": args.commits, "scans": args.scans, "warmup": args.warmup, "repeat": args.repeat,
              "contenders": [row(c) for c in CONTENDERS], "reports_taken": taken.scans if taken else 0,
              "reports_sent": args.repeat * (args.warmup + args.scans)}
    print(json.dumps(result, indent=2))
    write_json(args.json_out, result)


if __name__ == "__main__":
    main()
