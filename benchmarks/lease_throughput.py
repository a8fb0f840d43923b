"""Lease throughput on PostgreSQL: acquire + renew + release cycles by concurrent clients.

    .venv/bin/python benchmarks/lease_throughput.py [--clients 8] [--seconds 10] [--url URL]

Runs in a fresh database it creates (and drops) on the server. Two scenarios: every
client on its own table (the daemon's common case), and all clients contending for one.
Prints a table; numbers are measured by this run.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import time
import uuid

from common import write_json
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

DEFAULT_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def client(url: str, table: str, seconds: float, start: float, results: multiprocessing.Queue) -> None:
    from maintenance.state.database import make_engine
    from maintenance.state.leases import LeaseStore

    store = LeaseStore(make_engine(url))
    holder = f"bench-{uuid.uuid4().hex[:6]}"
    while time.time() < start:
        time.sleep(0.001)
    deadline = start + seconds
    cycles, refused, latencies = 0, 0, []
    while time.time() < deadline:
        began = time.perf_counter()
        lease = store.acquire(table, holder, ttl_s=30)
        if lease is None:
            refused += 1
            continue
        lease = store.renew(lease, ttl_s=30)
        assert lease is not None and store.release(lease)
        latencies.append(time.perf_counter() - began)
        cycles += 1
    results.put((cycles, refused, latencies))


def scenario(url: str, clients: int, seconds: float, shared: bool) -> dict[str, float]:
    ctx = multiprocessing.get_context("spawn")
    results = ctx.Queue()
    start = time.time() + 3.0  # all clients start together, after interpreter start-up
    tables = ["bench.shared"] * clients if shared else [f"bench.t{i}" for i in range(clients)]
    procs = [ctx.Process(target=client, args=(url, tables[i], seconds, start, results)) for i in range(clients)]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=seconds + 120) for _ in procs]
    for p in procs:
        p.join()
    cycles = sum(o[0] for o in outcomes)
    latencies = sorted(lat for o in outcomes for lat in o[2])
    return {
        "cycles_per_s": cycles / seconds,
        "ops_per_s": 3 * cycles / seconds,
        "refused_per_s": sum(o[1] for o in outcomes) / seconds,
        "p50_ms": 1000 * statistics.median(latencies) if latencies else float("nan"),
        "p99_ms": 1000 * latencies[int(0.99 * (len(latencies) - 1))] if latencies else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=DEFAULT_URL, help="an admin URL of the PostgreSQL server")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--json-out")
    args = parser.parse_args()

    from maintenance.state.database import ensure_schema, make_engine

    name = f"icemaint_bench_{uuid.uuid4().hex[:8]}"
    admin = create_engine(args.url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f"CREATE DATABASE {name}"))
    url = make_url(args.url).set(database=name).render_as_string(hide_password=False)
    try:
        ensure_schema(make_engine(url))
        rows = [
            ("own table each", scenario(url, args.clients, args.seconds, shared=False)),
            ("one shared table", scenario(url, args.clients, args.seconds, shared=True)),
        ]
    finally:
        with admin.connect() as conn:
            conn.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
    print(f"lease throughput on PostgreSQL, {args.clients} client processes, {args.seconds:.0f} s each scenario")
    print(f"{'scenario':<18} {'cycles/s':>9} {'ops/s':>8} {'refused/s':>10} {'p50 ms':>8} {'p99 ms':>8}")
    for label, r in rows:
        print(f"{label:<18} {r['cycles_per_s']:>9.0f} {r['ops_per_s']:>8.0f} {r['refused_per_s']:>10.0f} {r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f}")
    print("a cycle is acquire + renew + release (three conditional statements and two reads)")
    write_json(args.json_out, {"clients": args.clients, "seconds": args.seconds, "scenarios": [{"scenario": label, **r} for label, r in rows]})


if __name__ == "__main__":
    main()
