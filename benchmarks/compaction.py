"""icemaint's CONVERT, REWRITE and MERGE against Iceberg's stock delete merge, in one run.

    .venv/bin/python benchmarks/compaction.py [--rows 200000] [--commits 40] [--repeat 3]

Identical tables are generated from the same seed, one per contender: icemaint CONVERT,
icemaint CONVERT then REWRITE, icemaint MERGE, and Iceberg's stock
`rewrite_data_files(options => map('delete-file-threshold','1'))`. Prints, side by side:
job time, bytes written, full-scan time before and after (median of --repeat), delete
files left. Every number is measured by this run.
"""

from __future__ import annotations

import argparse
import statistics
import time

from embedded import fresh_embedded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--commits", type=int, default=40)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    config, spark = fresh_embedded("compaction")
    from maintenance.catalogs import load_table, parse_table_ref
    from maintenance.fingerprint import content_fingerprint
    from maintenance.health import table_health
    from maintenance.jobs.convert.job import convert
    from maintenance.jobs.merge.job import merge
    from maintenance.jobs.rewrite.job import rewrite
    from maintenance.jobs.runner import run_job
    from maintenance.workload.cdc import CdcOptions, run_cdc_workload
    from maintenance.workload.shape import TableShape

    options = CdcOptions(rows=args.rows, commits=args.commits, update_ratio=0.05, delete_ratio=0.01, shape=TableShape("identity", args.partitions, "single"))
    tables = {name: parse_table_ref(f"bench.{name}", config) for name in ("convert", "convert_rewrite", "merge", "stock")}
    for ref in tables.values():
        run_cdc_workload(spark, config, ref, options)

    def scan_seconds(ref) -> float:  # type: ignore[no-untyped-def]
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            content_fingerprint(spark, ref)
            times.append(time.perf_counter() - started)
        return statistics.median(times)

    def health(ref):  # type: ignore[no-untyped-def]
        return table_health(str(ref), load_table(config, ref), small_file_bytes=config.health.small_file_bytes)

    rows = []
    for name, ref in tables.items():
        before = health(ref)
        fingerprint = content_fingerprint(spark, ref)
        scan_before = scan_seconds(ref)
        started = time.perf_counter()
        if name == "stock":
            out = spark.sql(
                f"CALL local.system.rewrite_data_files(table => '{ref.identifier}', options => map('delete-file-threshold','1'))"
            ).collect()[0]
            written_files, written_bytes = out.added_data_files_count, out.rewritten_bytes_count
        else:
            written_files = written_bytes = 0
            jobs = {"convert": [convert], "convert_rewrite": [convert, rewrite], "merge": [merge]}[name]
            for body in jobs:
                result = run_job(config, ref, body.__name__, body)
                assert result.status == "committed", result.error
                written_files += result.counters.get("position_delete_files_added", 0) + result.counters.get("data_files_added", 0)
                written_bytes += result.counters["bytes_written"]
        job_seconds = time.perf_counter() - started
        after = health(ref)
        assert content_fingerprint(spark, ref).same_content(fingerprint), f"{name} changed the content"
        rows.append((name, before, after, job_seconds, scan_before, scan_seconds(ref), written_files, written_bytes))

    print(f"CDC table: {args.rows} change events, {args.commits} commits, {args.partitions} partitions (5% updates, 1% deletes); scans: median of {args.repeat}")
    header = (
        f"{'contender':<34} {'job s':>7} {'files written':>14} {'MB written':>11} {'scan before s':>14} {'scan after s':>13} "
        f"{'eq deletes left':>16} {'pos deletes left':>17} {'data files':>11}"
    )
    print(header)
    labels = {
        "convert": "icemaint CONVERT",
        "convert_rewrite": "icemaint CONVERT + REWRITE",
        "merge": "icemaint MERGE",
        "stock": "stock rewrite_data_files (thr. 1)",
    }
    for name, before, after, job_s, scan_before, scan_after, files, written_bytes in rows:
        print(
            f"{labels[name]:<34} {job_s:>7.1f} {files:>14} {written_bytes / 1e6:>11.2f} {scan_before:>14.2f} {scan_after:>13.2f} "
            f"{after.equality_delete_files:>16} {after.position_delete_files:>17} {after.data_files:>11}"
        )
    first = rows[0][1]
    print(f"before maintenance each table had {first.data_files} data, {first.equality_delete_files} equality and {first.position_delete_files} position delete files")
    print("files written: position delete files (CONVERT, REWRITE) or data files (MERGE, stock); stock MB is its rewritten-bytes count")


if __name__ == "__main__":
    main()
