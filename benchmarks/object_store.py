"""Every job on an object store with latency, against the same table on local disk: time and
requests per job, and the requests of a warm daemon cycle over unchanged tables.

    .venv/bin/python benchmarks/object_store.py [--rows 200000] [--commits 40] [--partitions 8] [--latencies 0,5,20]
        [--fleet 100] [--json-out F]

The store is SeaweedFS (`weed mini`, `maintenance/workload/seaweedfs.py`): its S3 API and
its Iceberg REST catalog, each behind `benchmarks/latency_proxy.py`, which delays every
request by the latency and counts the requests by kind (S3: GET, HEAD, LIST, PUT, POST,
DELETE; the catalog's by method). The local contender is the embedded default's SQL
catalog on local files. Each contender gets its own table, generated identically (`workload
cdc`, same seed; through a proxy without delay, not counted), and the same sequence of jobs runs
on each, every job a CLI process as cron runs it (`icemaint <job> TABLE --json`, verified):
REWRITE, CONVERT, MERGE, COMPACT, MANIFESTS, STATS, EXPIRE, ORPHANS. Times are wall
seconds of the process; requests are those the proxy saw while it ran.

The warm cycle: `workload fleet --fleet` tables in the REST catalog, a daemon with a policy
that never fires (so it evaluates and never starts Spark), and the requests between the end
of its first cycle and the end of its second, with nothing changed in between.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from common import Proxy, wait_for_cycles, write_json

REPO = Path(__file__).resolve().parent.parent
JOBS: list[tuple[str, list[str]]] = [
    ("rewrite", []),
    ("convert", []),
    ("merge", []),
    ("compact", ["--min-input-files", "2"]),
    ("manifests", []),
    ("stats", ["--no-partition-stats"]),  # SeaweedFS's table buckets refuse partition-stats files (docs/troubleshooting.md); the same work on each contender
    ("expire", ["--older-than", "0s", "--retain-last", "1"]),
    ("orphans", ["--older-than", "1h"]),
]
FLEET_INTERVAL_S = 20


def cli(config: Path, *args: str, timeout: float = 3600) -> tuple[float, dict]:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "maintenance", "--config", str(config), *args, "--json"], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "ICEMAINT_CONFIG": ""})
    took = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"icemaint {' '.join(args)} exited {proc.returncode}: {proc.stderr[-2000:]}")
    return took, json.loads(proc.stdout)


def write_config(path: Path, home: Path, catalogs: dict, policies: Path | None = None, daemon: dict | None = None) -> Path:
    import yaml

    raw = {"home": str(home), "catalogs": catalogs, "state": {"url": f"sqlite:///{home / 'state.db'}"}}
    if policies is not None:
        raw["policies"] = str(policies)
    if daemon is not None:
        raw["daemon"] = daemon
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def rest_catalog(store, s3_endpoint: str, rest_uri: str) -> dict:  # type: ignore[no-untyped-def]
    return {"type": "rest", "uri": rest_uri, "warehouse": store.warehouse, "credential": store.credential,
            "properties": {**store.s3_properties(), "s3.endpoint": s3_endpoint}}


def run_jobs(config: Path, table: str, s3: Proxy | None, rest: Proxy | None) -> list[dict]:
    measured = []
    for job, args in JOBS:
        before = (s3.totals() if s3 else Counter(), rest.totals() if rest else Counter())
        seconds, result = cli(config, job, table, *args)
        after = (s3.totals() if s3 else Counter(), rest.totals() if rest else Counter())
        if result.get("status") not in ("committed", "noop"):
            raise SystemExit(f"{job} on {table}: {result.get('status')}: {result.get('error')}")
        s3_requests = dict(after[0] - before[0])
        measured.append({"job": job, "seconds": round(seconds, 2), "status": result["status"], "verified": result.get("content_verified"),
                         "s3": s3_requests, "s3_total": sum(s3_requests.values()), "catalog": sum((after[1] - before[1]).values())})
        print(f"  {job:9s} {seconds:6.1f} s  {result['status']:9s} s3 {sum(s3_requests.values()):5d} {s3_requests}", flush=True)
    return measured


def warm_cycle(store, folder: Path, tables: int, s3_port: int) -> dict:  # type: ignore[no-untyped-def]
    """A daemon's second cycle over `tables` unchanged tables: the requests it made."""
    home = folder / "fleet"
    home.mkdir()
    s3 = Proxy(store.endpoint.removeprefix("http://"), 0, folder / "fleet-s3.json", s3_port)
    rest = Proxy(store.rest_uri.removeprefix("http://"), 0, folder / "fleet-rest.json")
    direct = write_config(home / "direct.yaml", home, {"rest": rest_catalog(store, store.endpoint, store.rest_uri)})
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "maintenance", "--config", str(direct), "workload", "fleet", "--namespace", "rest.fleet", "--tables", str(tables)],
                   cwd=REPO, check=True, capture_output=True, env={**os.environ, "ICEMAINT_CONFIG": ""}, timeout=3600)
    generate_s = time.perf_counter() - started
    generated = (s3.totals(), rest.totals())
    policies = home / "policies"
    policies.mkdir()
    (policies / "never.yaml").write_text("name: never\njobs:\n  compact:\n    when: {data_files: 1000000}\n")
    config = write_config(home / "daemon.yaml", home, {"rest": rest_catalog(store, f"http://127.0.0.1:{s3.port}", f"http://127.0.0.1:{rest.port}")},
                          policies, {"interval": f"{FLEET_INTERVAL_S}s", "metrics_port": 0})
    log = home / "daemon.log"
    daemon = subprocess.Popen([sys.executable, "-m", "maintenance", "--log-format", "json", "daemon"], cwd=REPO, stdout=subprocess.DEVNULL,
                              stderr=log.open("wb"), env={**os.environ, "ICEMAINT_CONFIG": str(config)}, start_new_session=True)
    try:
        wait_for_cycles(log, 1, "warm cycle")
        first = (s3.totals(), rest.totals())
        cycles = wait_for_cycles(log, 2, "warm cycle")
        second = (s3.totals(), rest.totals())
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=120)
        s3.stop()
        rest.stop()
    return {"tables": tables, "generate_s": round(generate_s, 1), "cold": {"s3": dict(first[0] - generated[0]), "catalog": dict(first[1] - generated[1])},
            "warm": {"s3": dict(second[0] - first[0]), "catalog": dict(second[1] - first[1])},
            "cycle_seconds": [c.get("seconds") for c in cycles[:2]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--commits", type=int, default=40)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--latencies", default="0,5,20", help="milliseconds a request, comma-separated")
    parser.add_argument("--fleet", type=int, default=100, help="tables of the warm daemon cycle (0: none)")
    parser.add_argument("--json-out")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from maintenance.workload import seaweedfs

    folder = Path(tempfile.mkdtemp(prefix="icemaint-bench-object-store-"))
    home = folder / "home"
    home.mkdir()
    workload = ["workload", "cdc", "--rows", str(args.rows), "--commits", str(args.commits), "--partitions", str(args.partitions), "--seed", "7"]
    result: dict = {"rows": args.rows, "commits": args.commits, "partitions": args.partitions, "contenders": []}
    # SeaweedFS's REST catalog advertises its S3 endpoint in every table it loads, and both
    # pyiceberg and Iceberg's Java client let that win over the client's own `s3.endpoint`:
    # advertised as the proxy's address (`-s3.externalUrl`), every S3 request goes through
    # the proxy. One port, so each latency's proxy listens where the last one did; the
    # tables are generated through a proxy without delay, not counted.
    s3_port = seaweedfs.free_ports()["s3.port"]
    with seaweedfs.running(folder / "seaweedfs", extra_args=[f"-s3.externalUrl=http://127.0.0.1:{s3_port}"]) as store:
        local = write_config(home / "local.yaml", home, {"local": {"type": "sql", "uri": f"sqlite:///{home / 'catalog.db'}",
                                                                   "warehouse": str(home / "warehouse")}})
        gen_s, made = cli(local, *workload[:2], "local.bench.cdc", *workload[2:])
        print(f"local disk (generated in {gen_s:.0f} s: {made['data_files']} data files)", flush=True)
        result["contenders"].append({"store": "local disk", "latency_ms": None, "jobs": run_jobs(local, "local.bench.cdc", None, None)})
        direct = write_config(home / "s3-direct.yaml", home, {"rest": rest_catalog(store, store.endpoint, store.rest_uri)})
        for latency in (float(x) for x in args.latencies.split(",")):
            table = f"rest.bench.cdc_{int(latency)}ms"
            generating = Proxy(store.endpoint.removeprefix("http://"), 0, folder / f"s3-generate-{latency:g}.json", s3_port)
            try:
                gen_s, made = cli(direct, *workload[:2], table, *workload[2:])
            finally:
                generating.stop()
            s3 = Proxy(store.endpoint.removeprefix("http://"), latency, folder / f"s3-{latency:g}.json", s3_port)
            rest = Proxy(store.rest_uri.removeprefix("http://"), latency, folder / f"rest-{latency:g}.json")
            try:
                proxied = write_config(home / f"s3-{latency:g}.yaml", home, {"rest": rest_catalog(store, f"http://127.0.0.1:{s3.port}", f"http://127.0.0.1:{rest.port}")})
                print(f"SeaweedFS, {latency:g} ms a request (generated in {gen_s:.0f} s)", flush=True)
                result["contenders"].append({"store": "SeaweedFS S3 + REST", "latency_ms": latency, "jobs": run_jobs(proxied, table, s3, rest)})
            finally:
                s3.stop()
                rest.stop()
        if args.fleet:
            result["warm_cycle"] = warm_cycle(store, folder, args.fleet, s3_port)
            print(f"warm cycle over {args.fleet} tables: {result['warm_cycle']['warm']}", flush=True)
    print(json.dumps(result, indent=2))
    write_json(args.json_out, result)


if __name__ == "__main__":
    main()
