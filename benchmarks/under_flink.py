"""Under a Flink writer: icemaint's daemon against Iceberg's own Flink `TableMaintenance`.

    .venv/bin/python benchmarks/under_flink.py [--minutes 10] [--checkpoint-interval 5] [--rows 300000]
        [--partitions 16] [--every-s 60] [--contenders icemaint,flink] [--json-out F]

Each contender in turn gets a table of its own (`cdc_<contender>.orders`, the same shape)
and the same stream: Apache Flink's Iceberg sink in upsert mode (`icemaint workload cdc
--writer flink`, the same seed, so the same events in the same order) writing `--rows`
events over `--minutes`, a commit per checkpoint, with no restart strategy (a refused commit
ends the writer: `writer exit 0` means none was refused). While it writes, the contender
maintains the table:
- icemaint: `icemaint daemon` with the shipped `streaming-cdc` policy, every job's schedule
  cut to `--every-s` and its quiet hours off (MERGE and COMPACT run in the day too);
- flink: `benchmarks/flink_maintenance_job.py`, a standalone Flink job of RewriteDataFiles,
  ExpireSnapshots and DeleteOrphanFiles configured as Iceberg's quick start shows, its rate
  limit cut to `--every-s`.
Sampled while it runs: every snapshot (writer's or maintenance's, by the summary's
`flink.job-id`), the live data and delete files every 30 s, and the CPU-seconds of the
contender's whole process tree (its Python and JVMs; the writer's are not counted).
The files are read again when the writer ends; the contender then runs on for `--settle-s`
(two of its intervals by default), as it would when a stream pauses, and is stopped.
Afterwards: the table against the writer's model (EXCEPT ALL both ways), delete files per
data file, and a full scan (Spark, median of 3) against the same rows written once with no
delete file.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import yaml
from common import write_json
from memory import descendants

REPO = Path(__file__).resolve().parent.parent
CONTENDERS = ("icemaint", "flink")
SAMPLE_S, FILES_SAMPLE_S = 5.0, 30.0
COLUMNS = "id, region, customer, amount, status, updated_at, version"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--checkpoint-interval", type=float, default=5)
    parser.add_argument("--rows", type=int, default=300_000)
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--every-s", type=int, default=60)
    parser.add_argument("--settle-s", type=float, default=None, help="the contender runs on this long after the writer ended (default: 2 x --every-s)")
    parser.add_argument("--contenders", default=",".join(CONTENDERS))
    parser.add_argument("--json-out")
    args = parser.parse_args()
    if args.settle_s is None:
        args.settle_s = 2.0 * args.every_s
    sys.path.insert(0, str(REPO))
    home = Path(tempfile.mkdtemp(prefix="icemaint-bench-flink-"))
    os.environ["ICEMAINT_HOME"] = str(home)
    os.environ.pop("ICEMAINT_CONFIG", None)
    result: dict[str, Any] = {"minutes": args.minutes, "checkpoint_interval_s": args.checkpoint_interval, "rows": args.rows,
                              "partitions": args.partitions, "every_s": args.every_s, "settle_s": args.settle_s, "contenders": []}
    for contender in args.contenders.split(","):
        result["contenders"].append(_run(contender, home, args))
    measured = _measure(home, [c["table"] for c in result["contenders"]])
    for entry in result["contenders"]:
        entry.update(measured[entry["table"]])
    print(json.dumps([{k: v for k, v in c.items() if k not in ("timeline", "runs")} for c in result["contenders"]], indent=2))
    write_json(args.json_out, result)


def _run(contender: str, home: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One contender under the writer: what was sampled while it ran."""
    from maintenance.catalogs import parse_table_ref
    from maintenance.config import load_config

    table = f"cdc_{contender}.orders"
    config = load_config(None)
    ref = parse_table_ref(table, config)
    model = home / f"model-{contender}.parquet"
    commits = max(2, round(args.minutes * 60 / args.checkpoint_interval))
    print(f"== {contender}: writer on {table}, {args.rows:,} events over {commits} checkpoints", flush=True)
    writer = subprocess.Popen([sys.executable, "-m", "maintenance", "workload", "cdc", table, "--writer", "flink", "--rows", str(args.rows),
                               "--commits", str(commits), "--checkpoint-interval", str(args.checkpoint_interval), "--partitions", str(args.partitions),
                               "--update-ratio", "0.3", "--delete-ratio", "0.05", "--seed", "5", "--model-out", str(model), "--json"],
                              stdout=subprocess.PIPE, stderr=(home / f"writer-{contender}.log").open("wb"), text=True, cwd=REPO)
    _wait_for_table(config, ref, writer)
    started = time.monotonic()
    maintainer = _start_icemaint(home, ref, args.every_s) if contender == "icemaint" else _start_flink_maintenance(home, config, ref, args.every_s)
    sampler = _Sampler(config, ref, maintainer.pid)
    sampler.start()
    out, _ = writer.communicate(timeout=args.minutes * 60 + 900)
    at_writers_end = _files(sampler.snapshots_table())
    time.sleep(args.settle_s)  # the contender catches up with the writer's last minutes, as it does when a stream pauses
    sampler.stop()
    if maintainer.poll() is not None:
        raise SystemExit(f"{contender}'s maintenance stopped (exit {maintainer.returncode}) before the writer did: see {home}")
    _stop(maintainer)
    entry: dict[str, Any] = {"contender": contender, "table": table, "writer_exit": writer.returncode, "seconds": round(time.monotonic() - started, 1),
                             "model": str(model), "files_at_writers_end": at_writers_end, **sampler.summary()}
    if writer.returncode == 0:
        entry["writer"] = json.loads(out)
    if contender == "icemaint":
        entry["runs"] = _icemaint_runs(home, table)
    else:
        log = (home / "flink-maintenance.log").read_text(errors="replace")
        entry["log_errors"] = sum(1 for line in log.splitlines() if " ERROR " in line or "Exception:" in line)
    print(f"== {contender}: writer exit {writer.returncode}, {entry['maintenance_commits']} maintenance commits, "
          f"{entry['cpu_s']:.0f} CPU-s", flush=True)
    return entry


