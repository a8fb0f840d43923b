"""COMPACT against Iceberg's stock `rewrite_data_files`, bin-pack and sort, on an append-only table of small files.

    .venv/bin/python benchmarks/compact.py [--rows 1000000] [--commits 500] [--partitions 4] [--target-mib 4] [--repeat 3] [--job-repeat 5] [--json-out F]

One table of `commits * partitions` small files is generated (an append-only CDC
workload: inserts only); every contender starts from exactly that table (it is rolled
back to the generated snapshot between contenders, and no contender deletes a file). The
sort contenders run after `WRITE ORDERED BY id`. Per contender: job time, MiB read and
written (the Spark JVM's Hadoop counters), files after and their sizes against the
target, and the full-scan time after, beside a floor copy (the same rows at the target
size, written the way COMPACT writes them), the two scanned in turn. Scans are medians of
--repeat. Job times are medians of --job-repeat rounds, each running every contender once
in turn from the generated table (single runs on a 2-core machine differ by 30%, and a
slow spell falls on every contender alike); bytes, files, content check and scans are taken
in the last round. Every contender runs once unmeasured first (the JVM's first run of any
code path is several times slower).
"""

from __future__ import annotations

import argparse
import statistics
import time

from common import floor_copy, fresh_embedded, generate_cdc, io_counters, median_seconds, reset_to, write_json


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--commits", type=int, default=500)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--target-mib", type=float, default=4.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--job-repeat", type=int, default=5)
    parser.add_argument("--json-out")
    args = parser.parse_args()

    config, spark = fresh_embedded("compact")
    from maintenance.catalogs import load_table, parse_table_ref
    from maintenance.run.runner import run_job
    from maintenance.spark.fingerprint import content_fingerprint

    target = int(args.target_mib * 2**20)
    ref, generate_s = generate_cdc(spark, config, "bench.appends", rows=args.rows, commits=args.commits, partitions=args.partitions, seed=11,
                                   updates=0.0, deletes=0.0)
    spark.sql(f"ALTER TABLE {ref.spark_name} SET TBLPROPERTIES ('write.target-file-size-bytes'='{target}')")
    generated = load_table(config, ref).metadata.current_snapshot_id
    expected = content_fingerprint(spark, ref)
    before = files(spark, ref, target)
    floor = parse_table_ref("bench.appends_floor", config)
    floor_copy(config, spark, ref, floor, target)

    def scan(table_ref) -> float:  # type: ignore[no-untyped-def]
        return median_seconds(lambda: content_fingerprint(spark, table_ref), args.repeat)

    def scan_beside_floor(table_ref) -> tuple[float, float]:  # type: ignore[no-untyped-def]
        """Medians of the table's and the floor's scans, taken in turn: scans grow faster as
        the JVM warms up over the run, and a floor scanned once at the end looked 10-30%
        faster than the same layout scanned earlier."""
        times: dict[str, list[float]] = {"table": [], "floor": []}
        for _ in range(args.repeat):
            for name, which in (("table", table_ref), ("floor", floor)):
                started = time.perf_counter()
                content_fingerprint(spark, which)
                times[name].append(time.perf_counter() - started)
        return statistics.median(times["table"]), statistics.median(times["floor"])

    contenders = [
        ("icemaint COMPACT binpack", lambda: run_job(config, ref, "compact", {"strategy": "binpack"})),
        ("stock rewrite_data_files binpack", lambda: stock(spark, ref, "binpack")),
        ("icemaint COMPACT binpack, verified", lambda: run_job(config, ref, "compact", {"strategy": "binpack"}, verify=True)),
        ("icemaint COMPACT sort", lambda: run_job(config, ref, "compact", {"strategy": "sort"})),
        ("stock rewrite_data_files sort", lambda: stock(spark, ref, "sort")),
    ]
    for label, action in contenders:  # warm-up, unmeasured: the JVM's first run of any code path is several times slower
        if "sort" in label:
            spark.sql(f"ALTER TABLE {ref.spark_name} WRITE ORDERED BY id")
        reset_to(spark, ref, generated)
        action()
    spark.sql(f"ALTER TABLE {ref.spark_name} WRITE UNORDERED")
    times: dict[str, list[float]] = {label: [] for label, _ in contenders}
    jobs = []
    for round_number in range(args.job_repeat):
        last = round_number == args.job_repeat - 1
        for label, action in contenders:
            spark.sql(f"ALTER TABLE {ref.spark_name} WRITE {'ORDERED BY id' if 'sort' in label else 'UNORDERED'}")
            reset_to(spark, ref, generated)
            read_before, written_before = io_counters(spark)
            started = time.perf_counter()
            result = action()
            times[label].append(time.perf_counter() - started)
            read_after, written_after = io_counters(spark)
            assert getattr(result, "status", "committed") == "committed", getattr(result, "error", result)
            if last:
                assert content_fingerprint(spark, ref).same_content(expected), f"{label} changed the content"
                scan_s, floor_scan_s = scan_beside_floor(ref)
                jobs.append({"job": label, "job_s": statistics.median(times[label]), "job_runs_s": times[label],
                             "mib_read": (read_after - read_before) / 2**20, "mib_written": (written_after - written_before) / 2**20,
                             **files(spark, ref, target), "scan_s": scan_s, "floor_scan_s": floor_scan_s})
                print(jobs[-1], flush=True)
    write_json(args.json_out, {
        "rows": args.rows, "commits": args.commits, "partitions": args.partitions, "target_mib": args.target_mib, "repeat": args.repeat, "job_repeat": args.job_repeat,
        "generate_s": generate_s, "expected_rows": expected.rows,
        "before": {**before, "scan_s": scan_at(spark, ref, generated, args.repeat)},
        "floor": {**files(spark, floor, target), "scan_s": scan(floor)},
        "jobs": jobs,
    })


def stock(spark, ref, strategy: str):  # type: ignore[no-untyped-def]
    return spark.sql(f"CALL local.system.rewrite_data_files(table => '{ref.identifier}', strategy => '{strategy}')").collect()


def files(spark, ref, target: int) -> dict:  # type: ignore[no-untyped-def]
    """Data files, and how their sizes sit against the target (the last, smaller file of a partition aside)."""
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    rows = spark.sql(f"SELECT partition, file_size_in_bytes FROM {ref.spark_name}.data_files").collect()
    by_partition: dict[str, list[int]] = {}
    for row in rows:
        by_partition.setdefault(str(row.partition), []).append(int(row.file_size_in_bytes))
    full = [size for sizes in by_partition.values() for size in sorted(sizes, reverse=True)[: max(1, len(sizes) - 1)] if len(sizes) > 1]
    within = sum(1 for size in full if 0.9 * target <= size <= 1.1 * target)
    return {"data_files": len(rows), "partitions": len(by_partition), "median_file_mib": statistics.median([r.file_size_in_bytes for r in rows]) / 2**20,
            "files_beside_a_remainder": len(full), "within_10pct_of_target": within}


def scan_at(spark, ref, snapshot_id: int, repeat: int) -> float:  # type: ignore[no-untyped-def]
    from maintenance.spark.fingerprint import content_fingerprint

    return median_seconds(lambda: content_fingerprint(spark, ref, snapshot_id), repeat)


if __name__ == "__main__":
    main()
