"""ORPHANS at millions of files: time and peak memory of the whole process tree, and, at the
smaller size, side by side with Iceberg's stock `remove_orphan_files` on an identical table.

    .venv/bin/python benchmarks/orphans_scale.py [--orphans 1000000] [--live 100000] [--stock] [--json-out F]

How the input is made cheaply: every file is empty (ORPHANS reads no data file, only
metadata and the listing). The table is metadata-only: pyiceberg appends `--live` data-file
entries that point at empty files (10 commits, so 10 snapshots and manifests), 1,000 files
a folder. The orphans are `--orphans` empty files, 1,000 a folder, beside them; with
`--link-orphans` they are hard links to empty files outside the location (one per 60,000
names): making 10 million files takes the kernel 40 minutes here, linking a sixth of that.
Each link is its own directory entry, listed, stat'ed and unlinked like a file, but the
job runs about a fifth faster on links than on distinct files (20.1 s against 25.9 s at
1,000,000, measured here), so links serve the memory measurement at 10 million, and the
time comparison with stock runs on distinct files. Every file made is dated 10 days back; both contenders run with a margin of one day (`--older-than 1d`;
stock: `older_than` = now less a day, its minimum).

icemaint runs as `icemaint orphans` in its own process (as cron would), verifying (the
default); its peak memory is the peak resident set of that process (from `wait4`), plus any
process below it, sampled every 0.2 s (a JVM would show there). Afterwards the bench checks
that exactly the planted orphans are gone and that every file any retained snapshot
references is still there. Stock runs in this process's Spark session, on its own copy.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from common import write_json
from memory import descendants, peak_tree_mib, run_sampled
from scale_inputs import link_all, referenced_missing, touch

PER_FOLDER = 1_000
LIVE_COMMITS = 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orphans", type=int, default=1_000_000)
    parser.add_argument("--live", type=int, default=100_000)
    parser.add_argument("--stock", action="store_true", help="also run stock remove_orphan_files on an identical table")
    parser.add_argument("--link-orphans", action="store_true", help="orphans as hard links (fast to make; see the module docstring)")
    parser.add_argument("--link-live", action="store_true", help="the live files as hard links too (millions of referenced files)")
    parser.add_argument("--json-out")
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="icemaint-bench-orphans-"))
    os.environ["ICEMAINT_HOME"] = str(home)
    from maintenance.catalogs import get_catalog
    from maintenance.config import parse_config

    config = parse_config({}, source="bench", base_dir=home)
    catalog = get_catalog(config, config.default_catalog)
    contenders = ["icemaint orphans", *(["stock remove_orphan_files"] if args.stock else [])]
    built = {name: build(catalog, f"bench.orphans_{i}", args.live, args.orphans, args.link_orphans, args.link_live) for i, name in enumerate(contenders)}
    rows = []
    for name in contenders:
        table, live_paths, planted_folders = built[name]
        if name.startswith("icemaint"):
            row = run_icemaint(home, f"bench.orphans_{contenders.index(name)}")
        else:
            row = run_stock(config, f"bench.orphans_{contenders.index(name)}")
        row |= check(table, live_paths, planted_folders, args.orphans)
        rows.append({"contender": name, **row})
        print(row, flush=True)
    result = {"live": args.live, "orphans": args.orphans, "linked": args.link_orphans, "live_linked": args.link_live, "contenders": rows, "cpus": os.cpu_count()}
    print_table(result)
    write_json(args.json_out, result)


def build(catalog, name: str, live: int, orphans: int, link: bool, link_live: bool = False):  # type: ignore[no-untyped-def]
    """A metadata-only table of `live` data files and `orphans` empty old files beside them."""
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.schema import Schema
    from pyiceberg.typedef import Record
    from pyiceberg.types import LongType, NestedField

    namespace = name.split(".")[0]
    catalog.create_namespace_if_not_exists(namespace)
    table = catalog.create_table(name, Schema(NestedField(1, "id", LongType(), required=False)), properties={"format-version": "2"})
    root = Path(table.location().removeprefix("file://"))
    started = time.monotonic()
    live_paths = [root / "data" / f"live-{i // PER_FOLDER:05d}" / f"f-{i:07d}.parquet" for i in range(live)]
    if link_live:
        link_all(live_paths, root.parent / f".{root.name}-live-templates")
    else:
        touch(live_paths)
    per_commit = -(-live // LIVE_COMMITS)
    for start in range(0, live, per_commit):
        with table.transaction() as tx, tx.update_snapshot().fast_append() as append:
            for path in live_paths[start : start + per_commit]:
                append.append_data_file(DataFile.from_args(content=DataFileContent.DATA, file_path=f"file://{path}", file_format=FileFormat.PARQUET,
                                                           partition=Record(), record_count=1, file_size_in_bytes=1))
        table = catalog.load_table(name)
    folders = -(-orphans // PER_FOLDER)
    templates = root.parent / f".{root.name}-orphan-templates"  # outside the table location: never listed
    for folder in range(folders):
        base = root / "data" / f"orphan-{folder:05d}"
        names = [base / f"o-{i:04d}.parquet" for i in range(min(PER_FOLDER, orphans - folder * PER_FOLDER))]
        if link:
            link_all(names, templates, start=folder * PER_FOLDER)
        else:
            touch(names)
    print(f"built {name}: {live:,} live, {orphans:,} orphans in {time.monotonic() - started:.0f} s", flush=True)
    return table, live_paths, folders


def run_icemaint(home: Path, name: str) -> dict:  # type: ignore[type-arg]
    import json

    env = {**os.environ, "ICEMAINT_HOME": str(home)}
    env.pop("ICEMAINT_CONFIG", None)
    run = run_sampled([sys.executable, "-m", "maintenance", "orphans", name, "--older-than", "1d", "--json"], env)
    report = json.loads(run["out"])
    assert run["returncode"] == 0 and report["status"] == "committed", run["out"][-2000:]
    return {"seconds": run["seconds"], "listing_s": report["listing_seconds"], "deleted": report["files_deleted"],
            "peak_rss_mib": run["peak_tree_mib"], "process_maxrss_mib": run["own_peak_mib"],
            "sampled_tree_mib": run["sampled_tree_mib"], "processes_below": run["processes_below"],
            "listed_per_s": report["files_listed_per_second"], "deleted_per_s": report["files_deleted_per_second"],
            "references_on_disk": report.get("references_on_disk")}


def run_stock(config, name: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    from maintenance.spark.session import get_spark

    spark = get_spark(config)
    older = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time.time() - 86400))
    started = time.monotonic()
    out = spark.sql(f"CALL local.system.remove_orphan_files(table => '{name}', older_than => TIMESTAMP '{older}')").collect()
    seconds = time.monotonic() - started
    return {"seconds": seconds, "listing_s": None, "deleted": len(out), "peak_rss_mib": peak_tree_mib(),
            "process_maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "sampled_tree_mib": None,
            "processes_below": len(descendants(os.getpid())), "listed_per_s": None, "deleted_per_s": round(len(out) / seconds)}


def check(table, live_paths: list[Path], planted_folders: int, orphans: int) -> dict:  # type: ignore[no-untyped-def,type-arg]
    """Exactly the planted orphans are gone; every file a retained snapshot references is there."""
    root = Path(table.location().removeprefix("file://"))
    orphans_left = sum(len(os.listdir(root / "data" / f"orphan-{f:05d}")) for f in range(planted_folders) if (root / "data" / f"orphan-{f:05d}").exists())
    live_missing = sum(1 for p in live_paths if not p.exists())
    return {"orphans_left": orphans_left, "live_missing": live_missing, "referenced_missing": referenced_missing(table), "orphans_planted": orphans}


def print_table(result: dict) -> None:  # type: ignore[type-arg]
    print("| contender | s | listing s | files deleted | orphans left | referenced files missing | peak RSS MiB (process tree) |")
    print("|---|---|---|---|---|---|---|")
    for row in result["contenders"]:
        listing = f"{row['listing_s']:.1f}" if row["listing_s"] is not None else "n/a"
        print(f"| {row['contender']} | {row['seconds']:.1f} | {listing} | {row['deleted']:,} | {row['orphans_left']:,} | {row['referenced_missing']} | {row['peak_rss_mib']:.0f} |")


if __name__ == "__main__":
    main()
