"""A budget spent by readers' value against one spent in today's order, on twin fleets whose
readers report their scans (issue 59).

    .venv/bin/python benchmarks/budget_fleet.py [--minutes 30] [--budget-part 0.2] [--json-out F]

Three identical fleets, each its own SQL catalog (SQLite) on local disk: `value`, `triggers`
and `none`. Each has 100 tables: 20 CDC tables (`fleet.c00`..`c19`: the workload
generator's, 4 identity partitions, equality and position deletes in every commit) and 80
appended tables of small files (`fleet.s00000`..: `workload/fleet.py`, 12 appends of 200
rows to 2 partitions). For `--minutes`:

- a writer (a thread of this process, its own Spark session) commits one CDC batch (300
  events: 30% updates, 5% deletes) to each CDC table every `WRITE_EVERY_S`, the same batch
  to the three twins, so they hold the same rows at all times; with `--hot-writes-every N`
  a hot CDC table gets its batch only every Nth round (cold tables written harder than the
  ones readers read, as raw ingestion tables are): the planner's order, which knows only
  the tables, then finds the cold ones the costliest;
- three Spark reader processes (`maintenance/workload/readers.py`, the scan reporter on its
  class path), one per fleet, run one schedule: a scan every `SCAN_EVERY_S`, 90% of them of
  10 hot tables (`HOT`: drawn at random from the 100), the rest of the other 90; each scans
  the whole table (count and hash of every row) and reports to its fleet's daemon;
- two `icemaint daemon` processes maintain `value` and `triggers` with one policy (MERGE,
  COMPACT, EXPIRE) and one budget: `daemon.budget_order` `value` (the best reader-seconds
  per second of job, from the reports) and `triggers` (the planner's order, as a budget
  would be spent without reports). `none` is maintained by nobody: its reports go to a door
  of this process (`readers/endpoint.py` on a state database of its own), the baseline.

The budget is `--budget-part` of the work due when the daemons start, in compute-seconds
per hour (what a budget counts, `run/compute.py`): every due job's estimate (`icemaint plan
--json` on `value`) times what one run of that job cost in compute per estimated second, on
a scratch table made as the fleet's are (`compute_factors`). The run lasts less than the
budget's hour, so it can spend that much in all; what became due while it ran is stated too.

Measured, from the reports each fleet's readers sent (the state databases' sums): what the
scans cost readers by Spark's own measure of a read (bytes read, and `openCostInBytes` per
file opened, data and delete files alike; in seconds at the reader model's rate), the
saving against `none`, and per compute-second of job runs (and their wall seconds). Also the
readers' own clocks (the sum of their scans' milliseconds), which the machine's load
shakes. The predictions' accuracy, from the runs of both daemons: predicted cost against
the run's compute-seconds, and predicted relief of a scan against the scans reported in the ten
the scans of the snapshot the run committed (`state/run_scans.py`, `schedule/value.measured_relief`).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import commit, write_json  # noqa: E402
from benchmarks.memory import descendants  # noqa: E402

TOKEN = "benchmark-budget-fleet-token"
TWINS = ("value", "triggers", "none")
MAINTAINED = ("value", "triggers")
CDC_TABLES, STATIC_TABLES = 20, 80
HOT_TABLES = 10
HOT_SHARE = 0.9
SCAN_EVERY_S = 3.0
WRITE_EVERY_S = 60.0
BATCH_EVENTS = 300
INITIAL_COMMITS = 6
WITHIN = 0.25  # the bound on a prediction's error
POLICY = """name: bench
select: {namespaces: ["fleet"]}
jobs:
  merge:
    when: {equality_delete_files: 4}
    every: 2m
  compact:
    when: {small_files: 8}
    every: 2m
  expire:
    when: {snapshots: 40}
    every: 5m
    retention: {max_snapshot_age: 10m, min_snapshots_to_keep: 10}
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def catalog_entry(root: Path, twin: str) -> dict[str, Any]:
    return {"type": "sql", "uri": f"sqlite:///{root / twin / 'catalog.db'}", "warehouse": str(root / twin / "warehouse")}


