"""icemaint's CONVERT, REWRITE and MERGE against Iceberg's stock procedures, side by side.

    .venv/bin/python benchmarks/compaction.py [--sizes 1000000:100:identity,1000000:50:none] [--repeat 3] [--job-repeat 5] [--json-out F]

For each size (change events : commits : partitioning), identical CDC tables (5% updates,
1% deletes) are generated from one seed, one per contender:
- icemaint CONVERT, then REWRITE on the same table;
- icemaint MERGE;
- stock `rewrite_data_files` with delete-file-threshold 1;
- stock `rewrite_position_delete_files`;
- plus the floor: the same rows, no delete files, the same partitioning, files at the
  target size, written the way COMPACT writes them (`common.floor_copy`).

Full-scan and point-lookup times are medians of --repeat. Job times are medians of
--job-repeat rounds: in each round every contender runs once, in turn, on its own table
put back to the snapshot it was generated at (CONVERT's; REWRITE follows CONVERT's
commit), so a slow spell of the machine falls on every contender alike (single runs of the
same job on a 2-core machine differ by 30%). Bytes read and written are the Spark JVM's
Hadoop file-system counters plus the Python process's own (`common.io_counters`) around
the job, in the last round; the reads after each job, the files left and the content
check are taken there too. Every contender's content is verified against the table
before maintenance. Every contender first runs once, unmeasured, on a small table. Every
number is measured by this run.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from common import floor_copy, fresh_embedded, io_counters, median_seconds, reset_to, write_json

LOOKUPS = 5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000000:100:identity,1000000:50:none", help="rows:commits:partitioning[:format version],...")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--job-repeat", type=int, default=5)
    parser.add_argument("--json-out")
    args = parser.parse_args()

    config, spark = fresh_embedded("compaction")
    # Warm-up, unmeasured: every contender once on a small table (the JVM's first run of any
    # code path is several times slower, and would count against whoever runs first).
    sizes = [(int(rows), int(commits), partitioning, int(version[0]) if version else 2)
             for rows, commits, partitioning, *version in (size.split(":") for size in args.sizes.split(","))]
    for version in sorted({size[3] for size in sizes}):
        measure_size(config, spark, 99 - version, 20000, 10, "identity", args.partitions, 1, version, 1)
    results = []
    for number, (rows, commits, partitioning, version) in enumerate(sizes):
        results.append(measure_size(config, spark, number, rows, commits, partitioning, args.partitions, args.repeat, version, args.job_repeat))
        print_size(results[-1])
    write_json(args.json_out, {"repeat": args.repeat, "job_repeat": args.job_repeat, "sizes": results})


def measure_size(config, spark, number: int, rows: int, commits: int, partitioning: str, partitions: int, repeat: int,  # type: ignore[no-untyped-def]
                 format_version: int = 2, job_repeat: int = 1) -> dict:
    from maintenance.catalogs import load_table, parse_table_ref
    from maintenance.spark.fingerprint import content_fingerprint
    from maintenance.workload.cdc import CdcOptions, run_cdc_workload
    from maintenance.workload.shape import TableShape

    shape = TableShape(partitioning, partitions if partitioning != "none" else 1, "single")
    options = CdcOptions(rows=rows, commits=commits, update_ratio=0.05, delete_ratio=0.01, shape=shape, seed=7, format_version=format_version)
    refs = {name: parse_table_ref(f"bench{number}.{name}", config) for name in ("icemaint", "merge", "stock_data", "stock_pos")}
    started = time.perf_counter()
    for ref in refs.values():
        run_cdc_workload(spark, config, ref, options)
    generate_s = (time.perf_counter() - started) / len(refs)
    expected = content_fingerprint(spark, refs["icemaint"])
    keys = random.Random(1).sample([r.id for r in spark.sql(f"SELECT id FROM {refs['icemaint'].spark_name} LIMIT 100000").collect()], LOOKUPS)
    floor = parse_table_ref(f"bench{number}.floor", config)
    floor_copy(config, spark, refs["icemaint"], floor)

    def reads(ref) -> dict:  # type: ignore[no-untyped-def]
        return {"scan_s": median_seconds(lambda: content_fingerprint(spark, ref), repeat),
                "lookup_ms": 1000 * median_seconds(lambda: [spark.sql(f"SELECT * FROM {ref.spark_name} WHERE id = {k}").collect() for k in keys], repeat) / LOOKUPS,
                **delete_files(config, ref)}

    stages = [{"stage": "before maintenance", **reads(refs["icemaint"])}]
    generated = {name: load_table(config, ref).metadata.current_snapshot_id for name, ref in refs.items()}
    convert_run: dict = {}
    contenders = (  # label, table, action, the snapshot it starts from in every round (None: where the one before left it)
        ("icemaint CONVERT", "icemaint", icemaint_job(config, "convert", convert_run), generated["icemaint"]),
        ("icemaint REWRITE (after CONVERT)", "icemaint", icemaint_job(config, "rewrite"), None),
        ("icemaint MERGE", "merge", icemaint_job(config, "merge"), generated["merge"]),
        ("stock rewrite_data_files (delete-file-threshold 1)", "stock_data",
         stock_call(spark, "rewrite_data_files", "options => map('delete-file-threshold','1')"), generated["stock_data"]),
        ("stock rewrite_position_delete_files", "stock_pos", stock_call(spark, "rewrite_position_delete_files", "options => map('rewrite-all','true')"),
         generated["stock_pos"]),
    )
    times: dict[str, list[float]] = {label: [] for label, *_ in contenders}
    jobs = []
    for round_number in range(job_repeat):
        last = round_number == job_repeat - 1
        for label, name, action, start in contenders:
            ref = refs[name]
            if start is not None and round_number > 0:
                reset_to(spark, ref, start)
            snapshots_before = len(load_table(config, ref).metadata.snapshots)
            before = io_counters(spark)
            started = time.perf_counter()
            action(ref)
            times[label].append(time.perf_counter() - started)
            after = io_counters(spark)
            if last:
                assert content_fingerprint(spark, ref).same_content(expected), f"{label} changed the content"
                jobs.append({"job": label, "job_s": statistics.median(times[label]), "job_runs_s": times[label],
                             "mib_read": (after[0] - before[0]) / 2**20, "mib_written": (after[1] - before[1]) / 2**20,
                             "snapshots_added": len(load_table(config, ref).metadata.snapshots) - snapshots_before, **delete_files(config, ref)})
                stages.append({"stage": f"after {label}", **reads(ref)})
    stages.append({"stage": "floor: the same rows compacted, no deletes", **reads(floor)})
    convert = {"key_mib": convert_run.get("key_bytes_scanned", 0) / 2**20, "delete_mib": convert_run.get("delete_bytes_scanned", 0) / 2**20,
               "data_mib": convert_run.get("data_bytes_scanned", 0) / 2**20, "engine": convert_run.get("scan_engine")}
    return {"rows": rows, "commits": commits, "partitioning": partitioning, "partitions": shape.partitions, "format_version": format_version, "expected_rows": expected.rows,
            "generate_s_per_table": generate_s, "jobs": jobs, "stages": stages, "convert": convert}


def icemaint_job(config, job: str, counters: dict | None = None):  # type: ignore[no-untyped-def]
    from maintenance.run.runner import run_job

    def run(ref) -> None:  # type: ignore[no-untyped-def]
        result = run_job(config, ref, job)
        assert result.status in ("committed", "noop"), result.error
        if counters is not None:
            counters.update(result.counters)

    return run


def stock_call(spark, procedure: str, options: str):  # type: ignore[no-untyped-def]
    def run(ref) -> None:  # type: ignore[no-untyped-def]
        spark.sql(f"CALL local.system.{procedure}(table => '{ref.identifier}', {options})").collect()

    return run


def delete_files(config, ref) -> dict:  # type: ignore[no-untyped-def]
    from maintenance.catalogs import load_table
    from maintenance.table.health import table_health

    health = table_health(str(ref), load_table(config, ref), small_file_bytes=config.health.small_file_bytes)
    return {"data_files": health.data_files, "equality_delete_files": health.equality_delete_files, "position_delete_files": health.position_delete_files,
            "deletion_vectors": health.deletion_vectors,
            "max_position_delete_files_per_partition": max((p.position_delete_files for p in health.partitions), default=0)}


def print_size(result: dict) -> None:
    print(f"\n{result['rows']} change events, {result['commits']} commits, {result['partitioning']} ({result['expected_rows']} rows; generated in {result['generate_s_per_table']:.0f} s per table)")
    print(f"{'job':<52} {'s':>7} {'MiB read':>9} {'MiB written':>12} {'data':>6} {'eq del':>7} {'pos del':>8}")
    for j in result["jobs"]:
        print(f"{j['job']:<52} {j['job_s']:>7.1f} {j['mib_read']:>9.1f} {j['mib_written']:>12.1f} {j['data_files']:>6} {j['equality_delete_files']:>7} {j['position_delete_files']:>8}")
    print(f"{'table state':<60} {'scan s':>7} {'lookup ms':>10}")
    for s in result["stages"]:
        print(f"{s['stage']:<60} {s['scan_s']:>7.2f} {s['lookup_ms']:>10.1f}")


if __name__ == "__main__":
    main()
