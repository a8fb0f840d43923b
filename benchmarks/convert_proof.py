"""CONVERT verified against CONVERT unverified and MERGE verified, as CLI processes and warm.

    .venv/bin/python benchmarks/convert_proof.py [--sizes ROWS:COMMITS:PARTITIONS:PARTITIONING:FORMAT,...] [--repeat 3] [--json-out F]

What issue 60 asks: CONVERT is worth scheduling often only while its verified run costs a
fraction of a verified MERGE (its proof reads keys and delete files: `publish/proofs/deleted_rows.py`,
"deleted rows"). One generated CDC table per size (5% updates, 1% deletes, seed 77) on the
embedded default; every run starts from exactly the generated table (rolled back to its
snapshot; neither job deletes a file). Contenders: `convert --no-verify`, `convert`
(verified), `merge` (verified).
- CLI: each run is `icemaint <job> TABLE --json`, a new process as cron or an operator runs
  it; its wall time from fork to exit, and its `phase_seconds`.
- warm: each run is `run_job` in this process's Spark session, after one unmeasured run of
  every contender: the daemon's path.
Medians of `--repeat` rounds; in each round every contender runs once, in turn, so a slow
spell of the machine falls on all alike. Every verified run must verify.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import compile_package, fresh_embedded, reset_to, write_json

REPO = Path(__file__).resolve().parent.parent
CONTENDERS = [("CONVERT, unverified", "convert", False), ("CONVERT, verified", "convert", True), ("MERGE, verified", "merge", True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="600000:60:4:identity:2,1000000:100:4:identity:2,3000000:200:4:bucket:2,3000000:200:4:bucket:3")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json-out")
    args = parser.parse_args()
    compile_package()
    config, spark = fresh_embedded("convert-proof")
    sizes = []
    for number, size in enumerate(args.sizes.split(",")):
        rows, commits, partitions, partitioning, version = size.split(":")
        sizes.append(measure(config, spark, f"bench.cdc{number}", int(rows), int(commits), int(partitions), partitioning, int(version), args.repeat))
    write_json(args.json_out, {"repeat": args.repeat, "sizes": sizes})


def measure(config, spark, name: str, rows: int, commits: int, partitions: int, partitioning: str, version: int, repeat: int) -> dict:  # type: ignore[no-untyped-def]
    from maintenance.catalogs import parse_table_ref
    from maintenance.run.runner import run_job
    from maintenance.workload.cdc import CdcOptions, run_cdc_workload
    from maintenance.workload.shape import TableShape

    ref = parse_table_ref(name, config)
    started = time.perf_counter()
    generated_result, _ = run_cdc_workload(spark, config, ref, CdcOptions(rows=rows, commits=commits, update_ratio=0.05, delete_ratio=0.01, seed=77,
                                                            shape=TableShape(partitioning, partitions, "single"), format_version=version))
    generate_s = time.perf_counter() - started
    from maintenance.catalogs import load_table

    generated = load_table(config, ref).metadata.current_snapshot_id
    print(f"-- {name}: {rows:,} events, {commits} commits, {partitions} {partitioning}, v{version}, generated in {generate_s:.0f} s", flush=True)

    cli: dict[str, list[dict]] = {label: [] for label, *_ in CONTENDERS}
    warm: dict[str, list[float]] = {label: [] for label, *_ in CONTENDERS}
    counters: dict[str, dict] = {}
    for label, job, verify in CONTENDERS:  # warm-up of this process's session, unmeasured
        reset_to(spark, ref, generated)
        assert run_job(config, ref, job, {}, verify=verify).status == "committed"
    for _ in range(repeat):
        for label, job, verify in CONTENDERS:
            reset_to(spark, ref, generated)
            cli[label].append(cli_run(ref, job, verify))
            reset_to(spark, ref, generated)
            began = time.perf_counter()
            result = run_job(config, ref, job, {}, verify=verify)
            warm[label].append(time.perf_counter() - began)
            assert result.status == "committed" and result.content_verified is not False, (label, result.error)
            counters[label] = {**result.verify_counters, "phase_seconds": result.phase_seconds}
    runs = []
    for label, job, verify in CONTENDERS:
        phases = {phase: statistics.median(run["phase_seconds"][phase] for run in cli[label]) for phase in cli[label][0]["phase_seconds"]}
        runs.append({"contender": label, "job": job, "verified": verify, "cli_s": statistics.median(run["wall_s"] for run in cli[label]),
                     "cli_rounds_s": [run["wall_s"] for run in cli[label]], "cli_phase_seconds": phases,
                     "warm_s": statistics.median(warm[label]), "warm_rounds_s": warm[label], **counters[label]})
    return {"rows": rows, "commits": commits, "partitions": partitions, "partitioning": partitioning, "format_version": version,
            "expected_rows": generated_result.expected_rows, "generate_s": generate_s, "runs": runs}


def cli_run(ref, job: str, verify: bool) -> dict:  # type: ignore[no-untyped-def]
    """One job as its own CLI process: wall time from fork to exit, and its result."""
    command = [sys.executable, "-m", "maintenance", job, str(ref), "--json", *([] if verify else ["--no-verify"])]
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=os.environ.copy(), timeout=3600)
    wall_s = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip().splitlines()[-1:]}")
    result = json.loads(done.stdout)
    assert result["status"] == "committed" and result.get("content_verified") is not False, result
    return {"wall_s": wall_s, "phase_seconds": result["phase_seconds"]}


if __name__ == "__main__":
    main()
