"""MERGE and COMPACT under steady writers (issue: compaction that never loses to a writer).

    .venv/bin/python benchmarks/under_writers.py [--minutes 10] [--format-version 2] [--rows 200000]
        [--commits 20] [--partitions 64] [--hot-partitions N] [--defer-hot-window 2m] [--json-out F]

A generated CDC table of `--partitions` identity partitions (`bench.t`) and an identical
twin (`shadow.t`, the same generator and seed) that no maintenance touches. For
`--minutes`, a writer process (its own Spark JVM) runs two writers side by side, each
applying every change to both tables:
- a merge-on-read SQL writer, every 2 s: `UPDATE ... SET status = ...` or `DELETE` of 8
  random keys across the partitions, or with `--hot-partitions N` across the first N of
  them only (late corrections to recent days) (position deletes on format 2, DVs on format 3); a
  statement Iceberg refuses is counted as a writer failure and run again (as an
  application would), up to 5 times;
- a CDC writer, every 2 s: a batch of upserts and deletes (equality deletes on the key,
  the workload generator's `BatchWriter`).
The two writers take turns (a lock around each change, applied to both tables), so both
tables see the same changes in the same order and the writers never conflict with each
other: a refusal a writer meets comes from icemaint's commits. Meanwhile `icemaint daemon` (another process) maintains `bench.t` with the default
policy's MERGE, COMPACT and REWRITE triggers, their `every` cut from 10 minutes to 1 so a
run holds several runs of each; `--defer-hot-window` sets MERGE's and COMPACT's
`defer_hot_window` (hot partitions wait, `jobs/file_groups/deferral.py`), and with
`--writer-lead-s` the writers start that long before the daemon (the writers' counts
include the lead). Afterwards: the daemon's runs (`icemaint runs --json`:
groups planned, committed, refused, rows rebased; runs failed), the writers' counts, and
the two tables compared row for row (EXCEPT ALL both ways): the shadow is the model of
both writers.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from common import fresh_embedded, write_json
from report import under_writers_jobs

MAIN, SHADOW = "bench.t", "shadow.t"
EVERY_S = 2.0
KEYS_PER_STATEMENT = 8
CDC_EVENTS = 400
STATEMENT_ATTEMPTS = 5
POLICY = """name: bench
priority: 50
select: {catalogs: "*", namespaces: ["bench"], tables: "*"}
jobs:
  rewrite: {when: {dangling_deletion_vectors: 1, duplicate_deletion_vectors: 1}, every: 1m}
  merge: {when: {equality_delete_files: 1, position_delete_files_per_data_file: 1, delete_ratio: 0.05}, every: 1m%(defer)s}
  compact: {when: {small_files: 20}, every: 1m%(defer)s}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--format-version", type=int, default=2, choices=(2, 3))
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--commits", type=int, default=20)
    parser.add_argument("--partitions", type=int, default=64)
    parser.add_argument("--hot-partitions", type=int, default=0, help="the SQL writer's keys come from this many partitions (0: all)")
    parser.add_argument("--defer-hot-window", help="MERGE's and COMPACT's defer_hot_window (default: off)")
    parser.add_argument("--writer-lead-s", type=float, default=0.0, help="the writers start this long before the daemon")
    parser.add_argument("--json-out")
    parser.add_argument("--writer", help=argparse.SUPPRESS)  # the writer process: its result file
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    if args.writer:
        _write(args.minutes * 60, Path(args.writer), args.hot_partitions)
        return
    config, spark = fresh_embedded(f"writers-v{args.format_version}")
    home = Path(os.environ["ICEMAINT_HOME"])
    started = time.perf_counter()
    for name in (MAIN, SHADOW):
        _generate(spark, config, name, args)
    generate_s = time.perf_counter() - started
    result: dict[str, Any] = {"format_version": args.format_version, "minutes": args.minutes, "rows": args.rows, "commits": args.commits,
                              "partitions": args.partitions, "hot_partitions": args.hot_partitions, "defer_hot_window": args.defer_hot_window,
                              "writer_lead_s": args.writer_lead_s,
                              "generate_s": round(generate_s, 1)}
    config_file = _daemon_config(home, args.defer_hot_window)
    daemon_log, writer_out = home / "daemon.log", home / "writer.json"
    env = {**os.environ, "ICEMAINT_CONFIG": str(config_file)}
    writer = subprocess.Popen([sys.executable, __file__, "--writer", str(writer_out), "--minutes", str(args.minutes + args.writer_lead_s / 60),
                               "--hot-partitions", str(args.hot_partitions)], env=env, start_new_session=True)
    time.sleep(args.writer_lead_s)  # the daemon meets writers already running, as it does once deployed
    daemon = subprocess.Popen([sys.executable, "-m", "maintenance", "--log-format", "json", "daemon"], env=env, stdout=subprocess.DEVNULL,
                              stderr=daemon_log.open("wb"), start_new_session=True)
    try:
        writer.wait(timeout=args.minutes * 60 + args.writer_lead_s + 600)
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(timeout=600)
        except subprocess.TimeoutExpired:
            os.killpg(daemon.pid, signal.SIGKILL)
    result["writers"] = json.loads(writer_out.read_text())
    result["runs"] = _runs(env)
    result["content"] = _compare(spark, config)
    print(json.dumps({k: v for k, v in result.items() if k != "runs"} | {"runs_summary": under_writers_jobs(result["runs"])}, indent=2, default=sorted))
    write_json(args.json_out, result)


