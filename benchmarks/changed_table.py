"""A daemon's evaluation of a table a writer keeps committing to: after each commit, does it
read every manifest again, or only the new one? (issue: the fleet, "a changed table reads
only the manifests it has not summarised before").

    .venv/bin/python benchmarks/changed_table.py [--commits 500] [--rounds 20] [--json-out F]

One table made by `icemaint workload fleet`'s generator (pyiceberg appends, no Spark, no
JVM): `--commits` commits of 100 rows in 4 partitions, one manifest each (pyiceberg's fast
append keeps the earlier manifests as they are). Then `--rounds` times: one more append (a
writer's commit, a new metadata location), and the daemon's evaluation of the table
(`schedule.cycle.evaluate` with its `KeptEvaluations`: health, policy, plans). Measured per
round: the evaluation's time and the manifests it read (`table.files.CACHE.manifests_read`),
medians over the rounds:
- kept: as the daemon runs, the table's previous snapshot kept in the process
  (`maintenance/table/files.py`), so a round reads the new manifest only;
- not kept: the same rounds with the process's snapshots forgotten before each evaluation
  (as when the table's previous snapshot has been pushed out of the bounded cache), so a
  round reads every manifest.
Both on the same table, one after the other, in one process; after every round, the
table's health must be what an evaluation that reads every manifest from storage finds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from common import write_json


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--json-out")
    args = parser.parse_args()
    os.environ["ICEMAINT_HOME"] = tempfile.mkdtemp(prefix="icemaint-bench-changed-")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from maintenance.catalogs import get_catalog
    from maintenance.config import load_config
    from maintenance.workload.fleet import FleetOptions, make_fleet

    config = load_config(None)
    options = FleetOptions(tables=1, commits=args.commits, rows=100, partitions=4)
    made = make_fleet(get_catalog(config, config.default_catalog), config.default_catalog, options)
    result = {"commits": args.commits, "rounds": args.rounds, "generate_s": made.seconds}
    result.update(rounds(config, options, args.rounds))
    print(json.dumps(result, indent=2))
    write_json(args.json_out, result)


def rounds(config, options, count: int) -> dict:  # type: ignore[no-untyped-def]
    from maintenance.catalogs import get_catalog
    from maintenance.policy.loader import load_policies
    from maintenance.schedule.cycle import evaluate
    from maintenance.schedule.kept import KeptEvaluations
    from maintenance.state.store import open_state
    from maintenance.table.files import CACHE
    from maintenance.workload.fleet import change_tables

    folder = Path(tempfile.mkdtemp(prefix="icemaint-bench-changed-policies-"))
    (folder / "p.yaml").write_text("name: p\njobs:\n  compact:\n    when: {data_files: 1000000}\n")  # evaluated, never due
    policies = load_policies(folder)
    state = open_state(config)
    catalog = get_catalog(config, config.default_catalog)
    measured: dict[str, dict[str, list[float]]] = {}
    same: dict[str, list[bool]] = {}
    for mode in ("kept", "not_kept"):
        kept = KeptEvaluations()
        evaluate(config, state, None, policies, kept=kept)  # the first look: every manifest
        seconds, reads = [], []
        same[mode] = []
        for _ in range(count):
            change_tables(catalog, options, every=1)
            if mode == "not_kept":
                CACHE.clear()
            before = CACHE.manifests_read
            now = datetime.now(timezone.utc)
            started = time.perf_counter()
            evaluation = evaluate(config, state, None, policies, now=now, kept=kept)
            seconds.append(time.perf_counter() - started)
            reads.append(CACHE.manifests_read - before)
            kept_snapshots = CACHE.snapshots()
            CACHE.clear()
            checked = evaluate(config, state, None, policies, now=now)  # the check, not timed: read from storage
            CACHE.restore(kept_snapshots)
            same[mode].append(evaluation.health == checked.health)
        measured[mode] = {"seconds": seconds, "manifests_read": reads}
    out: dict = {mode: {"median_s": statistics.median(m["seconds"]), "median_manifests_read": statistics.median(m["manifests_read"])}
                 for mode, m in measured.items()}
    out["speedup"] = out["not_kept"]["median_s"] / out["kept"]["median_s"]
    out["health_as_read_from_storage"] = all(same["kept"]) and all(same["not_kept"])
    return out


if __name__ == "__main__":
    main()
