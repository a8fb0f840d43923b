"""A fleet of small tables: a daemon's evaluation cycle, cold and then warm (issue: the fleet).

    .venv/bin/python benchmarks/fleet.py [--tables 10000] [--home DIR] [--json-out F]

Generates the fleet with `icemaint workload fleet`'s generator (pyiceberg appends, no
Spark: 3 commits of 100 rows in 2 partitions per table) into `--home` (kept, so a second
call reuses it), then measures in a fresh process that never starts a JVM, as the daemon
evaluates (`schedule.cycle.evaluate` with the daemon's `KeptEvaluations`; health of every
table, policies, run history, ranking; SQL catalog on SQLite, the local disk):
- cold: the first cycle, nothing kept (a fresh state database: nothing shared either);
- warm: the next cycle, after one table in 100 got one more commit (`workload.fleet.change_tables`);
- check: a cold evaluation at the warm cycle's very time, nothing kept; its decisions must
  be the warm cycle's (table, job, due), every one;
- serial: a cold cycle again, reading one table at a time (`metadata_reads: 1`), against
  the first, which reads 8 tables of the catalog at once (`schedule/overlap.py`);
and the process's peak RSS (it holds the kept evaluations of every table).

With `--s3-latency-ms`, the fleet lives on S3 instead: a SeaweedFS of its own
(`maintenance/workload/seaweedfs.py`), generated through it directly, then measured through
a proxy that adds that delay to every request (`benchmarks/latency_proxy.py`), as an object
store far away does; the catalog stays a SQL catalog on SQLite (its one query lists every
metadata location). The store is started afresh, so the fleet is generated each time.

Then daemons sharing the fleet (`maintenance/schedule/membership.py`) on PostgreSQL state (a
database of its own, `--postgres`, made afresh): one evaluating process alone, then two at
once, each a member taking its share; a cycle of two is the slower one's time; every table
must be evaluated by exactly one of the two.
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
from pathlib import Path

from common import write_json


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=10_000)
    parser.add_argument("--home", help="where the fleet is (made when missing); default a new temporary folder")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)  # the measuring process
    parser.add_argument("--postgres", default="postgresql+psycopg://postgres@127.0.0.1:5432/icemaint_bench_fleet",
                        help="the state database the sharing daemons use (dropped and made again)")
    parser.add_argument("--share-of", type=int, help=argparse.SUPPRESS)  # a sharing process, one of this many
    parser.add_argument("--s3-latency-ms", type=float, help="the fleet on S3 (SeaweedFS) behind a proxy adding this delay per request")
    parser.add_argument("--generate-workers", type=int, default=4, help="tables generated at once (S3 only)")
    parser.add_argument("--json-out")
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure()))
        return
    if args.share_of:
        print(json.dumps(measure_share(args.postgres, args.share_of)))
        return
    if args.s3_latency_ms is not None:
        result = on_s3(args)
        print(f"{result['tables']} tables on S3, {args.s3_latency_ms:g} ms a request: cold cycle {result['first_s']:.1f} s "
              f"(one table at a time {result['serial_s']:.1f} s), warm cycle, {result['tables_changed']} changed, {result['warm_s']:.2f} s "
              f"({result['warm_over_cold']:.3f} x cold); same decisions as a cold check: {result['check_same_decisions']}")
        write_json(args.json_out, result)
        return
    os.environ["ICEMAINT_HOME"] = args.home or tempfile.mkdtemp(prefix="icemaint-bench-fleet-")
    from maintenance.catalogs import get_catalog
    from maintenance.config import load_config
    from maintenance.workload.fleet import FleetOptions, make_fleet

    config = load_config(None)
    made = make_fleet(get_catalog(config, config.default_catalog, create=True), config.default_catalog, FleetOptions(tables=args.tables))
    out = subprocess.run([sys.executable, __file__, "--measure"], capture_output=True, text=True, env=os.environ, check=True)
    result = {**json.loads(out.stdout.strip().splitlines()[-1]), "generate_s": made.seconds, "tables_created": made.tables_created}
    result.update(shared(args.postgres))
    print(f"{result['tables']} tables: cold cycle {result['first_s']:.1f} s ({result['first_ms_per_table']:.1f} ms a table); "
          f"warm cycle, {result['tables_changed']} changed, {result['warm_s']:.2f} s ({result['warm_over_cold']:.3f} x cold, "
          f"{result['warm_reused']} tables reused); a cold check at the same time {result['check_s']:.1f} s, same decisions: "
          f"{result['check_same_decisions']}; peak RSS {result['peak_rss_mib']:.0f} MiB; JVM started: {result['jvm_started']}")
    write_json(args.json_out, result)


def measure() -> dict:
    import dataclasses
    from datetime import datetime, timezone

    from maintenance.catalogs import get_catalog, list_tables
    from maintenance.config import load_config
    from maintenance.policy.loader import load_policies
    from maintenance.schedule.cycle import evaluate
    from maintenance.schedule.kept import KeptEvaluations
    from maintenance.state.store import open_state
    from maintenance.workload.fleet import FleetOptions, change_tables

    # a state database of its own: "cold" means nothing kept, here or shared by an earlier run (`schedule/stored.py`)
    config = dataclasses.replace(load_config(None), state_url=f"sqlite:///{tempfile.mkdtemp(prefix='icemaint-fleet-state-')}/state.db")
    refs = list_tables(config)
    policies = load_policies(config.policies_dir)
    state = open_state(config)
    kept = KeptEvaluations()
    started = time.perf_counter()
    cold = evaluate(config, state, None, policies, kept=kept)
    cold_s = time.perf_counter() - started
    started = time.perf_counter()
    changed = change_tables(get_catalog(config, config.default_catalog), FleetOptions(tables=len(refs)), every=100)
    change_s = time.perf_counter() - started
    now = datetime.now(timezone.utc)
    started = time.perf_counter()
    warm = evaluate(config, state, None, policies, now=now, kept=kept)
    warm_s = time.perf_counter() - started
    reused = kept.reused
    started = time.perf_counter()
    fresh = evaluate(config, state, None, policies, now=now)
    fresh_s = time.perf_counter() - started
    one_at_a_time = dataclasses.replace(config, catalogs={name: dataclasses.replace(c, metadata_reads=1) for name, c in config.catalogs.items()})
    started = time.perf_counter()
    serial = evaluate(one_at_a_time, state, None, policies, now=now)
    serial_s = time.perf_counter() - started
    decided = lambda evaluation: sorted((d.table, d.job, d.due) for d in evaluation.decisions)  # noqa: E731
    return {
        "tables": len(refs),
        "first_s": cold_s,
        "first_ms_per_table": 1000 * cold_s / max(1, len(refs)),
        "tables_changed": len(changed),
        "change_s": change_s,
        "warm_s": warm_s,
        "warm_over_cold": warm_s / cold_s,
        "warm_reused": reused,
        "check_s": fresh_s,
        "check_same_decisions": decided(warm) == decided(fresh),
        "serial_s": serial_s,
        "serial_same_decisions": decided(serial) == decided(fresh),
        "metadata_reads": config.catalog(config.default_catalog).metadata_reads,
        "decisions": len(warm.decisions),
        "due": len(warm.due),
        "due_cold": len(cold.due),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "jvm_started": "pyspark" in sys.modules,
    }


def on_s3(args: argparse.Namespace) -> dict:
    """The fleet on SeaweedFS's S3, generated directly, measured behind the latency proxy."""
    from concurrent.futures import ThreadPoolExecutor

    import yaml

    from maintenance.workload import seaweedfs

    folder = Path(args.home or tempfile.mkdtemp(prefix="icemaint-bench-fleet-s3-"))
    store = seaweedfs.start(folder / "seaweedfs", buckets=("fleet",))
    endpoint = store.endpoint
    properties = {key: value for key, value in store.s3_properties().items() if key != "s3.endpoint"}
    proxy = None
    try:
        proxy = subprocess.Popen([sys.executable, str(Path(__file__).with_name("latency_proxy.py")), "--target", endpoint.removeprefix("http://"),
                                  "--delay-ms", str(args.s3_latency_ms)], stdout=subprocess.PIPE, text=True)
        assert proxy.stdout is not None
        proxy_endpoint = f"http://127.0.0.1:{int(proxy.stdout.readline().split()[1])}"

        def config_file(name: str, endpoint: str) -> Path:
            path = folder / f"{name}.yaml"
            catalog = {"type": "sql", "uri": f"sqlite:///{folder / 'catalog.db'}", "warehouse": "s3://fleet/warehouse",
                       "pyiceberg": {**properties, "s3.endpoint": endpoint}}
            path.write_text(yaml.safe_dump({"home": str(folder), "catalogs": {"local": catalog}}))
            return path

        direct, far = config_file("direct", endpoint), config_file("far", proxy_endpoint)
        os.environ["ICEMAINT_CONFIG"] = str(direct)
        from maintenance.catalogs import get_catalog
        from maintenance.config import load_config
        from maintenance.workload.fleet import FleetOptions, make_fleet

        config = load_config(None)
        catalog = get_catalog(config, config.default_catalog)
        started = time.monotonic()
        make_fleet(catalog, "local", FleetOptions(tables=args.tables), only=lambda i: False)  # the namespace, before the workers race to make it
        workers = max(1, args.generate_workers)
        with ThreadPoolExecutor(workers) as pool:  # each worker makes every `workers`-th table
            made = list(pool.map(lambda k: make_fleet(catalog, "local", FleetOptions(tables=args.tables), only=lambda i: i % workers == k), range(workers)))
        generate_s = time.monotonic() - started
        os.environ["ICEMAINT_CONFIG"] = str(far)
        out = subprocess.run([sys.executable, __file__, "--measure"], capture_output=True, text=True, env=os.environ, check=True)
        return {**json.loads(out.stdout.strip().splitlines()[-1]), "generate_s": generate_s, "tables_created": sum(m.tables_created for m in made),
                "latency_ms": args.s3_latency_ms, "generate_workers": workers, "store": "SeaweedFS S3 behind a latency proxy"}
    finally:
        if proxy is not None:
            proxy.kill()
        store.stop()


