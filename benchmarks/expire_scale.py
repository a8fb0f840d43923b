"""EXPIRE at a million files: time and peak memory of the whole process tree, icemaint at two
memory budgets against Iceberg's stock `expire_snapshots`, on identical tables.

    .venv/bin/python benchmarks/expire_scale.py [--expired 1000000] [--live 200000] [--json-out F]

How the input is made cheaply: a metadata-only table (pyiceberg commits, no Spark). `--expired`
data-file entries are appended in 10 commits, then deleted in one (pyiceberg's delete of
every row drops whole files from the metadata; no data file is read), then `--live` entries
are appended in 10 more. Every entry's file is a hard link to one empty file outside the
location (1,000 a folder; links are made in a sixth of the time files take, and are
deleted like files). Expiring every snapshot but the current one (`--older-than 0s
--retain-last 1` / `older_than => now, retain_last => 1`) leaves the expired entries' files
referenced by no retained snapshot: each contender must delete exactly them (and the
expired snapshots' manifests and manifest lists), and no live file.

Every contender runs in its own process, started by this one, which samples the resident
memory of that process and everything below it (the JVM) every 0.2 s; icemaint's peak is
also given for its Python process alone (`VmHWM`), since the JVM it starts for the commit is
the same whatever the budget. icemaint verifies (the default).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from common import write_json
from memory import run_sampled
from scale_inputs import link_all, referenced_missing

PER_FOLDER = 1_000
COMMITS = 10
CONTENDERS = [("icemaint (256 MiB budget)", ["--memory-budget", "256MiB"]), ("icemaint (32 MiB budget)", ["--memory-budget", "32MiB"]),
              ("stock expire_snapshots", None)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--expired", type=int, default=1_000_000)
    parser.add_argument("--live", type=int, default=200_000)
    parser.add_argument("--json-out")
    parser.add_argument("--stock-table", help=argparse.SUPPRESS)  # internal: run stock on this table, in this process
    args = parser.parse_args()
    if args.stock_table:
        run_stock_here(args.stock_table)
        return

    home = Path(tempfile.mkdtemp(prefix="icemaint-bench-expire-"))
    os.environ["ICEMAINT_HOME"] = str(home)
    from maintenance.catalogs import get_catalog
    from maintenance.config import parse_config

    config = parse_config({}, source="bench", base_dir=home)
    catalog = get_catalog(config, config.default_catalog)
    rows = []
    for i, (name, flags) in enumerate(CONTENDERS):
        table_name = f"bench.expire_{i}"
        expired_paths, live_paths = build(catalog, table_name, args.expired, args.live)
        command = [sys.executable, "-m", "maintenance", "expire", table_name, "--older-than", "0s", "--retain-last", "1", "--json", *flags] \
            if flags is not None else [sys.executable, __file__, "--stock-table", table_name]
        measured = measure(command, home, python_alone=flags is not None)
        out = measured.pop("out")
        table = catalog.load_table(table_name)
        row = {"contender": name, **measured, **check(table, expired_paths, live_paths)}
        if flags is not None:
            report = json.loads(out)
            assert report["status"] == "committed", report
            row |= {"deleted": report["files_deleted"], "content_files_unreferenced": report["content_files_unreferenced"],
                    "deleted_per_s": report["files_deleted_per_second"]}
        else:
            row |= {"deleted": json.loads(out.strip().splitlines()[-1])["deleted"]}  # after Spark's log lines
        rows.append(row)
        print(json.dumps(row), flush=True)
    result = {"expired": args.expired, "live": args.live, "contenders": rows, "cpus": os.cpu_count()}
    print_table(result)
    write_json(args.json_out, result)


def build(catalog, name: str, expired: int, live: int) -> tuple[list[Path], list[Path]]:  # type: ignore[no-untyped-def]
    """The metadata-only table described in the module docstring; the paths of both kinds."""
    from pyiceberg.expressions import AlwaysTrue
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField

    catalog.create_namespace_if_not_exists(name.split(".")[0])
    table = catalog.create_table(name, Schema(NestedField(1, "id", LongType(), required=False)), properties={"format-version": "2"})
    root = Path(table.location().removeprefix("file://"))
    started = time.monotonic()
    templates = root.parent / f".{root.name}-templates"  # outside the table location
    expired_paths = [root / "data" / f"old-{i // PER_FOLDER:05d}" / f"f-{i:07d}.parquet" for i in range(expired)]
    live_paths = [root / "data" / f"live-{i // PER_FOLDER:05d}" / f"f-{i:07d}.parquet" for i in range(live)]
    link_all([*expired_paths, *live_paths], templates)
    table = _append(catalog, name, expired_paths)
    with table.transaction() as tx, tx.update_snapshot().delete() as delete:
        delete.delete_by_predicate(AlwaysTrue())
    _append(catalog, name, live_paths)
    print(f"built {name}: {expired:,} expired + {live:,} live entries in {time.monotonic() - started:.0f} s", flush=True)
    return expired_paths, live_paths


def _append(catalog, name: str, paths: list[Path]):  # type: ignore[no-untyped-def]
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.typedef import Record

    per_commit = -(-len(paths) // COMMITS)
    for start in range(0, len(paths), per_commit):
        table = catalog.load_table(name)
        with table.transaction() as tx, tx.update_snapshot().fast_append() as append:
            for path in paths[start : start + per_commit]:
                append.append_data_file(DataFile.from_args(content=DataFileContent.DATA, file_path=f"file://{path}", file_format=FileFormat.PARQUET,
                                                           partition=Record(), record_count=1, file_size_in_bytes=1))
    return catalog.load_table(name)


def measure(command: list[str], home: Path, python_alone: bool) -> dict:  # type: ignore[type-arg]
    """Run `command`; its time, stdout, the sampled peak of its process tree, and (where the
    JVM is a child of it, `python_alone`) the peak of its own process."""
    env = {**os.environ, "ICEMAINT_HOME": str(home)}
    env.pop("ICEMAINT_CONFIG", None)
    run = run_sampled(command, env)
    assert run["returncode"] == 0, run["out"][-2000:]
    return {"seconds": run["seconds"], "out": run["out"], "peak_tree_mib": run["peak_tree_mib"],
            "python_peak_mib": run["own_peak_mib"] if python_alone else None}


def run_stock_here(name: str) -> None:
    """Stock `expire_snapshots` in this process's Spark session; prints what it deleted."""
    from maintenance.config import parse_config
    from maintenance.spark.session import get_spark

    config = parse_config({}, source="bench", base_dir=Path(os.environ["ICEMAINT_HOME"]))
    spark = get_spark(config)
    now = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time.time() + 1))
    row = spark.sql(f"CALL local.system.expire_snapshots(table => '{name}', older_than => TIMESTAMP '{now}', retain_last => 1)").collect()[0]
    deleted = sum(int(row[k]) for k in row.asDict() if k.startswith("deleted_"))
    print(json.dumps({"deleted": deleted}))


def check(table, expired_paths: list[Path], live_paths: list[Path]) -> dict:  # type: ignore[no-untyped-def,type-arg]
    """The expired entries' files gone, every live one there, every retained snapshot's files there."""
    left = sum(1 for p in expired_paths if p.exists())
    live_missing = sum(1 for p in live_paths if not p.exists())
    return {"snapshots_left": len(table.snapshots()), "expired_files_left": left, "live_missing": live_missing, "referenced_missing": referenced_missing(table)}


def print_table(result: dict) -> None:  # type: ignore[type-arg]
    print("| contender | s | files deleted | expired files left | live files missing | peak RSS MiB (tree) | Python peak MiB |")
    print("|---|---|---|---|---|---|---|")
    for r in result["contenders"]:
        own = f"{r['python_peak_mib']:.0f}" if r["python_peak_mib"] is not None else "n/a"
        print(f"| {r['contender']} | {r['seconds']:.1f} | {r['deleted']:,} | {r['expired_files_left']:,} | {r['live_missing']:,} | {r['peak_tree_mib']:.0f} | {own} |")


if __name__ == "__main__":
    main()