def _wait_for_table(config: Any, ref: Any, writer: subprocess.Popen[str]) -> None:
    from maintenance.catalogs import load_table
    from maintenance.errors import IcemaintError

    while writer.poll() is None:
        try:
            load_table(config, ref)
            return
        except IcemaintError:
            time.sleep(1)
    raise SystemExit(f"the writer ended (exit {writer.returncode}) before it made {ref}")


def _start_icemaint(home: Path, ref: Any, every_s: int) -> subprocess.Popen[bytes]:
    policy: dict[str, Any] = yaml.safe_load((REPO / "policies" / "streaming-cdc.yaml").read_text())
    policy["select"] = {"namespaces": [ref.namespace[0]]}
    for job in policy["jobs"].values():
        job.pop("quiet_hours", None)
        job.pop("cron", None)
        job["every"] = f"{every_s}s"
    policies = home / "policies"
    policies.mkdir(exist_ok=True)
    (policies / "streaming-cdc.yaml").write_text(yaml.safe_dump(policy, sort_keys=False))
    config = home / "daemon.yaml"
    config.write_text(f"home: {home}\npolicies: {policies}\ndaemon:\n  interval: 10s\n  metrics_port: 0\n")
    return subprocess.Popen([sys.executable, "-m", "maintenance", "--config", str(config), "--log-format", "json", "daemon"], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=(home / "daemon.log").open("wb"), start_new_session=True)


def _start_flink_maintenance(home: Path, config: Any, ref: Any, every_s: int) -> subprocess.Popen[bytes]:
    from maintenance.spark.jars import AWS_BUNDLE, FLINK, jar, jars_for
    from maintenance.spark.session import java_catalog_properties
    from maintenance.workload.flink_runtime import flink_python, hadoop_classpath

    catalog = config.catalog(ref.catalog)
    settings = {
        "jars": [Path(j).as_uri() for j in [*jars_for(FLINK), jar(AWS_BUNDLE)]],
        "flink_configuration": {"execution.checkpointing.interval": "30 s", "parallelism.default": "1"},
        "catalog_name": ref.catalog, "catalog_impl": "org.apache.iceberg.jdbc.JdbcCatalog", "catalog_properties": java_catalog_properties(catalog),
        "database": ref.namespace[0], "table": ref.name, "lock_uri": f"jdbc:sqlite:{home / 'flink-locks.db'}", "every_s": every_s,
    }
    settings_file = home / "flink-maintenance.json"
    settings_file.touch(mode=0o600)
    settings_file.write_text(json.dumps(settings))
    env = {**os.environ, "HADOOP_CLASSPATH": os.pathsep.join(hadoop_classpath()), "FLINK_LOG_DIR": str(home)}
    return subprocess.Popen([str(flink_python()), str(REPO / "benchmarks" / "flink_maintenance_job.py"), str(settings_file)], cwd=REPO, env=env,
                            stdout=(home / "flink-maintenance.log").open("wb"), stderr=subprocess.STDOUT, start_new_session=True)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the contender's process group (the daemon drains; the Flink job is unbounded and
    ends with its process), SIGKILL after 120 s."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    except ProcessLookupError:
        pass


