"""MERGE and COMPACT on a table of many partitions: one file group at a time against several at once.

    .venv/bin/python benchmarks/scaling.py [--partitions 500] [--commits 20] [--rows 1000000] [--json-out F]

One CDC table (5% updates, 1% deletes) of `partitions` identity partitions is generated,
`commits` commits of a data file, an equality delete and a position delete per partition.
Each contender then runs in a process of its own, with its own Spark master
(`local[1]`, `local[2]`: the cores it may use) and `max_concurrent_groups`, on exactly
the generated table (rolled back to it first; no contender deletes a file), after a
warm-up run of the same job on a small table in the same process. With the default
options the table's small partitions are combined into one file group; with
`max_group_bytes` at 1/32 of the table they make about 32 groups, as a table 32 times the
size would at the default. Measured: job time, the process tree's peak resident memory
(Python and its JVM), snapshots committed; the content is checked against the generated
table's after every run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import fresh_embedded, generate_cdc, reset_to, write_json
from memory import peak_tree_mib

HERE = Path(__file__).resolve().parent
# (Spark master, max_concurrent_groups, max_group_bytes as a share of the table's bytes: None is the default)
SETTINGS = [("local[1]", 1, None), ("local[2]", 1, None), ("local[2]", 4, None), ("local[1]", 1, 1 / 32), ("local[2]", 1, 1 / 32), ("local[2]", 4, 1 / 32)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=500)
    parser.add_argument("--commits", type=int, default=20)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--json-out")
    parser.add_argument("--run", help=argparse.SUPPRESS)  # a child: JSON of what to run
    args = parser.parse_args()
    if args.run:
        run_one(json.loads(args.run))
        return

    home = tempfile.mkdtemp(prefix="icemaint-bench-scaling-")
    config, spark = fresh_embedded("scaling", home=home)
    from maintenance.catalogs import load_table
    from maintenance.spark.fingerprint import content_fingerprint
    from maintenance.table.health import table_health

    ref, generate_s = generate_cdc(spark, config, "bench.partitions", rows=args.rows, commits=args.commits, partitions=args.partitions, seed=5)
    table = load_table(config, ref)
    health = table_health(str(ref), table, small_file_bytes=config.health.small_file_bytes)
    snapshot_id = table.metadata.current_snapshot_id
    expected = content_fingerprint(spark, ref)
    from maintenance.spark.session import stop_spark

    stop_spark()
    runs = []
    for number, (job, (master, groups, share)) in enumerate((job, setting) for job in ("merge", "compact") for setting in SETTINGS):
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            task = {"home": home, "table": str(ref), "snapshot_id": snapshot_id, "job": job, "master": master, "groups": groups,
                    "max_group_bytes": int(share * health.data_bytes) if share else None, "number": number,
                    "fingerprint": expected.fingerprint, "rows": expected.rows, "out": out.name}
            subprocess.run([sys.executable, __file__, "--run", json.dumps(task)], check=True, cwd=HERE.parent)
            runs.append(json.loads(Path(out.name).read_text()))
        print(runs[-1], flush=True)
    write_json(args.json_out, {"partitions": args.partitions, "commits": args.commits, "rows": expected.rows, "generate_s": generate_s,
                               "data_files": health.data_files, "delete_files": health.position_delete_files + health.equality_delete_files,
                               "cores": os.cpu_count(), "runs": runs})


def run_one(task: dict) -> None:
    config, spark = fresh_embedded("scaling", spark_master=task["master"], home=task["home"])
    from maintenance.catalogs import parse_table_ref
    from maintenance.run.runner import run_job
    from maintenance.spark.fingerprint import content_fingerprint
    from maintenance.workload.cdc import CdcOptions, run_cdc_workload
    from maintenance.workload.shape import TableShape

    options = {"max_concurrent_groups": task["groups"], "max_group_bytes": task["max_group_bytes"], **({"min_input_files": 2} if task["job"] == "compact" else {})}
    warm_up = parse_table_ref(f"bench.warm_up_{task['number']}", config)
    run_cdc_workload(spark, config, warm_up, CdcOptions(rows=4000, commits=4, shape=TableShape("identity", 8, "single"), seed=1))
    run_job(config, warm_up, task["job"], {**options, "max_group_bytes": None})
    ref = parse_table_ref(task["table"], config)
    reset_to(spark, ref, task["snapshot_id"])
    started = time.perf_counter()
    result = run_job(config, ref, task["job"], options)
    job_s = time.perf_counter() - started
    assert result.status == "committed", result.error
    peak = peak_tree_mib()
    after = content_fingerprint(spark, ref)
    assert (after.rows, after.fingerprint) == (task["rows"], task["fingerprint"]), f"{task['job']} changed the content"
    Path(task["out"]).write_text(json.dumps({
        "job": task["job"], "master": task["master"], "max_concurrent_groups": task["groups"], "max_group_bytes": task["max_group_bytes"],
        "job_s": job_s, "peak_rss_mib": peak,
        "snapshots": result.counters.get("snapshots_published"), "groups": result.counters.get("groups_rewritten"),
        "data_files_rewritten": result.counters.get("data_files_rewritten"), "data_files_added": result.counters.get("data_files_added"),
    }))


if __name__ == "__main__":
    main()
