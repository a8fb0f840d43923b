"""icemaint against the native peer, nimtable's iceberg-compaction (Rust), on a REST catalog and S3.

    .venv/bin/python benchmarks/native_peer.py [--sizes ROWS:COMMITS:PARTITIONS:PARTITIONING:FORMAT,...]
        [--appends ROWS:COMMITS:PARTITIONS] [--repeat 3] [--json-out F]

What issue 58 asks: how far a job is from what a native engine pays for the same work. The
catalog and the store are the tests' (SeaweedFS `weed mini`: its Iceberg REST catalog and its
S3 API, `maintenance/workload/seaweedfs.py`); icemaint reaches them as users configure it
(REST catalog, Iceberg's S3FileIO), the peer through its own REST catalog and S3 clients, in
its own venv (`make peer`, `benchmarks/native_peer_job.py`).

Tables: one generated CDC table per size (5% updates, 1% deletes, seed 77), and one
append-only table of `COMMITS x PARTITIONS` small files. Every run starts from exactly the
generated table (rolled back to its snapshot; no contender deletes a file). Contenders:
- on a CDC table: icemaint MERGE verified, MERGE `--no-verify`, the peer's `full` strategy
  (every data file rewritten with its deletes applied);
- on the appends: icemaint COMPACT binpack verified and unverified, the peer's `small_files`.
The peer is given icemaint's target file size and small-file threshold, so both write the
same files.
Each contender runs, per round, as one process (`icemaint <job> TABLE --json`, or the peer's
script): wall time fork to exit, the CPU-seconds of its whole process tree
(`tree_probe.py`), its peak tree RSS (sampled every 0.2 s, `memory.run_sampled`), the
store's requests and bytes (its own counters, `SeaweedFS.s3_traffic`), icemaint's
`phase_seconds`; and warm: icemaint's job in this process's already started Spark session
(the daemon's path), the peer's `Compaction.run()` inside its process. Medians of
`--repeat` rounds, every contender once per round in turn, after one unmeasured run of each.
After each contender's last run: its content against the generated table's
(`content_fingerprint`), and the live delete files and data files left, from the table's
`delete_files` and `data_files` metadata tables (not from snapshot summaries).
Also measured: `icemaint --help`, and a job with nothing to do, as processes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from common import compile_package, write_json
from memory import run_sampled

REPO = Path(__file__).resolve().parent.parent
PEER_PYTHON = REPO / ".venv-peer" / "bin" / "python"
HERE = Path(__file__).resolve().parent
CATALOG = "lake"
MERGE_CONTENDERS = [("icemaint MERGE, verified", "merge", True), ("icemaint MERGE, unverified", "merge", False), ("iceberg-compaction full", "full", None)]
COMPACT_CONTENDERS = [("icemaint COMPACT binpack, verified", "compact", True), ("icemaint COMPACT binpack, unverified", "compact", False),
                      ("iceberg-compaction small_files", "small_files", None)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # identity only, format 2 only: SeaweedFS's REST catalog refuses to create a table partitioned by
    # bucket[N] ("Invalid request body"), and its table buckets refuse .puffin objects (DVs, format 3).
    parser.add_argument("--sizes", default="1000000:100:4:identity:2,3000000:200:4:identity:2")
    parser.add_argument("--appends", default="1000000:500:4", help="ROWS:COMMITS:PARTITIONS of the append-only table ('' for none)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json-out")
    args = parser.parse_args()
    if not PEER_PYTHON.exists():
        raise SystemExit(f"{PEER_PYTHON} is missing: make peer")
    sys.path.insert(0, str(REPO))
    compile_package()
    from maintenance.workload import seaweedfs

    home = Path(tempfile.mkdtemp(prefix="icemaint-bench-native-"))
    with seaweedfs.running(home / "seaweedfs") as store:
        bench = Bench(home, store)
        result: dict[str, Any] = {"repeat": args.repeat, "store": "SeaweedFS weed mini (S3 + Iceberg REST catalog)", "sizes": [], "appends": None}
        from maintenance.spark.class_archive import archive_path

        archive = archive_path()
        result["class_archive"] = bool(archive and archive.is_file())  # `make setup` builds it; without it every process starts slower
        result["startup"] = bench.startup()
        for number, size in enumerate(filter(None, args.sizes.split(","))):
            rows, commits, partitions, partitioning, version = size.split(":")
            ref = bench.cdc_table(f"bench.cdc{number}", int(rows), int(commits), int(partitions), partitioning, int(version))
            result["sizes"].append({"rows": int(rows), "commits": int(commits), "partitions": int(partitions), "partitioning": partitioning,
                                    "format_version": int(version), **bench.measure(ref, MERGE_CONTENDERS, args.repeat)})
            if number == 0:
                result["noop"] = bench.noop(ref)
        if args.appends:
            rows, commits, partitions = (int(part) for part in args.appends.split(":"))
            ref = bench.appends_table("bench.appends", rows, commits, partitions)
            result["appends"] = {"rows": rows, "commits": commits, "partitions": partitions, **bench.measure(ref, COMPACT_CONTENDERS, args.repeat)}
    print(json.dumps({"startup": result["startup"], "noop": result.get("noop")}, indent=2))
    write_json(args.json_out, result)


class Bench:
    """The store, icemaint's configuration of it, this process's Spark session, and the runs."""

    def __init__(self, home: Path, store: Any) -> None:
        from maintenance.config import load_config
        from maintenance.spark.session import get_spark

        self.home, self.store = home, store
        self.config_path = home / "icemaint.yaml"
        catalog = {"type": "rest", "uri": store.rest_uri, "warehouse": store.warehouse, "credential": store.credential, "properties": store.s3_properties()}
        self.config_path.write_text(yaml.safe_dump({"home": str(home), "default_catalog": CATALOG, "catalogs": {CATALOG: catalog},
                                                    "state": {"url": f"sqlite:///{home / 'state.db'}"}}, sort_keys=False))
        self.env = {k: v for k, v in os.environ.items() if k not in ("ICEMAINT_HOME", "ICEMAINT_CONFIG")}
        self.config = load_config(str(self.config_path))
        self.spark = get_spark(self.config)

    # -- tables --------------------------------------------------------------------------

    def cdc_table(self, name: str, rows: int, commits: int, partitions: int, partitioning: str, version: int) -> Any:
        from maintenance.catalogs import parse_table_ref
        from maintenance.workload.cdc import CdcOptions, run_cdc_workload
        from maintenance.workload.shape import TableShape

        ref = parse_table_ref(name, self.config)
        started = time.perf_counter()
        run_cdc_workload(self.spark, self.config, ref, CdcOptions(rows=rows, commits=commits, update_ratio=0.05, delete_ratio=0.01, seed=77,
                                                                  shape=TableShape(partitioning, partitions, "single"), format_version=version))
        print(f"-- {name}: {rows:,} events, {commits} commits, {partitions} {partitioning}, v{version}, "
              f"generated in {time.perf_counter() - started:.0f} s", flush=True)
        return ref

    def appends_table(self, name: str, rows: int, commits: int, partitions: int) -> Any:
        from maintenance.catalogs import parse_table_ref
        from maintenance.workload.cdc import CdcOptions, run_cdc_workload
        from maintenance.workload.shape import TableShape

        ref = parse_table_ref(name, self.config)
        started = time.perf_counter()
        run_cdc_workload(self.spark, self.config, ref, CdcOptions(rows=rows, commits=commits, update_ratio=0.0, delete_ratio=0.0, seed=11,
                                                                  shape=TableShape("identity", partitions, "single")))
        print(f"-- {name}: {rows:,} rows in {commits} commits x {partitions} partitions, generated in {time.perf_counter() - started:.0f} s", flush=True)
        return ref

    # -- measuring -----------------------------------------------------------------------

    def measure(self, ref: Any, contenders: list[tuple[str, str, bool | None]], repeat: int) -> dict[str, Any]:
        from maintenance.catalogs import load_table
        from maintenance.spark.fingerprint import content_fingerprint

        generated = load_table(self.config, ref).metadata.current_snapshot_id
        expected = content_fingerprint(self.spark, ref)
        before = self.files(ref)
        for label, job, verify in contenders:  # unmeasured: the session's first run of a path, the helpers' jar built
            self.reset(ref, generated)
            self.process_run(ref, job, verify)
            if verify is not None:
                self.reset(ref, generated)
                self.warm_run(ref, job, verify)
        runs: dict[str, list[dict[str, Any]]] = {label: [] for label, *_ in contenders}
        checked: dict[str, dict[str, Any]] = {}
        for round_number in range(repeat):
            for label, job, verify in contenders:
                self.reset(ref, generated)
                run = self.process_run(ref, job, verify)
                if verify is not None:
                    self.reset(ref, generated)
                    run["warm_s"] = self.warm_run(ref, job, verify)
                runs[label].append(run)
                if round_number == repeat - 1:
                    self.spark.sql(f"REFRESH TABLE {ref.spark_name}")
                    same = content_fingerprint(self.spark, ref).same_content(expected)
                    checked[label] = {"content_same": same, **self.files(ref)}
                    if not same:
                        raise SystemExit(f"{label} changed the content of {ref}")
                print(f"   {label}: process {run['wall_s']:.1f} s, warm {run.get('warm_s', run.get('peer_run_s', 0)):.1f} s", flush=True)
        self.reset(ref, generated)
        return {"expected_rows": expected.rows, "before": before,
                "runs": [summary(label, runs[label], checked[label]) for label, *_ in contenders]}

    def process_run(self, ref: Any, job: str, verify: bool | None) -> dict[str, Any]:
        """One run as its own process, under `tree_probe.py`: icemaint's CLI, or the peer's script."""
        probe = self.home / "probe.json"
        if verify is None:
            command = [str(PEER_PYTHON), str(HERE / "native_peer_job.py")]
            stdin_text = json.dumps(self.peer_settings(ref, job))
        else:
            command = [sys.executable, "-m", "maintenance", "--config", str(self.config_path), job, str(ref), "--json", *([] if verify else ["--no-verify"])]
            stdin_text = None
        traffic_before = self.store.s3_traffic()
        sampled = run_sampled([sys.executable, str(HERE / "tree_probe.py"), str(probe), *command], self.env, stdin_text=stdin_text, cwd=str(REPO))
        traffic = {kind: count - traffic_before.get(kind, 0) for kind, count in self.store.s3_traffic().items() if count != traffic_before.get(kind, 0)}
        probed = json.loads(probe.read_text())
        if probed["returncode"] != 0:
            raise SystemExit(f"{' '.join(command[-4:])} exited {probed['returncode']}: {sampled['out'][-800:]}")
        out = json.loads(sampled["out"])
        run = {"wall_s": probed["wall_s"], "cpu_s": probed["cpu_s"], "peak_tree_mib": sampled["peak_tree_mib"], "traffic": traffic}
        if verify is None:
            run.update({"peer_run_s": out["run_s"], "peer_import_s": out["import_s"], "peer_catalog_s": out["catalog_s"],
                        "input_files": out["input_files"], "output_files": out["output_files"]})
        else:
            if out["status"] != "committed" or (verify and out.get("content_verified") is not True):
                raise SystemExit(f"icemaint {job}: {out.get('status')} {out.get('error')}")
            run["phase_seconds"] = out["phase_seconds"]
        return run

    def warm_run(self, ref: Any, job: str, verify: bool) -> float:
        from maintenance.run.runner import run_job

        started = time.perf_counter()
        result = run_job(self.config, ref, job, {}, verify=verify)
        seconds = time.perf_counter() - started
        if result.status != "committed" or (verify and result.content_verified is not True):
            raise SystemExit(f"icemaint {job} (warm): {result.status} {result.error}")
        return seconds

    def peer_settings(self, ref: Any, strategy: str) -> dict[str, Any]:
        """The peer's catalog and job, as its users write them: the same REST catalog and
        store, OAuth2 client credentials, icemaint's target file size and small-file threshold."""
        from maintenance.catalogs import load_table

        target = int(load_table(self.config, ref).properties.get("write.target-file-size-bytes", 512 * 2**20))
        properties = {"credential": self.store.credential, "s3.endpoint": self.store.endpoint, "s3.access-key-id": self.store.access_key,
                      "s3.secret-access-key": self.store.secret_key, "s3.region": self.store.region, "s3.path-style-access": "true"}
        return {"uri": self.store.rest_uri, "warehouse": self.store.warehouse, "properties": properties, "table": ref.identifier,
                "strategy": strategy, "target_file_size_bytes": target, "small_file_threshold_bytes": self.config.health.small_file_bytes}

    def reset(self, ref: Any, snapshot_id: int) -> None:
        """Back to the generated snapshot (its files are all still there)."""
        self.spark.sql(f"CALL {CATALOG}.system.set_current_snapshot('{ref.identifier}', {int(snapshot_id)})").collect()
        self.spark.sql(f"REFRESH TABLE {ref.spark_name}")

    def files(self, ref: Any) -> dict[str, int]:
        """Live data and delete files of the current snapshot, from its manifests."""
        self.spark.sql(f"REFRESH TABLE {ref.spark_name}")
        data = self.spark.sql(f"SELECT count(*) AS n FROM {ref.spark_name}.data_files").collect()[0].n
        deletes = {int(row.content): int(row.n) for row in self.spark.sql(f"SELECT content, count(*) AS n FROM {ref.spark_name}.delete_files GROUP BY content").collect()}
        return {"data_files": int(data), "position_delete_files": deletes.get(1, 0), "equality_delete_files": deletes.get(2, 0)}

    # -- fixed costs ---------------------------------------------------------------------

    def startup(self) -> dict[str, float]:
        """`icemaint --help` as a process, median of 5: what every command pays before it starts."""
        times = []
        for _ in range(5):
            sampled = run_sampled([sys.executable, "-m", "maintenance", "--help"], self.env, cwd=str(REPO))
            times.append(sampled["seconds"])
        return {"help_s": statistics.median(times)}

    def noop(self, ref: Any) -> dict[str, Any]:
        """A job with nothing to do as a process (MERGE of a table just merged), median of 3."""
        from maintenance.run.runner import run_job

        assert run_job(self.config, ref, "merge", {}).status == "committed"
        times, statuses = [], set()
        for _ in range(3):
            sampled = run_sampled([sys.executable, "-m", "maintenance", "--config", str(self.config_path), "merge", str(ref), "--json"], self.env, cwd=str(REPO))
            times.append(sampled["seconds"])
            statuses.add(json.loads(sampled["out"])["status"])
        return {"noop_s": statistics.median(times), "statuses": sorted(statuses)}


def summary(label: str, runs: list[dict[str, Any]], checked: dict[str, Any]) -> dict[str, Any]:
    """Medians of a contender's rounds; traffic and files from its last round."""
    out: dict[str, Any] = {"contender": label, "rounds": runs, **checked, "traffic": runs[-1]["traffic"]}
    for key in ("wall_s", "cpu_s", "peak_tree_mib", "warm_s", "peer_run_s", "peer_import_s"):
        values = [run[key] for run in runs if key in run]
        if values:
            out[key] = statistics.median(values)
    if "phase_seconds" in runs[0]:
        out["phase_seconds"] = {phase: statistics.median(run["phase_seconds"][phase] for run in runs) for phase in runs[0]["phase_seconds"]}
    if "peer_run_s" in out:
        out["warm_s"] = out["peer_run_s"]
    return out


if __name__ == "__main__":
    main()