class _Sampler:
    """Snapshots, files and the contender's CPU, sampled on a thread of their own."""

    def __init__(self, config: Any, ref: Any, root_pid: int) -> None:
        self.config, self.ref, self.root_pid = config, ref, root_pid
        self.snapshots: dict[int, tuple[bool, str]] = {}  # id -> (the writer's, operation)
        self.timeline: list[dict[str, Any]] = []
        self.cpu_ticks: dict[int, int] = {}  # pid -> utime + stime, the most seen
        self.started = time.monotonic()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self._cpu()
        self.done.set()
        self.thread.join(timeout=120)
        self._snapshots()  # the writer's last commit came after the last sample

    def _loop(self) -> None:
        last_files = -FILES_SAMPLE_S
        while not self.done.wait(SAMPLE_S):
            self._cpu()
            table = self._snapshots()
            if time.monotonic() - last_files >= FILES_SAMPLE_S:
                last_files = time.monotonic()
                self.timeline.append({"s": round(time.monotonic() - self.started), **_files(table)})

    def snapshots_table(self) -> Any:
        """The table now, its snapshots recorded."""
        return self._snapshots()

    def _snapshots(self) -> Any:
        """Every snapshot the table holds now into `snapshots`; the table."""
        from maintenance.catalogs import load_table

        table = load_table(self.config, self.ref)
        for snapshot in table.metadata.snapshots:
            summary = snapshot.summary.additional_properties if snapshot.summary else {}
            operation = str(snapshot.summary.operation.value) if snapshot.summary else "?"
            self.snapshots.setdefault(snapshot.snapshot_id, ("flink.job-id" in summary, operation))
        return table

    def _cpu(self) -> None:
        for pid in [self.root_pid, *descendants(self.root_pid)]:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            ticks = int(fields[11]) + int(fields[12])  # utime, stime
            self.cpu_ticks[pid] = max(self.cpu_ticks.get(pid, 0), ticks)

    def summary(self) -> dict[str, Any]:
        maintenance = [operation for by_writer, operation in self.snapshots.values() if not by_writer]
        return {"writer_commits": sum(1 for by_writer, _ in self.snapshots.values() if by_writer), "maintenance_commits": len(maintenance),
                "maintenance_operations": {op: maintenance.count(op) for op in sorted(set(maintenance))},
                "cpu_s": round(sum(self.cpu_ticks.values()) / os.sysconf("SC_CLK_TCK"), 1), "timeline": self.timeline}


def _files(table: Any) -> dict[str, Any]:
    """Live data and delete files, and the partition with the most delete files per data file."""
    files = table.inspect.files().select(["content", "partition"]).to_pylist()
    per_partition: dict[str, list[int]] = {}
    for row in files:
        counts = per_partition.setdefault(json.dumps(row["partition"], sort_keys=True, default=str), [0, 0])
        counts[0 if row["content"] == 0 else 1] += 1
    return {"data_files": sum(1 for r in files if r["content"] == 0), "position_delete_files": sum(1 for r in files if r["content"] == 1),
            "equality_delete_files": sum(1 for r in files if r["content"] == 2),
            "max_deletes_per_data_file": round(max((d / max(1, n) for n, d in per_partition.values()), default=0.0), 2)}


def _icemaint_runs(home: Path, table: str) -> list[dict]:
    listed = subprocess.run([sys.executable, "-m", "maintenance", "--config", str(home / "daemon.yaml"), "runs", "--table", table, "--limit", "10000", "--json"],
                            capture_output=True, text=True, check=True, cwd=REPO)
    return list(reversed(json.loads(listed.stdout)))


def _measure(home: Path, tables: list[str]) -> dict[str, dict[str, Any]]:
    """With every process stopped: content against the model, files, and a full scan beside the
    same rows with no delete file."""
    from maintenance.catalogs import load_table, parse_table_ref
    from maintenance.config import load_config
    from maintenance.spark.session import get_spark

    config = load_config(None)
    spark = get_spark(config)
    measured = {}
    for table in tables:
        ref = parse_table_ref(table, config)
        contender = table.split(".")[0].removeprefix("cdc_")
        spark.sql(f"REFRESH TABLE {ref.spark_name}")
        frame = spark.sql(f"SELECT {COLUMNS} FROM {ref.spark_name}")
        model = spark.read.parquet(str(home / f"model-{contender}.parquet")).select(*COLUMNS.split(", "))
        content = {"rows": frame.count(), "model_rows": model.count(), "only_in_table": frame.exceptAll(model).count(),
                   "only_in_model": model.exceptAll(frame).count()}
        compacted = dataclasses.replace(ref, name=f"{ref.name}_compacted").spark_name
        spark.sql(f"CREATE TABLE {compacted} USING iceberg AS SELECT * FROM {ref.spark_name}")
        measured[table] = {"content": content, "end_files": _files(load_table(config, ref)),
                           "scan_s": _scan_seconds(spark, ref.spark_name), "compacted_scan_s": _scan_seconds(spark, compacted)}
    return measured


def _scan_seconds(spark: Any, name: str, repeat: int = 3) -> float:
    """A full scan (every column, every delete applied), median of `repeat`."""
    times = []
    for _ in range(repeat):
        spark.sql(f"REFRESH TABLE {name}")
        started = time.perf_counter()
        spark.table(name).write.format("noop").mode("overwrite").save()
        times.append(time.perf_counter() - started)
    return round(statistics.median(times), 3)


if __name__ == "__main__":
    main()