def shared(url: str) -> dict:
    """One sharing process alone, then two at once, on a fresh PostgreSQL state database."""
    from sqlalchemy import create_engine, make_url, text

    server = create_engine(make_url(url).set(database="postgres"), isolation_level="AUTOCOMMIT")
    with server.connect() as conn:
        conn.execute(text(f"DROP DATABASE IF EXISTS {make_url(url).database}"))
        conn.execute(text(f"CREATE DATABASE {make_url(url).database}"))
    server.dispose()
    runs = {}
    for members in (1, 2):
        started = [subprocess.Popen([sys.executable, __file__, "--share-of", str(members), "--postgres", url], stdout=subprocess.PIPE, text=True,
                                    env=os.environ) for _ in range(members)]
        runs[members] = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in started]
    alone, pair = runs[1][0], runs[2]
    both = [t for r in pair for t in r["tables"]]
    return {"shared_one_s": alone["seconds"], "shared_two_s": max(r["seconds"] for r in pair), "shared_two_each": [r["seconds"] for r in pair],
            "shared_two_tables": [len(r["tables"]) for r in pair], "shared_every_table_once": sorted(both) == sorted(alone["tables"]),
            "shared_two_over_one": max(r["seconds"] for r in pair) / alone["seconds"]}


def measure_share(url: str, members: int) -> dict:
    """A daemon's cold cycle over its share, once `members` daemons are members."""
    import dataclasses

    from maintenance.config import load_config
    from maintenance.policy.loader import load_policies
    from maintenance.schedule.cycle import evaluate
    from maintenance.schedule.membership import Membership
    from maintenance.state.leases import new_holder_id
    from maintenance.state.store import open_state

    config = dataclasses.replace(load_config(None), state_url=url)
    state = open_state(config)
    policies = load_policies(config.policies_dir)
    membership = Membership(new_holder_id("bench"), ttl_s=600)
    catalogs = [config.default_catalog]
    deadline = time.monotonic() + 60
    while membership.shares(state, catalogs)[config.default_catalog].members < members and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)  # the other has seen both members too
    started = time.perf_counter()
    evaluation = evaluate(config, state, None, policies, membership=membership)
    seconds = time.perf_counter() - started
    share = evaluation.shares[config.default_catalog]
    tables = sorted({d.table for d in evaluation.decisions} | set(evaluation.problems))
    time.sleep(2.0)  # stay a member until the other is surely done choosing its share
    membership.leave(state)
    return {"seconds": seconds, "members": share.members, "tables": tables}


if __name__ == "__main__":
    main()
