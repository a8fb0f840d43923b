"""What verification costs: each job verified against the same job unverified, on identical tables.

    .venv/bin/python benchmarks/verification.py [--rows 2000000] [--commits 40] [--partitions 64] [--job-repeat 3] [--json-out F]

One CDC table (5% updates, 1% deletes) of `partitions` identity partitions. Contenders:
COMPACT of one partition, MERGE of one partition, and MERGE of the whole table, each run
unverified and verified (`--no-verify` and the default). Every run starts from exactly the
generated table (rolled back to its snapshot; no contender deletes a file), every
contender runs once unmeasured first, and job times are medians of --job-repeat rounds,
each running every contender once in turn. Per verified run: what its verification read
(`verify_data_files`, `verify_bytes`, `verify_share` of both snapshots' data bytes).

Then EXPIRE and ORPHANS, verified, on the same table after a MERGE (expired snapshots to
remove, 1,000 planted orphans to delete): before they run, every live data file is cut to
zero bytes in place (its name, and so every reference, stays). A verification that read a
data file would fail on it; so a verified run that succeeds read none. The bytes each read
are the Spark JVM's Hadoop counters plus this process's own reads (`/proc/self/io`): the
metadata, listing and manifests, beside the data bytes the table holds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from common import fresh_embedded, generate_cdc, io_counters, reset_to, write_json


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--commits", type=int, default=40)
    parser.add_argument("--partitions", type=int, default=64)
    parser.add_argument("--job-repeat", type=int, default=3)
    parser.add_argument("--json-out")
    args = parser.parse_args()

    config, spark = fresh_embedded("verification")
    from maintenance.catalogs import load_table
    from maintenance.run.runner import run_job
    from maintenance.table.files import snapshot_files

    ref, generate_s = generate_cdc(spark, config, "bench.cdc", rows=args.rows, commits=args.commits, partitions=args.partitions, seed=5)
    table = load_table(config, ref)
    generated = table.metadata.current_snapshot_id
    files = snapshot_files(table)
    partition = "region=3"

    jobs = [
        (f"COMPACT {partition}", "compact", {"min_input_files": 2, "partitions": [partition]}),
        (f"MERGE {partition}", "merge", {"partitions": [partition]}),
        ("MERGE whole table", "merge", {}),
    ]
    contenders = [(f"{label}{', verified' if verify else ''}", job, options, verify) for label, job, options in jobs for verify in (False, True)]
    for _, job, options, verify in contenders:  # warm-up, unmeasured
        reset_to(spark, ref, generated)
        run_job(config, ref, job, options, verify=verify)
    times: dict[str, list[float]] = {label: [] for label, *_ in contenders}
    read: dict[str, dict] = {}
    for _ in range(args.job_repeat):
        for label, job, options, verify in contenders:
            reset_to(spark, ref, generated)
            started = time.perf_counter()
            result = run_job(config, ref, job, options, verify=verify)
            times[label].append(time.perf_counter() - started)
            assert result.status == "committed" and result.content_verified is not False, (label, result.status, result.error)
            read[label] = {**result.verify_counters, "data_files_rewritten": result.counters.get("data_files_rewritten", 0)}
    runs = [{"contender": label, "job": job, "verified": verify, "job_s": statistics.median(times[label]), "rounds_s": times[label], **read[label]}
            for label, job, _, verify in contenders]

    reset_to(spark, ref, generated)
    merged = run_job(config, ref, "merge", {}, verify=False)
    assert merged.status == "committed", merged.error
    location = Path(load_table(config, ref).location().replace("file://", "", 1).replace("file:", "", 1))
    old = time.time() - 10 * 86400
    for n in range(1000):
        orphan = location / "data" / "bench-orphans" / f"orphan-{n:04d}.parquet"
        orphan.parent.mkdir(parents=True, exist_ok=True)
        orphan.write_bytes(b"not referenced")
        os.utime(orphan, (old, old))
    live = snapshot_files(load_table(config, ref)).data
    data_bytes = sum(f.size for f in live)
    for f in live:  # cut to zero bytes: a verification that read one would fail on it
        os.truncate(f.path.replace("file://", "", 1).replace("file:", "", 1), 0)
    deleting = []
    for job, options in (("expire", {"max_snapshot_age": 0, "min_snapshots_to_keep": 1}), ("orphans", {"older_than": 86400.0})):
        read_before, _ = io_counters(spark)
        started = time.perf_counter()
        result = run_job(config, ref, job, options, verify=True)
        job_s = time.perf_counter() - started
        read_after, _ = io_counters(spark)
        assert result.status == "committed" and result.content_verified, (job, result.status, result.error)
        deleting.append({"job": job, "job_s": job_s, "mib_read": (read_after - read_before) / 2**20, "files_deleted": result.counters["files_deleted"],
                         **result.verify_counters})
        print(deleting[-1], flush=True)
    write_json(args.json_out, {"rows": args.rows, "commits": args.commits, "partitions": args.partitions, "job_repeat": args.job_repeat,
                               "generate_s": generate_s, "data_files": len(files.data), "delete_files": len(files.deletes),
                               "data_mib": sum(f.size for f in files.data) / 2**20, "runs": runs, "deleting": deleting,
                               "live_data_mib_cut": data_bytes / 2**20, "live_data_files_cut": len(live)})


if __name__ == "__main__":
    main()