def _generate(spark: Any, config: Any, name: str, args: argparse.Namespace) -> None:
    from maintenance.catalogs import parse_table_ref
    from maintenance.workload.cdc import CdcOptions, run_cdc_workload
    from maintenance.workload.shape import TableShape

    options = CdcOptions(rows=args.rows, commits=args.commits, update_ratio=0.05, delete_ratio=0.01, seed=11,
                         shape=TableShape("identity", args.partitions, "single"), format_version=args.format_version)
    run_cdc_workload(spark, config, parse_table_ref(name, config), options)


def _daemon_config(home: Path, defer_hot_window: str | None) -> Path:
    policies = home / "bench-policies"
    policies.mkdir(exist_ok=True)
    (policies / "bench.yaml").write_text(POLICY % {"defer": f", defer_hot_window: {defer_hot_window}" if defer_hot_window else ""})
    path = home / "daemon.yaml"
    path.write_text(f"home: {home}\npolicies: {policies}\nleases:\n  ttl_seconds: 120\ndaemon:\n  interval: 20s\n  metrics_port: 0\n")
    return path


class _Counts:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.values: dict[str, Any] = {"statements": 0, "statement_failures": 0, "statements_given_up": 0, "cdc_commits": 0,
                                       "cdc_failures": 0, "failure_messages": []}

    def add(self, key: str, message: str | None = None) -> None:
        with self.lock:
            self.values[key] += 1
            if message and len(self.values["failure_messages"]) < 20:
                self.values["failure_messages"].append(message[:300])


