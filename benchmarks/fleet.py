"""A fleet of small tables: what one evaluation of all of them costs today (issue: the fleet).

    .venv/bin/python benchmarks/fleet.py [--tables 10000] [--home DIR] [--json-out F]

Generates the fleet with `icemaint workload fleet`'s generator (pyiceberg appends, no
Spark: 3 commits of 100 rows in 2 partitions per table) into `--home` (kept, so a second
call reuses it), then measures in a fresh process that never starts a JVM: two full
evaluations in a row (`icemaint plan`: health of every table, policies, run history,
ranking), each table's metadata read from the local disk, and the process's peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

from common import write_json


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=10_000)
    parser.add_argument("--home", help="where the fleet is (made when missing); default a new temporary folder")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)  # the measuring process
    parser.add_argument("--json-out")
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure()))
        return
    os.environ["ICEMAINT_HOME"] = args.home or tempfile.mkdtemp(prefix="icemaint-bench-fleet-")
    from maintenance.catalogs import get_catalog
    from maintenance.config import load_config
    from maintenance.workload.fleet import FleetOptions, make_fleet

    config = load_config(None)
    made = make_fleet(get_catalog(config, config.default_catalog), config.default_catalog, FleetOptions(tables=args.tables))
    out = subprocess.run([sys.executable, __file__, "--measure"], capture_output=True, text=True, env=os.environ, check=True)
    result = {**json.loads(out.stdout.strip().splitlines()[-1]), "generate_s": made.seconds, "tables_created": made.tables_created}
    print(f"{result['tables']} tables: first evaluation {result['first_s']:.1f} s ({result['first_ms_per_table']:.1f} ms a table), "
          f"second {result['second_s']:.1f} s; peak RSS {result['peak_rss_mib']:.0f} MiB; JVM started: {result['jvm_started']}")
    write_json(args.json_out, result)


def measure() -> dict:
    from maintenance.catalogs import list_tables
    from maintenance.config import load_config
    from maintenance.policy.loader import load_policies
    from maintenance.schedule.cycle import evaluate
    from maintenance.state.store import open_state

    config = load_config(None)
    refs = list_tables(config)
    policies = load_policies(config.policies_dir)
    state = open_state(config)
    times, due = [], 0
    for _ in range(2):
        started = time.perf_counter()
        due = len(evaluate(config, state, None, policies).due)
        times.append(time.perf_counter() - started)
    return {
        "tables": len(refs),
        "first_s": times[0],
        "first_ms_per_table": 1000 * times[0] / max(1, len(refs)),
        "second_s": times[1],
        "due": due,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "jvm_started": "pyspark" in sys.modules,
    }


if __name__ == "__main__":
    main()
