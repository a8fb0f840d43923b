"""What a rewrite of one partition costs to plan: its partition's scan, or the whole table's.

    .venv/bin/python benchmarks/scan_planning.py [--rows 400000] [--commits 40] [--partitions 256] [--repeat 7] [--json-out F]

A MERGE or COMPACT of one partition, and its verification, plan Iceberg's scan tasks (with
every delete that applies) for that partition's data files (`spark/planned_tasks.py`). The
scan is filtered to the files' partitions; before, the whole snapshot was planned and the
wanted tasks picked out. Both are timed here on the same table, in the same JVM, through
the same Java helper (`PlannedTasks.plan`, with and without the partition filter), medians
of --repeat alternating rounds after one unmeasured round each:
- on a CDC table as a streaming writer leaves it: every commit's manifest holds files of
  every partition, so no manifest can be skipped, only entries;
- on the same table after Iceberg's `rewrite_manifests` at its default target size (one
  manifest for the data files, one for the deletes: nothing to skip, and the filter's
  checks of every entry are extra work);
- after `rewrite_manifests` into small manifests (`commit.manifest.target-size-bytes`
  64 KiB), clustered by partition as a large table's are: the filter skips manifests.
Both plans must hold the same tasks with the same deletes (checked each round).
"""

from __future__ import annotations

import argparse
import statistics
import time

from common import fresh_embedded, generate_cdc, write_json


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--commits", type=int, default=40)
    parser.add_argument("--partitions", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--json-out")
    args = parser.parse_args()

    config, spark = fresh_embedded("scan-planning")
    from maintenance.catalogs import load_table
    from maintenance.spark.java_helpers import new_helper
    from maintenance.spark.jvm import load_java_table
    from maintenance.spark.planned_tasks import encoded_partitions
    from maintenance.table.files import snapshot_files

    ref, generate_s = generate_cdc(spark, config, "bench.planning", rows=args.rows, commits=args.commits, partitions=args.partitions, seed=5)

    def plan_once(java, snapshot_id: int, paths: str, partitions: str) -> tuple[float, str]:  # type: ignore[no-untyped-def]
        helper = new_helper(spark, "PlannedTasks")
        started = time.perf_counter()
        missing = str(helper.plan(java, str(snapshot_id), paths, partitions))
        elapsed = time.perf_counter() - started
        assert not missing and bool(helper.filtered()) == bool(partitions), (missing, partitions)
        return elapsed, str(helper.deleteKeys())

    def measure(layout: str) -> dict:
        table = load_table(config, ref)
        snapshot_id = table.metadata.current_snapshot_id
        files = snapshot_files(table, snapshot_id)
        wanted = [f for f in files.data if f.partition == (3,)]
        paths, partitions = "\n".join(f.path for f in wanted), encoded_partitions(wanted)
        java = load_java_table(spark, ref)
        times: dict[str, list[float]] = {"partition": [], "whole": []}
        for round_ in range(args.repeat + 1):
            (filtered_s, filtered_deletes), (whole_s, whole_deletes) = plan_once(java, snapshot_id, paths, partitions), plan_once(java, snapshot_id, paths, "")
            assert sorted(filtered_deletes.split("\n")) == sorted(whole_deletes.split("\n"))
            if round_:
                times["partition"].append(filtered_s)
                times["whole"].append(whole_s)
        manifests = table.current_snapshot().manifests(table.io)
        return {"layout": layout, "data_files": len(files.data), "delete_files": len(files.files) - len(files.data), "manifests": len(manifests),
                "wanted_files": len(wanted), "wanted_deletes": len([k for k in whole_deletes.split("\n") if k]),
                "partition_s": statistics.median(times["partition"]), "whole_s": statistics.median(times["whole"])}

    layouts = [measure("as the writer left it")]
    spark.sql(f"CALL {ref.catalog}.system.rewrite_manifests('{ref.identifier}')").collect()
    layouts.append(measure("after rewrite_manifests"))
    spark.sql(f"ALTER TABLE {ref.spark_name} SET TBLPROPERTIES ('commit.manifest.target-size-bytes'='65536')")
    spark.sql(f"CALL {ref.catalog}.system.rewrite_manifests('{ref.identifier}')").collect()
    layouts.append(measure("after rewrite_manifests into 64 KiB manifests"))
    write_json(args.json_out, {"rows": args.rows, "commits": args.commits, "partitions": args.partitions, "repeat": args.repeat,
                               "generate_s": generate_s, "layouts": layouts})


if __name__ == "__main__":
    main()
