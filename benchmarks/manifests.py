"""MANIFESTS on a table of many commits: how long a full scan's planning takes before and after.

    .venv/bin/python benchmarks/manifests.py [--commits 1000] [--rows 200000] [--partitions 4] [--repeat 3] [--job-repeat 1] [--json-out F]

One CDC table (5% updates, 1% deletes) with `commits` commits, each adding data, equality
delete and position delete files: a data and a delete manifest per commit. Measured:
Iceberg's own planning of a full scan (`planFiles()` in Java, every task iterated), the
metadata read `icemaint health` does (pyiceberg, no JVM), and a scan filtered to one
partition, before and after icemaint MANIFESTS and after the stock `rewrite_manifests`
(both start from exactly the generated table: it is rolled back between them); medians
of --repeat. The jobs' own times are medians of --job-repeat rounds, each running every
contender once in turn. Every contender runs once unmeasured first (the JVM's first run
of any code path is several times slower).
"""

from __future__ import annotations

import argparse
import statistics
import time

from common import fresh_embedded, generate_cdc, median_seconds, reset_to, write_json


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--job-repeat", type=int, default=1, help="rounds of the jobs themselves (their time: the median)")
    parser.add_argument("--json-out")
    args = parser.parse_args()

    config, spark = fresh_embedded("manifests")
    from maintenance.catalogs import load_table
    from maintenance.run.runner import run_job
    from maintenance.spark.jvm import load_java_table
    from maintenance.table.files import CACHE
    from maintenance.table.health import table_health

    ref, generate_s = generate_cdc(spark, config, "bench.commits", rows=args.rows, commits=args.commits, partitions=args.partitions, seed=3)
    generated = load_table(config, ref).metadata.current_snapshot_id

    def measure(stage: str, job_s: float | None = None) -> dict:
        spark.sql(f"REFRESH TABLE {ref.spark_name}")
        java = load_java_table(spark, ref)

        def plan_files(filtered: bool) -> int:
            scan = java.newScan()
            if filtered:
                scan = scan.filter(spark._jvm.org.apache.iceberg.expressions.Expressions.equal("region", 1))  # type: ignore[attr-defined]
            tasks, count = scan.planFiles(), 0
            iterator = tasks.iterator()
            while iterator.hasNext():
                iterator.next()
                count += 1
            tasks.close()
            return count

        def health() -> None:
            CACHE.clear()
            table_health(str(ref), load_table(config, ref), small_file_bytes=1)

        table = load_table(config, ref)
        counted = table_health(str(ref), table, small_file_bytes=1)
        return {"stage": stage, "job_s": job_s, "manifests": counted.manifests, "tasks": plan_files(False),
                "plan_files_s": median_seconds(lambda: plan_files(False), args.repeat),
                "plan_one_partition_s": median_seconds(lambda: plan_files(True), args.repeat),
                "health_s": median_seconds(health, args.repeat)}

    contenders = (("after icemaint MANIFESTS", lambda: run_job(config, ref, "manifests", {})),
                  ("after icemaint MANIFESTS, verified", lambda: run_job(config, ref, "manifests", {}, verify=True)),
                  ("after stock rewrite_manifests", lambda: spark.sql(f"CALL local.system.rewrite_manifests('{ref.identifier}')").collect()))
    for _, action in contenders:  # warm-up, unmeasured: the JVM's first run of anything is slow
        reset_to(spark, ref, generated)
        action()
    reset_to(spark, ref, generated)
    stages = [measure("before")]
    rounds: dict[str, list[float]] = {label: [] for label, _ in contenders}
    for _ in range(args.job_repeat):  # each round runs every contender once, in turn
        for label, action in contenders:
            reset_to(spark, ref, generated)
            started = time.perf_counter()
            result = action()
            rounds[label].append(time.perf_counter() - started)
            assert getattr(result, "status", "committed") == "committed", getattr(result, "error", result)
    for label, action in contenders:
        reset_to(spark, ref, generated)
        action()
        stages.append({**measure(label, statistics.median(rounds[label])), "rounds_s": rounds[label]})
        print(stages[-1], flush=True)
    write_json(args.json_out, {"commits": args.commits, "rows": args.rows, "partitions": args.partitions, "repeat": args.repeat, "job_repeat": args.job_repeat,
                               "generate_s": generate_s, "stages": stages})


if __name__ == "__main__":
    main()