def twin_config(root: Path, twin: str, policies: Path, daemon: dict[str, Any]) -> dict[str, Any]:
    return {"home": str(root / twin), "default_catalog": twin, "catalogs": {twin: catalog_entry(root, twin)},
            "state": {"url": f"sqlite:///{root / twin / 'state.db'}"}, "policies": str(policies), "leases": {"ttl_seconds": 120}, "daemon": daemon}


def table_names() -> list[str]:
    return [f"c{i:02d}" for i in range(CDC_TABLES)] + [f"s{i:05d}" for i in range(STATIC_TABLES)]


# The hot tables, drawn at random (seeded) from the whole fleet: not the first names, which
# the planner's order would reach first among tables alike (a first version read c00-c04
# and s00000-s00004 hot, and the planner's ties fell on them).
HOT = sorted(random.Random(5959).sample(table_names(), HOT_TABLES))


def schedule(minutes: float, seed: int = 59) -> list[dict[str, Any]]:
    """One scan every `SCAN_EVERY_S`: `HOT_SHARE` of them of a hot table, the rest of the others."""
    rng = random.Random(seed)
    cold = [name for name in table_names() if name not in HOT]
    return [{"table": f"fleet.{rng.choice(HOT) if rng.random() < HOT_SHARE else rng.choice(cold)}", "at_s": round(k * SCAN_EVERY_S, 1)}
            for k in range(int(minutes * 60 / SCAN_EVERY_S))]


class Writer:
    """The CDC tables' writer: the same batches to the three twins, in turn."""

    def __init__(self, spark: Any, config: Any, hot_writes_every: int = 1) -> None:
        from maintenance.catalogs import load_table, parse_table_ref
        from maintenance.spark.jvm import load_java_table
        from maintenance.workload.cdc import CdcOptions, prepare_cdc_table
        from maintenance.workload.shape import TableShape
        from maintenance.workload.writer import BatchWriter

        self.models: list[Any] = []
        self.writers: list[list[Any]] = []
        for i in range(CDC_TABLES):
            options = CdcOptions(shape=TableShape("identity", 4, "single"), seed=100 + i)
            model = None
            writers = []
            for twin in TWINS:
                ref = parse_table_ref(f"{twin}.fleet.c{i:02d}", config)
                _, shape, twin_model, _ = prepare_cdc_table(spark, config, ref, options)
                model = model or twin_model  # the same seed and sequence number: the same model
                table = load_table(config, ref)
                writers.append(BatchWriter(spark, load_java_table(spark, ref), table.io, table.schema(), shape))
            self.models.append(model)
            self.writers.append(writers)
        self.hot = [f"c{i:02d}" in HOT for i in range(CDC_TABLES)]
        self.hot_writes_every = hot_writes_every
        self.rounds = 0
        self.commits = 0
        self.failures: list[str] = []

    def write_round(self, label: str) -> None:
        n, self.rounds = self.rounds, self.rounds + 1
        for hot, model, writers in zip(self.hot, self.models, self.writers):
            if hot and n % self.hot_writes_every:
                continue
            batch = model.plan_batch(BATCH_EVENTS, 0.3, 0.05)
            for writer in writers:
                try:
                    writer.commit(batch, label=label, summary={})
                    self.commits += 1
                except Exception as exc:  # noqa: BLE001 (counted and said: a twin missing a batch is no longer a twin)
                    self.failures.append(str(exc).splitlines()[0][:200])

    def run(self, stop: threading.Event) -> None:
        n = 0
        while not stop.is_set():
            n += 1
            started = time.monotonic()
            self.write_round(f"w-{n:05d}")
            stop.wait(max(0.0, WRITE_EVERY_S - (time.monotonic() - started)))


def make_fleets(root: Path, config: Any, spark: Any, hot_writes_every: int) -> Writer:
    from maintenance.catalogs import get_catalog
    from maintenance.workload.fleet import FleetOptions, make_fleet

    for twin in TWINS:
        make_fleet(get_catalog(config, twin), twin, FleetOptions(tables=STATIC_TABLES, namespace="fleet", prefix="s", commits=12, rows=200, partitions=2))
    writer = Writer(spark, config, hot_writes_every)
    for n in range(INITIAL_COMMITS):
        writer.write_round(f"i-{n:05d}")
    return writer


