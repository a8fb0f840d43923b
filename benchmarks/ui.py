"""The status page from the cached evaluation: how long the overview of 1,000 tables takes.

    .venv/bin/python benchmarks/ui.py [--tables 1000] [--repeat 20] [--json-out F]

The overview never reads table metadata: it renders from a snapshot of the latest
evaluation (every table's health counters, reader cost and the planner's decisions), which
the daemon publishes after each evaluation (`StatusCache.publish`). This publishes an
evaluation of N generated tables the same way (no Spark: the cost of evaluating real tables
is `benchmarks/planning.py`'s), in a fresh embedded home whose SQLite state database holds 5
runs per table and a lease on every 10th, which every view reads live. It times
`StatusPages.handle` (what the HTTP server calls) for the overview's first and second page,
all its rows on one page, a filtered view, the first page over HTTP, and one real table's
page (which reads that table's metadata now, by design). Medians of the repeats, after one
unmeasured view of each. The issue's goal: the overview in under 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

from common import write_json

GOAL_S = 1.0
JOBS = ("merge", "expire", "orphans", "merge", "convert")  # each table's run history, oldest first


def generated_evaluation(tables: int) -> Any:
    """An evaluation of `tables` tables with random health counters, as the daemon would
    publish one (the status page tests' generator); every 50th table's newest merge will
    have failed (set by `record_history`)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from maintenance.workload.evaluation import generated_evaluation as generate

    return generate([f"lake.ns{i % 25}.table_{i:04d}" for i in range(tables)])


def record_history(state: Any, names: list[str]) -> tuple[int, int]:
    """Five runs per table (one bulk insert: the runs' count is what matters, not how they
    got there) and a lease on every 10th table. Returns (runs, leases held)."""
    from sqlalchemy import insert

    from maintenance.state.schema import RunRow

    now_ms = int(time.time() * 1000)
    rows = []
    for i, name in enumerate(names):
        for k, job in enumerate(JOBS):
            status = "failed" if (i % 50 == 0 and k == 3) else ("committed" if k % 2 == 0 else "noop")
            started = now_ms - (len(JOBS) - k) * 60_000
            rows.append({"run_id": str(uuid.uuid4()), "table_name": name, "job": job, "status": status, "holder_id": "daemon@a:1:x", "lease_epoch": k,
                         "started_at_ms": started, "ended_at_ms": started + 9_000, "snapshot_id": i,
                         "counters": json.dumps({"delete_files_removed": 3}), "error": "boom" if status == "failed" else None,
                         "health": json.dumps({"data_files": 3, "snapshots": 4})})
    with state.engine.begin() as conn:
        conn.execute(insert(RunRow.__table__), rows)
    held = sum(state.leases.acquire(name, "daemon@a:1:x", ttl_s=3600) is not None for name in names[::10])
    return len(rows), held


def real_table(config: Any, state: Any, runs: int) -> str:
    """A small partitioned table in the embedded catalog (pyiceberg, four commits) with
    `runs` runs in its history, each with the health it recorded: a table page to time."""
    import pyarrow as pa
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import LongType, NestedField, StringType

    from maintenance.catalogs import get_catalog

    catalog = get_catalog(config, config.default_catalog)
    catalog.create_namespace_if_not_exists("bench")
    schema = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "day", StringType(), required=False))
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="day"))
    table = catalog.create_table(("bench", "orders"), schema, partition_spec=spec, properties={"format-version": "2"})
    for commit in range(4):
        ids = range(commit * 1000, (commit + 1) * 1000)
        table.append(pa.table({"id": pa.array(list(ids), pa.int64()), "day": pa.array([f"2024-01-0{1 + i % 4}" for i in ids])}))
    name = f"{config.default_catalog}.bench.orders"
    for k in range(runs):
        run_id = str(uuid.uuid4())
        state.runs.start(run_id, name, JOBS[k % len(JOBS)], holder_id="daemon@a:1:x", lease_epoch=1)
        state.runs.finish(run_id, "committed", counters={"delete_files_removed": k}, health={"data_files": 4 + k % 3, "snapshots": 4 + k})
    return name