def _write(seconds: float, out: Path, hot_partitions: int) -> None:
    """The writer process (module docstring): two threads on one Spark session."""
    from maintenance.catalogs import load_table, parse_table_ref
    from maintenance.config import load_config
    from maintenance.spark.jvm import load_java_table
    from maintenance.spark.session import get_spark
    from maintenance.workload.cdc import _existing_rows, _partitioner, _shape_of
    from maintenance.workload.model import CdcModel
    from maintenance.workload.writer import BatchWriter

    config = load_config(None)
    spark = get_spark(config)
    refs = [parse_table_ref(name, config) for name in (MAIN, SHADOW)]
    table = load_table(config, refs[0])
    shape = _shape_of(table, refs[0])
    model = CdcModel(shape, _partitioner(table, shape), "writers")
    model.load(_existing_rows(spark, refs[0]))
    regions = sorted({row[1] for row in model.rows.values()})
    hot = set(regions[:hot_partitions] if hot_partitions else regions)
    ids = sorted({key[0] for key, row in model.rows.items() if row[1] in hot})
    writers = [BatchWriter(spark, load_java_table(spark, ref), load_table(config, ref).io, load_table(config, ref).schema(), shape) for ref in refs]
    counts = _Counts()
    deadline = time.monotonic() + seconds
    rng = random.Random(7)
    turn = threading.Lock()

    def statements() -> None:
        n = 0
        while time.monotonic() < deadline:
            n += 1
            keys = ", ".join(str(k) for k in rng.sample(ids, KEYS_PER_STATEMENT))
            change = f"SET status = 'w{n}' WHERE id IN ({keys})" if n % 2 else f"WHERE id IN ({keys})"
            verb = "UPDATE" if n % 2 else "DELETE FROM"
            with turn:
                for attempt in range(1, STATEMENT_ATTEMPTS + 1):
                    try:
                        spark.sql(f"{verb} {refs[0].spark_name} {change}")
                        break
                    except Exception as exc:  # noqa: BLE001 (counted: a writer statement Iceberg refused)
                        counts.add("statement_failures", _first_line(exc))
                        if attempt == STATEMENT_ATTEMPTS:
                            counts.add("statements_given_up")
                spark.sql(f"{verb} {refs[1].spark_name} {change}")
            counts.add("statements")
            time.sleep(EVERY_S)

    def cdc() -> None:
        n = 0
        while time.monotonic() < deadline:
            n += 1
            batch = model.plan_batch(CDC_EVENTS, 0.3, 0.05)
            with turn:
                for writer in writers:
                    try:
                        writer.commit(batch, label=f"w-{n:06d}", summary={})
                    except Exception as exc:  # noqa: BLE001
                        counts.add("cdc_failures", _first_line(exc))
                        raise
            counts.add("cdc_commits")
            time.sleep(EVERY_S)

    threads = [threading.Thread(target=statements), threading.Thread(target=cdc)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    out.write_text(json.dumps(counts.values))


def _first_line(exc: BaseException) -> str:
    """The Java error's own line where Py4J wraps it ("An error occurred while calling ...")."""
    lines = [line for line in str(exc).splitlines() if line.strip()]
    java = [line for line in lines if "Exception:" in line]
    return (java or lines or [type(exc).__name__])[0].strip()


def _runs(env: dict[str, str]) -> list[dict]:
    listed = subprocess.run([sys.executable, "-m", "maintenance", "runs", "--table", MAIN, "--limit", "10000", "--json"], env=env,
                            capture_output=True, text=True, check=True)
    return list(reversed(json.loads(listed.stdout)))


def _compare(spark: Any, config: Any) -> dict[str, int]:
    from maintenance.catalogs import parse_table_ref

    main_name, shadow_name = (parse_table_ref(name, config).spark_name for name in (MAIN, SHADOW))
    for name in (main_name, shadow_name):
        spark.sql(f"REFRESH TABLE {name}")
    columns = "id, region, customer, amount, status, updated_at, version"
    count = lambda sql: int(spark.sql(sql).collect()[0][0])  # noqa: E731
    return {
        "rows": count(f"SELECT count(*) FROM {main_name}"),
        "model_rows": count(f"SELECT count(*) FROM {shadow_name}"),
        "only_in_table": count(f"SELECT count(*) FROM (SELECT {columns} FROM {main_name} EXCEPT ALL SELECT {columns} FROM {shadow_name})"),
        "only_in_model": count(f"SELECT count(*) FROM (SELECT {columns} FROM {shadow_name} EXCEPT ALL SELECT {columns} FROM {main_name})"),
    }


if __name__ == "__main__":
    main()
