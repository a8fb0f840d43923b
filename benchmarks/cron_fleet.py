"""Cron over a fleet: `icemaint run --dry-run` and `plan` as CLI processes, cold and warm.

    .venv/bin/python benchmarks/cron_fleet.py [--tables 2000] [--catalog sql|rest] [--latency-ms 0]
        [--fleets DIR | --home DIR] [--generate-only] [--json-out F]

Generates the fleet with `icemaint workload fleet` (pyiceberg appends, no Spark: 3 commits
of 100 rows in 2 partitions per table) into its home when the home has none, so a later call
on the same home measures the same fleet (`--generate-only` makes it and stops, to measure
later on an idle machine). The home is `--home`, else `--fleets/<catalog>-<tables>` (`--fleets`
defaults to $ICEMAINT_BENCH_FLEETS), else a temporary folder removed at the end. Each
measurement gives one table in 100 one more commit, so a kept fleet grows by as many. The
catalog is
- `sql`: a SQL catalog on SQLite, metadata on local disk (the embedded default's layout);
- `rest`: SeaweedFS's Iceberg REST catalog with the metadata and data on its S3
  (`maintenance/workload/seaweedfs.py`, its data kept under the home and started again on
  it), each behind `benchmarks/latency_proxy.py`, which counts every request (S3 by kind,
  the catalog's by method) and adds `--latency-ms` to each. SeaweedFS advertises the S3
  proxy's address to its clients (`-s3.externalUrl`), so no S3 request passes around it.

The policy fires on metadata only (`POLICY`). Then, on a state database made afresh, each a
new CLI process as a cron tick is:
- cold: `run --dry-run --json` with nothing shared yet (it writes every table's evaluation
  to the state database, `maintenance/schedule/stored.py`);
- warm: one table in 100 gets one more commit (`workload.fleet.change_tables`), then
  `plan --all --json`, which reads again only the tables whose metadata location moved;
- check: `plan --all --fresh --json` right after, every table read; its decisions must be
  the warm plan's, every field (a reason's snapshot age aside: the two ran seconds apart);
with the peak RSS of each process (a plan or a dry run starts no JVM) and, on `rest`, the
requests each made.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from common import Proxy, compile_package, write_json

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
GENERATED = "generated.json"  # in the home, once the fleet is whole: what made it


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=2000)
    parser.add_argument("--catalog", choices=("sql", "rest"), default="sql")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="rest: added to every S3 and catalog request while measuring")
    parser.add_argument("--fleets", default=os.environ.get("ICEMAINT_BENCH_FLEETS"), help="folder of kept fleets, one per catalog and size")
    parser.add_argument("--home", help="where the fleet is (made when missing); overrides --fleets")
    parser.add_argument("--generate-only", action="store_true", help="make the fleet and stop (to measure later, alone)")
    parser.add_argument("--json-out")
    args = parser.parse_args()
    if args.latency_ms and args.catalog != "rest":
        parser.error("--latency-ms is for --catalog rest")
    temporary = not (args.home or args.fleets)  # removed at the end: a REST fleet of 10,000 tables is about 1 GB
    home = Path(args.home or (Path(args.fleets) / f"{args.catalog}-{args.tables}" if args.fleets else tempfile.mkdtemp(prefix="icemaint-cron-fleet-")))
    home.mkdir(parents=True, exist_ok=True)
    (home / "policies").mkdir(exist_ok=True)
    (home / "policies" / "kept-healthy.yaml").write_text(POLICY)
    result: dict = {"tables": args.tables, "catalog": args.catalog, "latency_ms": args.latency_ms}
    made = home / GENERATED
    result["tables_created"] = not made.exists()
    if result["tables_created"]:
        with _store(args, home, measuring=False) as store:
            started = time.monotonic()
            _icemaint(store.config, "workload", "fleet", "--tables", str(args.tables))
            made.write_text(json.dumps({"tables": args.tables, "generate_s": time.monotonic() - started}))
    generated = json.loads(made.read_text())
    if generated["tables"] != args.tables:
        raise SystemExit(f"{home} holds a fleet of {generated['tables']} tables, not {args.tables}")
    result["generate_s"] = generated["generate_s"]
    try:
        if not args.generate_only:
            with _store(args, home, measuring=True) as store:
                result.update(measure(store, home))
    finally:
        if temporary:
            shutil.rmtree(home, ignore_errors=True)
    print(json.dumps(result, indent=2))
    write_json(args.json_out, result)


def _store(args: argparse.Namespace, home: Path, *, measuring: bool):  # type: ignore[no-untyped-def]
    return rest_store(home, args.latency_ms if measuring else 0.0) if args.catalog == "rest" else sql_store(home)


class Store:
    """Where the fleet lives: the config of the CLI processes, and the requests they made
    so far (none counted on local files)."""

    def __init__(self, config: Path, proxies: dict[str, Proxy] | None = None) -> None:
        self.config, self.proxies = config, proxies or {}

    def requests(self) -> dict[str, dict[str, int]]:
        return {name: dict(proxy.totals()) for name, proxy in self.proxies.items()}


@contextmanager
def sql_store(home: Path) -> Iterator[Store]:
    config = home / "icemaint.yaml"
    config.write_text(f"home: {home}\npolicies: {home / 'policies'}\nstate:\n  url: sqlite:///{home / 'cron-state.db'}\n")
    yield Store(config)


@contextmanager
def rest_store(home: Path, latency_ms: float) -> Iterator[Store]:
    """SeaweedFS on the home's data, its S3 and its REST catalog each behind a counting
    proxy that adds `latency_ms` to every request; the S3 proxy on the port SeaweedFS
    advertises to its clients."""
    import yaml

    sys.path.insert(0, str(REPO))
    from maintenance.workload import seaweedfs

    s3_port = seaweedfs.free_ports()["s3.port"]
    with seaweedfs.running(home / "seaweedfs", extra_args=[f"-s3.externalUrl=http://127.0.0.1:{s3_port}"]) as server:
        s3 = Proxy(server.endpoint.removeprefix("http://"), latency_ms, home / "requests-s3.json", s3_port)
        rest = Proxy(server.rest_uri.removeprefix("http://"), latency_ms, home / "requests-catalog.json")
        try:
            catalog = {"type": "rest", "uri": f"http://127.0.0.1:{rest.port}", "warehouse": server.warehouse, "credential": server.credential,
                       "properties": {**server.s3_properties(), "s3.endpoint": f"http://127.0.0.1:{s3.port}"}}
            config = home / "icemaint.yaml"
            config.write_text(yaml.safe_dump({"home": str(home), "policies": str(home / "policies"), "catalogs": {"rest": catalog},
                                              "state": {"url": f"sqlite:///{home / 'cron-state.db'}"}}, sort_keys=False))
            yield Store(config, {"s3": s3, "catalog": rest})
        finally:
            s3.stop()
            rest.stop()


def measure(store: Store, home: Path) -> dict:
    """Cold, 1% changed, warm, fresh check: each a CLI process on a new state database.
    The package's bytecode is compiled first, as an installed icemaint's is: where Python
    writes none (PYTHONDONTWRITEBYTECODE, a read-only checkout), every process would
    compile its ~200 modules again, a tenth of a warm tick, and not what cron runs."""
    compile_package()
    (home / "cron-state.db").unlink(missing_ok=True)
    cold = _timed(store, "run", "--dry-run", "--json")
    changed = _change(store.config)
    warm = _timed(store, "plan", "--all", "--json")
    check = _timed(store, "plan", "--all", "--json", "--fresh")
    warm_out, check_out = json.loads(warm["out"]), json.loads(check["out"])
    return {
        "cold_s": cold["s"], "cold_lines": len([line for line in cold["out"].splitlines() if line.strip()]),
        "tables_changed": changed, "warm_s": warm["s"], "warm_reused": warm_out["tables_reused"], "check_s": check["s"],
        "warm_over_cold": warm["s"] / cold["s"], "warm_over_check": warm["s"] / check["s"],
        "cpu_s": {"cold": cold["cpu"], "warm": warm["cpu"], "check": check["cpu"]}, "warm_over_cold_cpu": warm["cpu"] / cold["cpu"],
        "decisions": len(check_out["decisions"]), "same_decisions": _comparable(warm_out["decisions"]) == _comparable(check_out["decisions"]),
        "due": sum(1 for d in check_out["decisions"] if d["due"]), "problems": len(check_out["problems"]) + len(warm_out["problems"]),
        "peak_rss_mib": {"cold": cold["rss"], "warm": warm["rss"], "check": check["rss"]},
        "requests": {"cold": cold["requests"], "warm": warm["requests"], "check": check["requests"]},
    }


def _comparable(decisions: list[dict]) -> list[dict]:
    """Decisions with the snapshot ages in their reasons masked (`oldest_snapshot_age 36s`)."""
    return [{**d, "reason": re.sub(r"oldest_snapshot_age [\d.]+\w*", "oldest_snapshot_age _", d["reason"])} for d in decisions]


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("ICEMAINT_HOME", "ICEMAINT_CONFIG")}


def _icemaint(config: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "maintenance", "--config", str(config), *args], cwd=REPO, env=_env(),
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"icemaint {' '.join(args)} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return done.stdout


def _timed(store: Store, *args: str) -> dict:
    """Seconds, CPU seconds, peak RSS (MiB), stdout and requests of one CLI process, run by a
    small wrapper process of its own whose only child it is: the wrapper's RUSAGE_CHILDREN
    are that process's (its peak is the largest of its tree; a plan or a dry run starts no
    JVM). CPU seconds compare better than wall seconds on a busy machine."""
    probe = ("import json,resource,subprocess,sys,time;t=time.monotonic();"
             "p=subprocess.run(sys.argv[1:],capture_output=True,text=True);"
             "u=resource.getrusage(resource.RUSAGE_CHILDREN);"
             "print(json.dumps({'s':time.monotonic()-t,'rss':u.ru_maxrss/1024,'cpu':u.ru_utime+u.ru_stime,"
             "'rc':p.returncode,'out':p.stdout,'err':p.stderr[-500:]}))")
    before = store.requests()
    done = subprocess.run([sys.executable, "-c", probe, sys.executable, "-m", "maintenance", "--config", str(store.config), *args],
                          cwd=REPO, env=_env(), capture_output=True, text=True, check=True)
    after = store.requests()
    measured = json.loads(done.stdout)
    if measured["rc"] != 0:
        raise SystemExit(f"icemaint {' '.join(args)} exited {measured['rc']}: {measured['err']}")
    measured["requests"] = {name: {kind: count - before[name].get(kind, 0) for kind, count in counts.items() if count != before[name].get(kind, 0)}
                            for name, counts in after.items()}
    return measured


def _change(config: Path) -> int:
    """One more commit to one table in 100, as writers do between two cron ticks."""
    sys.path.insert(0, str(REPO))
    from maintenance.catalogs import get_catalog
    from maintenance.config import load_config
    from maintenance.workload.fleet import FleetOptions, change_tables

    loaded = load_config(str(config))
    tables = json.loads((config.parent / GENERATED).read_text())["tables"]
    return len(change_tables(get_catalog(loaded, loaded.default_catalog), FleetOptions(tables=tables), every=100))


if __name__ == "__main__":
    main()