def compute_factors(config: Any, spark: Any) -> dict[str, float]:
    """Per job (MERGE, COMPACT), the compute-seconds of one run over the job's estimate: run in
    this process's JVM (warm from making the fleets, as a daemon's is after its first runs) on
    a scratch table made as the fleet's are, in namespace `calib` of `none`, which no policy
    selects and no reader reads. The budget is a part of the due work in these terms: a
    daemon's estimates are rough seconds, its calibration learns what they cost in compute
    only from its own runs."""
    from maintenance.catalogs import get_catalog, load_table, parse_table_ref
    from maintenance.jobs import registry
    from maintenance.run.runner import run_job
    from maintenance.spark.jvm import load_java_table
    from maintenance.table.health import table_health
    from maintenance.workload.cdc import CdcOptions, prepare_cdc_table
    from maintenance.workload.fleet import FleetOptions, make_fleet
    from maintenance.workload.shape import TableShape
    from maintenance.workload.writer import BatchWriter

    make_fleet(get_catalog(config, "none"), "none", FleetOptions(tables=1, namespace="calib", prefix="s", commits=12, rows=200, partitions=2))
    cdc = parse_table_ref("none.calib.c00", config)
    _, shape, model, _ = prepare_cdc_table(spark, config, cdc, CdcOptions(shape=TableShape("identity", 4, "single"), seed=100))
    table = load_table(config, cdc)
    writer = BatchWriter(spark, load_java_table(spark, cdc), table.io, table.schema(), shape)
    for n in range(INITIAL_COMMITS):
        writer.commit(model.plan_batch(BATCH_EVENTS, 0.3, 0.05), label=f"calib-{n}", summary={})
    factors = {}
    for job, name in (("merge", "none.calib.c00"), ("compact", "none.calib.s00000")):
        ref = parse_table_ref(name, config)
        estimate = registry.job(job).estimate(table_health(name, load_table(config, ref), small_file_bytes=config.health.small_file_bytes))
        result = run_job(config, ref, job)
        if result.compute_s is None or estimate <= 0:
            raise SystemExit(f"calibration run of {job} on {name}: {result.status}, compute_s {result.compute_s}, estimate {estimate}")
        factors[job] = result.compute_s / estimate
    return factors


