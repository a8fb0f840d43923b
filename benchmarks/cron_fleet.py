"""Cron over a fleet: `icemaint run --dry-run` and `plan` as CLI processes, cold and warm.

    .venv/bin/python benchmarks/cron_fleet.py [--tables 2000] [--home DIR] [--json-out F]

Generates the fleet with `icemaint workload fleet` (pyiceberg appends, no Spark: 3 commits
of 100 rows in 2 partitions per table; SQL catalog on SQLite, local disk) into `--home`
(kept, so a second call reuses it; the state database is made afresh each call), under a
policy of metadata triggers (`POLICY`), then, each a new CLI process as a cron tick is:
- cold: `run --dry-run --json` with nothing shared yet (it writes every table's evaluation
  to the state database, `maintenance/schedule/shared.py`);
- warm: one table in 100 gets one more commit (`workload.fleet.change_tables`), then
  `plan --json`, which reads again only the tables whose metadata location moved;
- check: `plan --fresh --json` right after, every table read; its decisions must be the
  warm plan's, every field (a reason's snapshot age aside: the two ran seconds apart);
and the peak RSS of each process (a CLI run never starts a JVM for a plan or a dry run).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import write_json

REPO = Path(__file__).resolve().parent.parent
# A fleet kept healthy: jobs that fire on what the metadata says (a job on a schedule alone,
# as the shipped default's ORPHANS, is due on every table until it has run, and a due job is
# planned from the table on every tick, shared evaluation or not).
POLICY = """name: kept-healthy
jobs:
  merge:
    when:
      equality_delete_files: 1
  compact:
    when:
      small_files: 20
  manifests:
    when:
      manifests: 4
  expire:
    when:
      snapshots: 100
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=2000)
    parser.add_argument("--home", help="where the fleet is (made when missing); default a new temporary folder")
    parser.add_argument("--generate-only", action="store_true", help="make the fleet in --home and stop (to measure later, alone)")
    parser.add_argument("--json-out")
    args = parser.parse_args()
    home = Path(args.home or tempfile.mkdtemp(prefix="icemaint-cron-fleet-"))
    home.mkdir(parents=True, exist_ok=True)
    config = home / "icemaint.yaml"
    (home / "policies").mkdir(exist_ok=True)
    (home / "policies" / "kept-healthy.yaml").write_text(POLICY)
    config.write_text(f"home: {home}\npolicies: {home / 'policies'}\nstate:\n  url: sqlite:///{home / 'cron-state.db'}\n")
    (home / "cron-state.db").unlink(missing_ok=True)
    result: dict = {"tables": args.tables}
    created = not (home / "catalog.db").exists()
    if created:
        started = time.monotonic()
        _icemaint(config, "workload", "fleet", "--tables", str(args.tables))
        result["generate_s"] = time.monotonic() - started
    result["tables_created"] = created
    if args.generate_only:
        print(json.dumps(result))
        return

    cold_s, cold_rss, cold_out = _timed(config, "run", "--dry-run", "--json")
    changed = _change(config, args.tables)
    warm_s, warm_rss, warm_out = _timed(config, "plan", "--all", "--json")
    check_s, check_rss, check_out = _timed(config, "plan", "--all", "--json", "--fresh")
    warm, check = json.loads(warm_out), json.loads(check_out)
    result.update({
        "cold_s": cold_s, "cold_jobs_planned": len([line for line in cold_out.splitlines() if line.strip()]),
        "tables_changed": changed, "warm_s": warm_s, "warm_reused": warm["tables_reused"], "check_s": check_s,
        "warm_over_cold": warm_s / cold_s, "warm_over_check": warm_s / check_s,
        "decisions": len(check["decisions"]), "same_decisions": _comparable(warm["decisions"]) == _comparable(check["decisions"]),
        "due": sum(1 for d in check["decisions"] if d["due"]),
        "peak_rss_mib": {"cold": cold_rss, "warm": warm_rss, "check": check_rss},
    })
    print(json.dumps(result, indent=2))
    write_json(args.json_out, result)


def _comparable(decisions: list[dict]) -> list[dict]:
    """Decisions with the snapshot ages in their reasons masked (`oldest_snapshot_age 36s`)."""
    return [{**d, "reason": re.sub(r"oldest_snapshot_age [\d.]+\w*", "oldest_snapshot_age _", d["reason"])} for d in decisions]


def _icemaint(config: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("ICEMAINT_HOME", "ICEMAINT_CONFIG")}
    done = subprocess.run([sys.executable, "-m", "maintenance", "--config", str(config), *args], cwd=REPO, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"icemaint {' '.join(args)} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return done.stdout


def _timed(config: Path, *args: str) -> tuple[float, float, str]:
    """Seconds, peak RSS (MiB) and stdout of one CLI process, run by a small wrapper process
    of its own whose only child it is: the wrapper's RUSAGE_CHILDREN maximum is that
    process's peak (the largest of its tree; a plan or a dry run starts no JVM)."""
    probe = ("import json,resource,subprocess,sys,time;t=time.monotonic();"
             "p=subprocess.run(sys.argv[1:],capture_output=True,text=True);"
             "print(json.dumps({'s':time.monotonic()-t,'rss':resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024,"
             "'rc':p.returncode,'out':p.stdout,'err':p.stderr[-500:]}))")
    env = {k: v for k, v in os.environ.items() if k not in ("ICEMAINT_HOME", "ICEMAINT_CONFIG")}
    done = subprocess.run([sys.executable, "-c", probe, sys.executable, "-m", "maintenance", "--config", str(config), *args],
                          cwd=REPO, env=env, capture_output=True, text=True, check=True)
    measured = json.loads(done.stdout)
    if measured["rc"] != 0:
        raise SystemExit(f"icemaint {' '.join(args)} exited {measured['rc']}: {measured['err']}")
    return measured["s"], measured["rss"], measured["out"]


def _change(config: Path, tables: int) -> int:
    """One more commit to one table in 100, as writers do between two cron ticks."""
    sys.path.insert(0, str(REPO))
    from maintenance.catalogs import get_catalog
    from maintenance.config import load_config
    from maintenance.workload.fleet import FleetOptions, change_tables

    loaded = load_config(str(config))
    return len(change_tables(get_catalog(loaded, loaded.default_catalog), FleetOptions(tables=tables), every=100))


if __name__ == "__main__":
    main()
