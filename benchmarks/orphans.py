"""Orphan cleanup on a table with 10,000 files: icemaint's ORPHANS against Iceberg's stock
`remove_orphan_files`, on identical tables, in one run.

    .venv/bin/python benchmarks/orphans.py [--files 10000] [--orphan-share 0.5] [--repeat 3] [--json-out F]

Each table gets `files * (1 - share)` tiny data files registered in one append and
`files * share` unreferenced old files beside them (plus its metadata). Prints listing time,
total time and files deleted per contender, medians of --repeat runs on fresh tables;
every number is measured by this run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from common import fresh_embedded, write_json


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--orphan-share", type=float, default=0.5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json-out")
    args = parser.parse_args()

    config, spark = fresh_embedded("orphans")
    from maintenance.catalogs import load_table, parse_table_ref
    from maintenance.run.runner import run_job

    orphans_n = int(args.files * args.orphan_share)
    live_n = args.files - orphans_n
    runs: dict[str, list[tuple[int, float | None, float, int, int]]] = {}
    for attempt in range(args.repeat):
        for contender in ("icemaint orphans", "stock remove_orphan_files"):
            ref = parse_table_ref(f"bench.orphans_{attempt}_{contender.split()[0]}", config)
            built = _build(spark, config, ref, live_n, orphans_n)
            table = load_table(config, ref)
            started = time.monotonic()
            if contender.startswith("icemaint"):
                result = run_job(config, ref, "orphans", {"older_than": 86400})
                assert result.ok, result.error
                deleted, listing_s = result.counters["files_deleted"], result.counters["listing_seconds"]
            else:
                spark.sql(f"REFRESH TABLE {ref.spark_name}")
                older = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time.time() - 86400))
                out = spark.sql(f"CALL local.system.remove_orphan_files(table => '{ref.identifier}', older_than => TIMESTAMP '{older}')").collect()
                deleted, listing_s = len(out), None
            total_s = time.monotonic() - started
            left = sum(1 for p in Path(table.location().removeprefix("file://")).rglob("*") if p.is_file() and not p.name.startswith("."))
            runs.setdefault(contender, []).append((built, listing_s, total_s, deleted, left))

    rows = []
    for contender, measured in runs.items():
        listings = [m[1] for m in measured if m[1] is not None]
        rows.append({
            "contender": contender, "files": measured[0][0], "listing_s": statistics.median(listings) if listings else None,
            "total_s": statistics.median(m[2] for m in measured), "deleted": measured[0][3], "left": measured[0][4],
        })
    print(f"| contender | files under location | listing s | total s | files deleted | files left (of {live_n} live + metadata) |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        listing = f"{row['listing_s']:.2f}" if row["listing_s"] is not None else "n/a"
        print(f"| {row['contender']} | {row['files']} | {listing} | {row['total_s']:.2f} | {row['deleted']} | {row['left']} |")
    write_json(args.json_out, {"repeat": args.repeat, "live": live_n, "orphans": orphans_n, "contenders": rows})


def _build(spark, config, ref, live_n: int, orphans_n: int) -> int:  # type: ignore[no-untyped-def]
    """A table with `live_n` referenced data files and `orphans_n` old unreferenced ones."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from maintenance.catalogs import load_table

    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {ref.spark_namespace}")
    spark.sql(f"CREATE TABLE {ref.spark_name} (id bigint) USING iceberg TBLPROPERTIES ('format-version'='2')")
    table = load_table(config, ref)
    root = Path(table.location().removeprefix("file://"))
    data = root / "data"
    data.mkdir(parents=True, exist_ok=True)
    live = []
    for i in range(live_n):
        path = data / f"live-{i:06d}.parquet"
        pq.write_table(pa.table({"id": pa.array([i], pa.int64())}), path)
        live.append(f"file://{path}")
    table.add_files(live)
    old = time.time() - 10 * 86400
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (old, old))
    for i in range(orphans_n):
        path = data / f"bucket={i % 50}" / f"orphan-{i:06d}.parquet"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(b"x")
        os.utime(path, (old, old))
    return sum(1 for p in root.rglob("*") if p.is_file())


if __name__ == "__main__":
    main()
