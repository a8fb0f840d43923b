"""Planning without Spark: `health` and `plan` over many generated tables, per table.

    .venv/bin/python benchmarks/planning.py [--tables 200] [--repeat 3] [--json-out F]

Generates the tables with Spark (small CDC tables, 3 commits each), then measures in a
fresh process that never starts a JVM: health of every table, and one full evaluation
(`icemaint plan`: health, policies, run history, ranking) of all of them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from common import fresh_embedded, write_json


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)  # the Spark-free half
    parser.add_argument("--json-out")
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.repeat)))
        return

    config, spark = fresh_embedded("planning")
    from maintenance.catalogs import parse_table_ref
    from maintenance.workload.cdc import CdcOptions, run_cdc_workload

    started = time.perf_counter()
    for i in range(args.tables):
        run_cdc_workload(spark, config, parse_table_ref(f"plan.t{i:03d}", config), CdcOptions(rows=300, commits=3, update_ratio=0.2, seed=i))
    generate_s = time.perf_counter() - started
    out = subprocess.run([sys.executable, __file__, "--measure", "--repeat", str(args.repeat)], capture_output=True, text=True, env=os.environ, check=True)
    result = {**json.loads(out.stdout.strip().splitlines()[-1]), "generate_s": generate_s}
    print(f"{result['tables']} tables: health {result['health_ms_per_table']:.1f} ms per table, plan {result['plan_ms_per_table']:.1f} ms per table "
          f"({result['due']} jobs due); JVM started: {result['jvm_started']}")
    write_json(args.json_out, result)


def measure(repeat: int) -> dict:
    import statistics

    from maintenance.catalogs import list_tables, load_table
    from maintenance.config import load_config
    from maintenance.policy.loader import load_policies
    from maintenance.schedule.cycle import evaluate
    from maintenance.state.store import open_state
    from maintenance.table.health import table_health

    config = load_config(None)
    refs = list_tables(config)
    policies = load_policies(config.policies_dir)
    state = open_state(config)
    health_times, plan_times, due = [], [], 0
    for _ in range(repeat):
        started = time.perf_counter()
        for ref in refs:
            table_health(str(ref), load_table(config, ref), small_file_bytes=config.health.small_file_bytes)
        health_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        due = len(evaluate(config, state, None, policies).due)
        plan_times.append(time.perf_counter() - started)
    return {
        "tables": len(refs),
        "health_ms_per_table": 1000 * statistics.median(health_times) / len(refs),
        "plan_ms_per_table": 1000 * statistics.median(plan_times) / len(refs),
        "due": due,
        "jvm_started": "pyspark" in sys.modules,
    }


if __name__ == "__main__":
    main()