def icemaint(config_path: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ICEMAINT_CONFIG": str(config_path)}
    return subprocess.run([sys.executable, "-m", "maintenance", *args], capture_output=True, text=True, env=env, timeout=timeout)


def due_work(config_path: Path, factors: dict[str, float]) -> tuple[float, int]:
    """The compute-seconds of every job due now (each job's estimate times its factor, from
    `compute_factors`; the mean factor for a job not measured there), and how many jobs."""
    done = icemaint(config_path, "plan", "--json", "--fresh")
    decisions = [d for d in json.loads(done.stdout)["decisions"] if d.get("due")]
    other = statistics.mean(factors.values())
    return sum(d.get("estimated_s", 0.0) * factors.get(d["job"], other) for d in decisions), len(decisions)


def tree_cpu_s(pid: int) -> float:
    """CPU seconds (user and system) a process and every process below it have used so far."""
    ticks = 0
    for each in [pid, *descendants(pid)]:
        try:
            fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return round(ticks / os.sysconf("SC_CLK_TCK"), 1)


def reader(root: Path, twin: str, url: str, scans: list[dict[str, Any]]) -> subprocess.Popen[str]:
    token_file = root / "token"
    token_file.write_text(TOKEN)
    settings = root / f"reader-{twin}.json"
    config = {"home": str(root / twin), "default_catalog": twin, "catalogs": {twin: catalog_entry(root, twin)}, "spark": {"master": "local[1]"}}
    settings.write_text(json.dumps({"config": config, "reporter": {"url": url, "token_file": str(token_file)},
                                    "scans": [{**s, "table": f"{twin}.{s['table']}"} for s in scans]}))
    out = open(root / f"reader-{twin}.out", "w")  # noqa: SIM115 (the process's, until it ends)
    return subprocess.Popen([sys.executable, "-m", "maintenance.workload.readers", str(settings)], stdout=out, stderr=subprocess.DEVNULL, text=True)


def reported_scans(state_url: str) -> dict[str, dict[str, int]]:
    """Per table, the sums of every scan its readers reported (the state database's day
    rows added up as they are, unweighed: a run across midnight counts both days whole)."""
    from sqlalchemy import func, select

    from maintenance.state.database import make_engine
    from maintenance.state.scan_days import SUMS, scan_days

    columns = [func.sum(scan_days.c[name]).label(name) for name in SUMS]
    with make_engine(state_url).connect() as conn:
        rows = conn.execute(select(scan_days.c.table_name, *columns).group_by(scan_days.c.table_name)).all()
    return {row.table_name: {name: int(getattr(row, name) or 0) for name in SUMS} for row in rows}


def scan_cost_s(sums: dict[str, int]) -> float:
    """What a table's reported scans cost, in all: bytes read and an open per file (data
    and delete), Spark's measure of a read, at the reader model's rate."""
    from maintenance.table.reader_cost import OPEN_COST_BYTES, READER_BYTES_PER_S

    read = sums["data_bytes"] + sums["delete_bytes"] + (sums["data_files"] + sums["delete_files"]) * OPEN_COST_BYTES
    return read / READER_BYTES_PER_S


def fleet_figures(root: Path, twin: str) -> dict[str, Any]:
    from maintenance.schedule.value import COMPUTE, PREDICTED, SPARK_START, job_seconds, measured_relief, predicted_cost_s, run_cost_s
    from maintenance.state.database import make_engine
    from maintenance.state.store import StateStore

    url = f"sqlite:///{root / twin / 'state.db'}"
    state = StateStore.on(make_engine(url))
    reported = reported_scans(url)
    found: dict[str, Any] = {"scans": sum(s["scans"] for s in reported.values()), "scan_cost_s": sum(scan_cost_s(s) for s in reported.values()),
                             "hot_scans": sum(s["scans"] for t, s in reported.items() if t.split(".")[-1] in HOT)}
    if twin not in MAINTAINED:
        return found
    runs = [r for r in state.runs.list(limit=10_000) if r.ended_at_ms is not None]
    after = state.run_scans.after([r.run_id for r in runs])
    costs, reliefs = [], []
    for run in runs:
        predicted = (run.counters or {}).get(PREDICTED) or {}
        predicted_s = predicted_cost_s(predicted)
        if predicted_s is not None and run.status == "committed":
            costs.append({"table": run.table, "job": run.job, "predicted_s": round(predicted_s, 3), "measured_s": round(run_cost_s(run), 3),
                          "wall_s": round(job_seconds(run), 2), "compute_recorded": COMPUTE in (run.counters or {}), "spark_start_s": (run.counters or {}).get(SPARK_START, 0.0)})
        scans = after.get(run.run_id)
        relief = measured_relief(predicted, scans.mean) if scans is not None else None
        if relief is not None and run.status == "committed":
            reliefs.append({"table": run.table, "job": run.job, "run": run.run_id, "ended_at_ms": run.ended_at_ms, "scans_after": scans.scans,
                            "predicted_bytes": predicted.get("relieved_per_scan"), "measured_bytes": round(relief)})
    by_job: dict[str, int] = {}
    for run in runs:
        key = f"{run.job} {run.status}"
        by_job[key] = by_job.get(key, 0) + 1
    last_per_table: dict[str, dict[str, Any]] = {}
    for relief in sorted(reliefs, key=lambda r: r["ended_at_ms"]):
        last_per_table[relief["table"]] = relief
    found.update(runs=by_job, run_s=round(sum((r.ended_at_ms - r.started_at_ms) / 1000 for r in runs), 1), compute_s=round(sum(run_cost_s(r) for r in runs), 1),
                 hot_runs=sum(1 for r in runs if r.table.split(".")[-1] in HOT),
                 cost_within=_within(costs, "predicted_s", "measured_s"), costs=costs,
                 relief_within_runs=_within(reliefs, "predicted_bytes", "measured_bytes"),
                 relief_within_tables=_within(list(last_per_table.values()), "predicted_bytes", "measured_bytes"), reliefs=reliefs)
    return found


def _within(rows: list[dict[str, Any]], predicted: str, measured: str) -> dict[str, Any]:
    """How many of `rows` predicted within `WITHIN` of what was measured."""
    close = [r for r in rows if r[measured] and abs(r[predicted] - r[measured]) <= WITHIN * abs(r[measured])]
    errors = [abs(r[predicted] - r[measured]) / abs(r[measured]) for r in rows if r[measured]]
    return {"of": len(rows), "within": len(close), "share": round(len(close) / len(rows), 3) if rows else None,
            "median_error": round(statistics.median(errors), 3) if errors else None}


def refigure(path: Path) -> None:
    """The predictions' accuracy of a kept run (its root still on disk), re-derived by this
    code from its daemons' state databases: what a change in how a recorded prediction is
    read (`value.predicted_cost_s`) makes of a run already measured. The rest stays as measured."""
    result = json.loads(path.read_text())
    root = Path(result["root"])
    for twin in MAINTAINED:
        again = fleet_figures(root, twin)
        for key in ("cost_within", "costs", "relief_within_runs", "relief_within_tables", "reliefs"):
            result["fleets"][twin][key] = again[key]
        print(twin, json.dumps({k: again[k] for k in ("cost_within", "relief_within_runs", "relief_within_tables")}))
    result["refigured"] = {"commit": commit(), "utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}
    write_json(str(path), result)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--budget-part", type=float, default=0.2)
    parser.add_argument("--hot-writes-every", type=int, default=1, help="a hot CDC table's batch every Nth writer round only")
    parser.add_argument("--root", help="where the fleets go (a new folder by default)")
    parser.add_argument("--json-out")
    parser.add_argument("--refigure", metavar="JSON", help="re-derive the predictions' accuracy of a run this wrote, from the state databases under its root; run nothing")
    args = parser.parse_args()
    if args.refigure:
        refigure(Path(args.refigure))
        return
    root = Path(args.root or tempfile.mkdtemp(prefix="icemaint-bench-budget-"))
    policies = root / "policies"
    policies.mkdir(parents=True, exist_ok=True)
    (policies / "bench.yaml").write_text(POLICY)
    os.environ["ICEMAINT_HOME"] = str(root / "writer")
    from maintenance.catalogs import get_catalog
    from maintenance.config import parse_config
    from maintenance.daemon.http import serve
    from maintenance.readers.endpoint import PATH, ScanReportEndpoint
    from maintenance.spark.session import get_spark, stop_spark
    from maintenance.state.database import ensure_schema, make_engine
    from maintenance.state.store import StateStore

    raw = {"home": str(root / "writer"), "default_catalog": "value", "catalogs": {t: catalog_entry(root, t) for t in TWINS}, "spark": {"master": "local[1]"}}
    config = parse_config(raw, source="bench", base_dir=root)
    started, started_utc, measured_commit = time.monotonic(), time.strftime("%Y-%m-%d %H:%M", time.gmtime()), commit()
    for twin in TWINS:
        (root / twin).mkdir(exist_ok=True)
        get_catalog(config, twin, create=True)  # a writer of tables makes its catalogs' own tables
    spark = get_spark(config)
    writer = make_fleets(root, config, spark, args.hot_writes_every)
    made_s = time.monotonic() - started
    print(f"fleets made in {made_s:.0f} s under {root}", flush=True)

    ports = {twin: free_port() for twin in MAINTAINED}
    daemon = {"interval": "30s", "max_concurrent_jobs": 1, "metrics_host": "127.0.0.1", "scan_reports_token": TOKEN, "spark_idle": "1h"}
    paths = {}
    for twin in TWINS:
        paths[twin] = root / twin / "icemaint.yaml"
        paths[twin].write_text(json.dumps(twin_config(root, twin, policies, {**daemon, "metrics_port": ports.get(twin, 0)})))
    factors = compute_factors(config, spark)
    due_s, due_jobs = due_work(paths["value"], factors)
    budget_s = round(args.budget_part * due_s, 1)
    print(f"compute-seconds per estimated second: {factors}; due at the start: {due_jobs} jobs, {due_s:.0f} compute-s; budget {budget_s} s an hour", flush=True)
    for twin in MAINTAINED:
        paths[twin].write_text(json.dumps(twin_config(root, twin, policies, {**daemon, "metrics_port": ports[twin], "budget": budget_s,
                                                                             "budget_order": twin})))

    engine = make_engine(f"sqlite:///{root / 'none' / 'state.db'}")
    ensure_schema(engine)
    baseline = StateStore.on(engine)
    none_config = parse_config(twin_config(root, "none", policies, {}), source="bench", base_dir=root)
    door = serve("127.0.0.1", 0, posts={PATH: ScanReportEndpoint(TOKEN, "none", none_config.catalogs, lambda: baseline).receive})
    urls = {"none": f"http://127.0.0.1:{door.server_address[1]}", **{t: f"http://127.0.0.1:{ports[t]}" for t in MAINTAINED}}

    daemons = {}
    for twin in MAINTAINED:
        log = open(root / f"daemon-{twin}.log", "w")  # noqa: SIM115
        daemons[twin] = subprocess.Popen([sys.executable, "-m", "maintenance", "daemon"], env={**os.environ, "ICEMAINT_CONFIG": str(paths[twin])},
                                         stdout=log, stderr=log, start_new_session=True)
    scans = schedule(args.minutes)
    readers = {twin: reader(root, twin, urls[twin], scans) for twin in TWINS}
    stop = threading.Event()
    writing = threading.Thread(target=writer.run, args=(stop,), daemon=True)
    writing.start()
    ran_from = time.monotonic()
    for twin, process in readers.items():
        process.wait(timeout=args.minutes * 60 * 3 + 600)
    stop.set()
    writing.join()
    ran_s = time.monotonic() - ran_from
    time.sleep(5)  # the readers' last reports leave at their JVMs' exit; the doors take them
    left = {twin: due_work(paths[twin], factors) for twin in MAINTAINED}
    daemon_cpu_s = {twin: tree_cpu_s(process.pid) for twin, process in daemons.items()}
    for process in daemons.values():
        os.killpg(process.pid, signal.SIGTERM)
    for process in daemons.values():
        process.wait(timeout=300)
    door.shutdown()
    stop_spark()

    figures = {twin: fleet_figures(root, twin) for twin in TWINS}
    readers_ms = {}
    for twin in TWINS:
        said = json.loads((root / f"reader-{twin}.out").read_text().strip().splitlines()[-1])
        readers_ms[twin] = {"scans": len(said["scans"]), "ms": round(sum(s["ms"] for s in said["scans"])), "late_s": round(max(s["started_s"] - s_at for s, s_at in zip(said["scans"], (x["at_s"] for x in scans))), 1)}
    base = figures["none"]["scan_cost_s"]
    for twin in MAINTAINED:
        f = figures[twin]
        f["saved_s"] = round(base - f["scan_cost_s"], 1)
        f["saved_per_run_s"] = round(f["saved_s"] / f["run_s"], 2) if f["run_s"] else None
        f["saved_per_compute_s"] = round(f["saved_s"] / f["compute_s"], 2) if f["compute_s"] else None
        f["saved_wall_s"] = round((readers_ms["none"]["ms"] - readers_ms[twin]["ms"]) / 1000, 1)
        f["due_at_end_s"], f["due_at_end_jobs"] = round(left[twin][0], 1), left[twin][1]
        f["daemon_cpu_s"] = daemon_cpu_s[twin]  # the daemon's whole process tree (Python and its JVM): beside its runs' compute-seconds
    value, triggers = figures["value"].get("saved_per_compute_s"), figures["triggers"].get("saved_per_compute_s")
    result = {"started_utc": started_utc, "commit": measured_commit, "minutes": args.minutes, "budget_part": args.budget_part, "hot_writes_every": args.hot_writes_every, "write_every_s": WRITE_EVERY_S, "ran_s": round(ran_s), "fleets_made_s": round(made_s), "tables": CDC_TABLES + STATIC_TABLES, "cdc_tables": CDC_TABLES,
              "hot_tables": HOT, "scans_scheduled": len(scans), "due_at_start_s": round(due_s, 1), "due_at_start_jobs": due_jobs, "budget_s": budget_s,
              "compute_per_estimated_s": {job: round(f, 4) for job, f in factors.items()},
              "writer_commits": writer.commits, "writer_failures": writer.failures[:5], "writer_failure_count": len(writer.failures),
              "readers": readers_ms, "fleets": figures,
              "value_over_triggers": round(value / triggers, 2) if value and triggers and triggers > 0 else None, "root": str(root)}
    print(json.dumps({k: v for k, v in result.items() if k != "fleets"}, indent=2))
    for twin in TWINS:
        print(twin, json.dumps({k: v for k, v in figures[twin].items() if k not in ("costs", "reliefs")}))
    write_json(args.json_out, result)


if __name__ == "__main__":
    main()