def timed(action: Any, repeat: int) -> dict[str, float]:
    action()  # unmeasured: imports, the first connection, caches of the database
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return {"median_ms": 1000 * statistics.median(times), "max_ms": 1000 * max(times)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--table-runs", type=int, default=100, help="runs in the history of the table whose page is timed")
    parser.add_argument("--json-out")
    args = parser.parse_args()

    os.environ["ICEMAINT_HOME"] = tempfile.mkdtemp(prefix="icemaint-bench-ui-")
    os.environ.pop("ICEMAINT_CONFIG", None)
    from maintenance.config import load_config
    from maintenance.daemon.http import serve
    from maintenance.logs import configure_logging
    from maintenance.state.store import open_state
    from maintenance.ui.pages import MAX_PER_PAGE, StatusPages
    from maintenance.ui.status import StatusCache

    configure_logging(log_format="console", stderr_level="warning", log_file=None)  # as the daemon's, without a line per view
    config = load_config(None)
    state = open_state(config)
    evaluation = generated_evaluation(args.tables)
    runs, held = record_history(state, sorted(evaluation.health))
    table = real_table(config, state, args.table_runs)
    publish = timed(lambda: StatusCache(config).publish(evaluation), args.repeat)
    cache = StatusCache(config, ttl_s=3600)
    cache.publish(evaluation)  # what the daemon does after each evaluation
    pages = StatusPages(config, cache)
    server = serve("127.0.0.1", 0, pages=pages)
    base = f"http://127.0.0.1:{server.server_address[1]}"

    def view(path: str, query: str, rows: int | None) -> Any:
        def action() -> None:
            response = pages.handle(path, query)
            assert response.status == 200, response.body[:500]
            if rows is not None:  # a page that lost rows would be fast for the wrong reason
                assert response.body.count(b'<tr class="') == rows, (query, response.body.count(b'<tr class="'))
            sizes[query or path] = len(response.body)
        return action

    def over_http() -> None:
        with urllib.request.urlopen(f"{base}/", timeout=60) as response:
            body = response.read()
        assert response.status == 200 and body.count(b'<tr class="') == min(50, args.tables)
        sizes["http"] = len(body)

    sizes: dict[str, int] = {}
    filtered = sum(1 for i in range(args.tables) if i % 25 == 3 and i % 3 == 0)
    measured = [
        ("overview, page 1 (50 tables, the default)", "/", "", min(50, args.tables)),
        ("overview, page 2", "/", "page=2", min(50, max(0, args.tables - 50))),
        (f"overview, {min(args.tables, MAX_PER_PAGE):,} tables on one page (all of them, up to the most a page shows)", "/",
         f"per={min(args.tables, MAX_PER_PAGE)}", min(args.tables, MAX_PER_PAGE)),
        (f"overview, filtered (namespace and policy: {filtered:,} tables; page 1)", "/", "namespace=ns3&policy=default", min(50, filtered)),
    ]
    results = []
    try:
        for label, path, query, rows in measured:
            results.append({"page": label, "query": f"{path}?{query}" if query else path, **timed(view(path, query, rows), args.repeat),
                            "kib": sizes[query or path] / 1024})
        results.append({"page": "overview, page 1, over HTTP", "query": "/", **timed(over_http, args.repeat), "kib": sizes["http"] / 1024})
        query = f"name={table}"
        results.append({"page": f"a table's page (metadata read now; {args.table_runs} runs)", "query": f"/table?{query}",
                        **timed(view("/table", query, None), args.repeat), "kib": sizes[query] / 1024})
    finally:
        server.shutdown()

    result = {"tables": args.tables, "repeat": args.repeat, "runs": runs, "leases_held": held, "goal_ms": 1000 * GOAL_S,
              "publish_ms": publish["median_ms"], "state": "SQLite (the embedded default)", "pages": results}
    print(f"status page, {args.tables:,} tables from the cached evaluation ({runs:,} runs, {held} leases held; publishing the snapshot "
          f"{publish['median_ms']:.0f} ms); medians of {args.repeat}:")
    for r in results:
        print(f"  {r['page']:<60} {r['median_ms']:>8.1f} ms (max {r['max_ms']:.1f}) {r['kib']:>8.0f} KiB")
    write_json(args.json_out, result)
    shutil.rmtree(os.environ["ICEMAINT_HOME"], ignore_errors=True)


if __name__ == "__main__":
    main()
