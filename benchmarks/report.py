"""`make bench`: run every benchmark and write docs/benchmarks.md.

    .venv/bin/python benchmarks/report.py [--quick] [--out docs/benchmarks.md] [--results-dir D] [--only NAME,... [--splice [--kept]]]

Each benchmark runs in its own process (its own Spark) and hands its measurements back as
JSON; this script only formats them. Ratios compare contenders measured in the same run.
`--quick` runs small sizes, to check the pipeline. With `--results-dir`, the JSON files are
kept there, and `--only` reruns the named benchmarks and formats them with the others'
kept results (the document says which ran when). `--only NAMES --splice` writes only the
sections those benchmarks feed (`SPLICED`) into the existing document, each replacing the
section of its title and saying when and at which commit it was measured; every other line
of the document stays as it is, so one section can be measured again without the others'
results. `--kept` splices results a run of the benchmark already left in `--results-dir`
(a long one, run by hand), running nothing; the section says when each ran where its JSON
says (`started_utc`, `commit`).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
from benchmarks.common import commit  # noqa: E402

FULL = {
    "compaction": ["--sizes", "1000000:100:identity,1000000:50:none,3000000:200:bucket", "--repeat", "3", "--job-repeat", "5"],
    "compaction_v3": ["--sizes", "3000000:200:bucket:3", "--repeat", "3", "--job-repeat", "5"],
    "compact": ["--rows", "1000000", "--commits", "500", "--partitions", "4", "--target-mib", "4", "--repeat", "7", "--job-repeat", "5"],
    "scaling": ["--partitions", "500", "--commits", "20", "--rows", "1000000"],
    "manifests": ["--commits", "1000", "--rows", "200000", "--repeat", "3", "--job-repeat", "5"],
    "verification": ["--rows", "2000000", "--commits", "40", "--partitions", "64", "--job-repeat", "5"],
    "scan_planning": ["--rows", "400000", "--commits", "40", "--partitions", "256", "--repeat", "7"],
    "orphans": ["--files", "10000", "--repeat", "3"],
    "orphans_1m": ["--orphans", "1000000", "--live", "100000", "--stock"],
    "orphans_10m": ["--orphans", "10000000", "--live", "100000", "--link-orphans"],
    "orphans_1m_live": ["--orphans", "1000000", "--live", "1000000", "--link-orphans", "--link-live"],
    "expire_1m": ["--expired", "1000000", "--live", "200000"],
    "planning": ["--tables", "200", "--repeat", "3"],
    "daemon_memory": ["--samples", "5"],
    "lease_throughput": ["--clients", "8", "--seconds", "10"],
    "ui": ["--tables", "1000", "--repeat", "20", "--table-runs", "100"],
    "fleet": ["--tables", "10000"],
    "fleet_s3": ["--tables", "2000", "--s3-latency-ms", "20"],
    "object_store": ["--rows", "200000", "--commits", "40", "--partitions", "8", "--latencies", "0,5,20", "--fleet", "100"],
    "convert_proof": ["--repeat", "3"],
    "cron_fleet": ["--tables", "2000"],
    "cron_fleet_10k": ["--tables", "10000"],
    "cron_fleet_rest": ["--tables", "2000", "--catalog", "rest"],
    "cron_fleet_rest_10k": ["--tables", "10000", "--catalog", "rest"],
    "under_writers_v2": ["--minutes", "10", "--format-version", "2", "--rows", "200000", "--commits", "20", "--partitions", "64"],
    "under_writers_v3": ["--minutes", "10", "--format-version", "3", "--rows", "200000", "--commits", "20", "--partitions", "64"],
    "under_writers_hot_off": ["--minutes", "10", "--format-version", "2", "--rows", "200000", "--commits", "20", "--partitions", "64", "--hot-partitions", "8"],
    "under_writers_hot_v2": ["--minutes", "10", "--format-version", "2", "--rows", "200000", "--commits", "20", "--partitions", "64", "--hot-partitions", "8",
                             "--defer-hot-window", "2m", "--writer-lead-s", "60"],
    "under_writers_hot_v3": ["--minutes", "10", "--format-version", "3", "--rows", "200000", "--commits", "20", "--partitions", "64", "--hot-partitions", "8",
                             "--defer-hot-window", "2m", "--writer-lead-s", "60"],
    "under_flink": ["--minutes", "10", "--checkpoint-interval", "5", "--rows", "300000", "--partitions", "16", "--every-s", "60"],
    "native_peer": ["--repeat", "3"],
    "scan_reports": ["--rows", "100000", "--commits", "20", "--scans", "200", "--warmup", "30", "--repeat", "3"],
    "budget_fleet": ["--minutes", "30", "--budget-part", "0.2"],
    "budget_fleet_skewed": ["--minutes", "30", "--budget-part", "0.2", "--hot-writes-every", "5"],
}
SCRIPTS = {"under_writers_v2": "under_writers", "under_writers_v3": "under_writers", "under_writers_hot_off": "under_writers",
           "under_writers_hot_v2": "under_writers", "under_writers_hot_v3": "under_writers", "fleet_s3": "fleet", "compaction_v3": "compaction", "orphans_1m": "orphans_scale", "orphans_10m": "orphans_scale", "orphans_1m_live": "orphans_scale", "expire_1m": "expire_scale",
           "cron_fleet_10k": "cron_fleet", "cron_fleet_rest": "cron_fleet", "cron_fleet_rest_10k": "cron_fleet",
           "budget_fleet_skewed": "budget_fleet"}  # entries run by another entry's script, with their own sizes
QUICK = {
    "compaction": ["--sizes", "20000:10:identity,10000:5:none", "--repeat", "1", "--job-repeat", "2"],
    "compaction_v3": ["--sizes", "20000:10:bucket:3", "--repeat", "1", "--job-repeat", "1"],
    "compact": ["--rows", "20000", "--commits", "20", "--partitions", "2", "--target-mib", "0.05", "--repeat", "1", "--job-repeat", "2"],
    "scaling": ["--partitions", "20", "--commits", "3", "--rows", "6000"],
    "manifests": ["--commits", "20", "--rows", "2000", "--repeat", "1"],
    "verification": ["--rows", "20000", "--commits", "5", "--partitions", "8", "--job-repeat", "1"],
    "scan_planning": ["--rows", "6000", "--commits", "3", "--partitions", "8", "--repeat", "1"],
    "orphans": ["--files", "400", "--repeat", "1"],
    "orphans_1m": ["--orphans", "3000", "--live", "500", "--stock"],
    "orphans_10m": ["--orphans", "5000", "--live", "500", "--link-orphans"],
    "orphans_1m_live": ["--orphans", "3000", "--live", "6000", "--link-orphans", "--link-live"],
    "expire_1m": ["--expired", "3000", "--live", "500"],
    "planning": ["--tables", "5", "--repeat", "1"],
    "daemon_memory": ["--samples", "1"],
    "lease_throughput": ["--clients", "2", "--seconds", "2"],
    "ui": ["--tables", "200", "--repeat", "3", "--table-runs", "30"],
    "fleet": ["--tables", "50"],
    "fleet_s3": ["--tables", "30", "--s3-latency-ms", "20"],
    "object_store": ["--rows", "6000", "--commits", "4", "--partitions", "2", "--latencies", "0,20", "--fleet", "5"],
    "convert_proof": ["--sizes", "20000:5:2:identity:2,20000:5:2:bucket:3", "--repeat", "1"],
    "cron_fleet": ["--tables", "30"],
    "cron_fleet_10k": ["--tables", "60"],
    "cron_fleet_rest": ["--tables", "20", "--catalog", "rest"],
    "cron_fleet_rest_10k": ["--tables", "40", "--catalog", "rest"],
    "under_writers_v2": ["--minutes", "1", "--format-version", "2", "--rows", "10000", "--commits", "4", "--partitions", "8"],
    "under_writers_v3": ["--minutes", "1", "--format-version", "3", "--rows", "10000", "--commits", "4", "--partitions", "8"],
    "under_writers_hot_off": ["--minutes", "1", "--format-version", "2", "--rows", "10000", "--commits", "4", "--partitions", "8", "--hot-partitions", "2"],
    "under_writers_hot_v2": ["--minutes", "1", "--format-version", "2", "--rows", "10000", "--commits", "4", "--partitions", "8", "--hot-partitions", "2",
                             "--defer-hot-window", "2m", "--writer-lead-s", "30"],
    "under_writers_hot_v3": ["--minutes", "1", "--format-version", "3", "--rows", "10000", "--commits", "4", "--partitions", "8", "--hot-partitions", "2",
                             "--defer-hot-window", "2m", "--writer-lead-s", "30"],
    "under_flink": ["--minutes", "1.5", "--checkpoint-interval", "3", "--rows", "9000", "--partitions", "4", "--every-s", "20"],
    "native_peer": ["--sizes", "20000:5:2:identity:2,20000:5:2:bucket:3", "--appends", "4000:10:2", "--repeat", "1"],
    "scan_reports": ["--rows", "5000", "--commits", "4", "--scans", "10", "--warmup", "3", "--repeat", "1"],
    "budget_fleet": ["--minutes", "2", "--budget-part", "0.2"],
    "budget_fleet_skewed": ["--minutes", "2", "--budget-part", "0.2", "--hot-writes-every", "2"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=str(REPO / "docs" / "benchmarks.md"))
    parser.add_argument("--results-dir", help="keep each benchmark's JSON here (and its run time, in seconds.json)")
    parser.add_argument("--only", help="comma-separated benchmarks to run; the others' results are read from --results-dir")
    parser.add_argument("--splice", action="store_true", help="with --only: write only the sections they feed into the existing --out")
    parser.add_argument("--kept", action="store_true", help="with --splice: the results already in --results-dir, nothing run")
    args = parser.parse_args()
    plan = QUICK if args.quick else FULL
    only = set(args.only.split(",")) if args.only else set(plan)
    if args.splice:
        if not args.only:
            parser.error("--splice needs --only")
        fed = {name for names, _ in SPLICED.values() for name in names}
        if only - fed:
            parser.error(f"--splice writes only the sections of {', '.join(sorted(fed))}")
        if args.kept and not args.results_dir:
            parser.error("--kept needs --results-dir")
        splice(args.out, only, plan, Path(args.results_dir) if args.results_dir else None, quick=args.quick, kept=args.kept)
        return
    if only - set(plan) or (args.only and not args.results_dir):
        parser.error(f"--only takes names from {', '.join(plan)}, with --results-dir")
    with tempfile.TemporaryDirectory(prefix="icemaint-bench-") as scratch:
        folder = Path(args.results_dir or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        seconds_file = folder / "seconds.json"
        seconds = json.loads(seconds_file.read_text()) if args.only and seconds_file.exists() else {}
        results = {}
        for name, options in plan.items():
            out = folder / f"{name}.json"
            if name in only:
                seconds[name] = run_benchmark(name, options, out)
                seconds_file.write_text(json.dumps(seconds))
            results[name] = json.loads(out.read_text())
    text = render(results, seconds, plan, quick=args.quick)
    Path(args.out).write_text(text)
    print(f"wrote {args.out} ({sum(seconds.values()) / 60:.1f} min)")


def run_benchmark(name: str, options: list[str], out: Path) -> float:
    """One benchmark in a process of its own, its JSON into `out`: its seconds."""
    print(f"== {name} {' '.join(options)}", flush=True)
    started = time.monotonic()
    script = HERE / f"{SCRIPTS.get(name, name)}.py"
    subprocess.run([sys.executable, str(script), *options, "--json-out", str(out)], check=True, cwd=REPO)
    return time.monotonic() - started


def splice(out: str, only: set[str], plan: dict, results_dir: Path | None, *, quick: bool, kept: bool = False) -> None:
    """Run `only`, then write the sections they feed into the document at `out`: each
    replaces the section of its title (or is added at the end), the rest of the text kept.
    A section's other benchmarks are read from `results_dir` when there, else left out."""
    with tempfile.TemporaryDirectory(prefix="icemaint-bench-") as scratch:
        folder = results_dir or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for name in [n for n in plan if n in only and not kept]:
            run_benchmark(name, plan[name], folder / f"{name}.json")
        text = Path(out).read_text() if Path(out).exists() else "# Benchmarks\n"
        for title, (names, render_section) in SPLICED.items():
            if not only & set(names):
                continue
            results = {n: json.loads((folder / f"{n}.json").read_text()) for n in names if (folder / f"{n}.json").exists()}
            measured = (f"Measured on {datetime.date.today().isoformat()} at commit {commit()} by `benchmarks/report.py"
                        f"{' --quick' if quick else ''} --only {','.join(n for n in names if n in results)} --splice`, apart from the run the "
                        "top of this document describes.")
            if kept:
                when = [f"`{n}` {r['started_utc']} UTC at commit {r['commit']}" for n, r in results.items() if r.get("started_utc") and r.get("commit")]
                measured = (f"Written on {datetime.date.today().isoformat()} by `benchmarks/report.py{' --quick' if quick else ''} --only "
                            f"{','.join(n for n in names if n in results)} --splice --kept` from runs of the benchmark kept before"
                            f"{': ' + '; '.join(when) if when else ''}; apart from the run the top of this document describes.")
            text = replace_section(text, title, render_section(results, plan, measured))
    Path(out).write_text(text)
    print(f"wrote {', '.join(t for t, (names, _) in SPLICED.items() if only & set(names))} into {out}")


def replace_section(text: str, title: str, section_lines: list[str]) -> str:
    """`text` with its `## title` section (up to the next `## ` heading) replaced."""
    lines = text.rstrip("\n").split("\n")
    new = section_lines[1:] if section_lines and section_lines[0] == "" else section_lines
    heading = f"## {title}"
    if heading not in lines:
        return "\n".join([*lines, "", *new]) + "\n"
    start = lines.index(heading)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    tail = ["", *lines[end:]] if end < len(lines) else []
    return "\n".join([*lines[:start], *new, *tail]) + "\n"


def render(results: dict, seconds: dict, plan: dict, *, quick: bool) -> str:
    lines = ["# Benchmarks", ""]
    lines += [f"Written by `make bench` (`benchmarks/report.py`{' --quick' if quick else ''}) on {datetime.date.today().isoformat()}. "
              "Every number below was measured by that run; ratios compare contenders measured in it, on identical tables.", ""]
    lines += ["| machine | |", "|---|---|"]
    for key, value in machine().items():
        lines.append(f"| {key} | {value} |")
    lines += ["", f"Run time: {sum(seconds.values()) / 60:.1f} min ({', '.join(f'{k} {v / 60:.1f}' for k, v in seconds.items())})."]

    c = results["compaction"]
    lines += ["", "## Delete compaction against the stock procedures", "",
              "Generated CDC tables (5% updates, 1% deletes), one identical table per contender, from one seed (`benchmarks/compaction.py "
              + " ".join(plan["compaction"]) + "`).",
              f"Job times are medians of {c.get('job_repeat', 1)} rounds; in each round every contender runs once, in turn, on its own table put "
              "back to its generated snapshot (REWRITE follows CONVERT's commit), so a slow spell of the machine falls on every contender alike. "
              f"Full-scan and point-lookup times are medians of {c['repeat']} runs; MiB read and written are the Spark JVM's Hadoop file-system counters around the job plus the "
              "Python process's own reads and writes as the kernel counts them (`/proc/self/io`: pyiceberg's metadata reads, CONVERT's "
              "driver engine), so no byte read in either process goes uncounted.",
              "Every contender's content was verified equal to the table's before maintenance."]
    v3 = results.get("compaction_v3", {}).get("sizes", [])
    if v3:
        lines += ["", "The last table is written as format 3 (`benchmarks/compaction.py " + " ".join(plan["compaction_v3"]) + "`): the same "
                  "change events, with deletion vectors where v2 writes position delete files; CONVERT writes one DV per data file."]
    for size in [*c["sizes"], *v3]:
        stock = next(j for j in size["jobs"] if j["job"].startswith("stock rewrite_data_files"))
        layout = "unpartitioned" if size["partitioning"] == "none" else f"{size['partitions']} partitions ({size['partitioning']})"
        version = size.get("format_version", 2)
        lines += ["", f"### {size['rows']:,} change events, {size['commits']} commits, {layout}, format v{version}: {size['expected_rows']:,} rows", "",
                  "| job | s | × stock rewrite_data_files time | MiB read | MiB written | snapshots added | data files | equality deletes left | "
                  "position delete files left (most in a partition) | deletion vectors left |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for j in size["jobs"]:
            lines.append(f"| {j['job']} | {j['job_s']:.1f} | {j['job_s'] / stock['job_s']:.2f} | {j['mib_read']:.1f} | {j['mib_written']:.1f} | "
                         f"{j['snapshots_added']} | {j['data_files']} | {j['equality_delete_files']} | {j['position_delete_files']} "
                         f"({j['max_position_delete_files_per_partition']}) | {j.get('deletion_vectors', 0)} |")
        convert = next(j for j in size["jobs"] if j["job"] == "icemaint CONVERT")
        merge = next(j for j in size["jobs"] if j["job"] == "icemaint MERGE")
        needed = size["convert"]["key_mib"] + size["convert"]["delete_mib"]
        engine = size["convert"].get("engine")
        lines += ["", f"CONVERT ÷ MERGE time: **{convert['job_s'] / merge['job_s']:.2f}**"
                  + (f" (CONVERT found the positions {'in the driver' if engine == 'driver' else 'with Spark'})" if engine else "")
                  + f". CONVERT read {convert['mib_read']:.1f} MiB: "
                  f"{convert['mib_read'] / needed:.1f}× the key columns of the files it scanned ({size['convert']['key_mib']:.1f} MiB of "
                  f"{size['convert']['data_mib']:.1f} MiB, by their column sizes) plus the delete files it read and removed "
                  f"({size['convert']['delete_mib']:.1f} MiB: the equality deletes and the position delete files folded in)."]
        before = size["stages"][0]
        lines += ["", "| table state | full scan s | × before | point lookup ms | × before | equality / position delete files / DVs |", "|---|---|---|---|---|---|"]
        for s in size["stages"]:
            lines.append(f"| {s['stage']} | {s['scan_s']:.2f} | {s['scan_s'] / before['scan_s']:.2f} | {s['lookup_ms']:.0f} | "
                         f"{s['lookup_ms'] / before['lookup_ms']:.2f} | {s['equality_delete_files']} / {s['position_delete_files']} / {s.get('deletion_vectors', 0)} |")

    lines += format_3_summary(c["sizes"], v3)
    lines += compact_section(results["compact"], plan["compact"])
    lines += scaling_section(results["scaling"], plan["scaling"])
    lines += manifests_section(results["manifests"], plan["manifests"])
    lines += verification_section(results["verification"], results["manifests"], plan["verification"])
    lines += scan_planning_section(results["scan_planning"], plan["scan_planning"])

    o = results["orphans"]
    ice = next(r for r in o["contenders"] if r["contender"].startswith("icemaint"))
    lines += ["", "## Orphan cleanup", "",
              f"A table with {o['live']:,} live data files and {o['orphans']:,} old orphans beside them; fresh tables per run, medians of {o['repeat']} "
              "(`benchmarks/orphans.py`).", "",
              "| contender | files under location | listing s | total s | × icemaint | files deleted |", "|---|---|---|---|---|---|"]
    for r in o["contenders"]:
        listing = f"{r['listing_s']:.2f}" if r["listing_s"] is not None else "n/a"
        lines.append(f"| {r['contender']} | {r['files']:,} | {listing} | {r['total_s']:.2f} | {r['total_s'] / ice['total_s']:.1f} | {r['deleted']:,} |")

    lines += orphans_scale_section(results["orphans_1m"], [results[k] for k in ("orphans_10m", "orphans_1m_live")], plan["orphans_1m"],
                                   [plan[k] for k in ("orphans_10m", "orphans_1m_live")])
    lines += expire_scale_section(results["expire_1m"], plan["expire_1m"])

    p, d, lt = results["planning"], results["daemon_memory"], results["lease_throughput"]
    lines += section(
        "Planning without Spark",
        f"`health` and `plan` over {p['tables']} generated tables in a process that never starts a JVM (JVM started: {p['jvm_started']}); "
        "medians of the repeats (`benchmarks/planning.py`).",
        ["what", "per table"],
        [["health (metadata and manifests)", f"{p['health_ms_per_table']:.1f} ms"],
         [f"plan (health, policies, run history, ranking; {p['due']} jobs due)", f"{p['plan_ms_per_table']:.1f} ms"]],
    )
    lines += section(
        "Daemon memory",
        f"Resident memory of `icemaint daemon`'s whole process tree, median of {d['samples']} samples (`benchmarks/daemon_memory.py`).",
        ["state", "MiB"],
        [["idle, Spark stopped", f"{d['idle_spark_stopped_mib']:.0f}"], ["after a MERGE, Spark started", f"{d['spark_started_mib']:.0f}"]],
    )
    lines += section(
        "Lease throughput on PostgreSQL",
        f"{lt['clients']} client processes, {lt['seconds']:.0f} s per scenario; a cycle is acquire + renew + release (`benchmarks/lease_throughput.py`).",
        ["scenario", "cycles/s", "refused/s", "p50 ms", "p99 ms"],
        [[s["scenario"], f"{s['cycles_per_s']:.0f}", f"{s['refused_per_s']:.0f}", f"{s['p50_ms']:.1f}", f"{s['p99_ms']:.1f}"] for s in lt["scenarios"]],
    )
    lines += ui_section(results["ui"], plan["ui"])
    lines += fleet_section(results["fleet"], plan["fleet"])
    lines += fleet_s3_section(results["fleet_s3"], plan["fleet_s3"])
    lines += object_store_section(results["object_store"], plan["object_store"])
    lines += cron_section({name: results[name] for name in CRON}, plan)
    lines += convert_proof_section(results, plan)
    lines += under_writers_section([results[k] for k in ("under_writers_v2", "under_writers_v3")], plan["under_writers_v2"])
    lines += hot_partitions_section([results[k] for k in ("under_writers_hot_off", "under_writers_hot_v2", "under_writers_hot_v3")],
                                    plan["under_writers_hot_v2"])
    lines += under_flink_section(results, plan)
    lines += native_peer_section(results, plan)
    lines += scan_reports_section(results, plan)
    lines += budget_fleet_section(results, plan)
    return "\n".join(lines) + "\n"


def under_writers_section(runs: list[dict], options: list[str]) -> list[str]:
    """MERGE and COMPACT by the daemon under two steady writers, per format version."""
    rows = []
    for r in runs:
        jobs = under_writers_jobs(r["runs"])
        planned = sum(j["groups_planned"] for j in jobs.values() if j["name"] in ("merge", "compact"))
        rewritten = sum(j["groups_rewritten"] for j in jobs.values() if j["name"] in ("merge", "compact"))
        w, c = r["writers"], r["content"]
        for j in jobs.values():
            statuses = ", ".join(f"{n} {s}" for s, n in sorted(j["statuses"].items()))
            rows.append([f"v{r['format_version']}", j["name"].upper(), statuses, f"{j['groups_planned']}", f"{j['groups_rewritten']}", f"{j['groups_refused']}",
                         f"{j['rows_rebased']:,} / {j['deletes_rebased']}"])
        rows.append([f"v{r['format_version']}", "all MERGE and COMPACT", "", f"{planned}", f"**{rewritten}** ({rewritten / planned:.0%})" if planned else "0", "", ""])
        rows.append([f"v{r['format_version']}", "writers", f"{w['statements']} statements, {w['cdc_commits']} CDC commits", "", "",
                     f"statements refused: **{w['statement_failures']}** (given up: {w['statements_given_up']}); CDC commits failed: {w['cdc_failures']}", ""])
        rows.append([f"v{r['format_version']}", "content", f"{c['rows']:,} rows; model {c['model_rows']:,}", "", "",
                     f"only in the table: **{c['only_in_table']}**, only in the model: **{c['only_in_model']}**", ""])
    first = runs[0]
    return section(
        "Under writers",
        f"A CDC table of {first['rows']:,} change events in {first['commits']} commits over {first['partitions']} partitions and its untouched twin, "
        f"written for {first['minutes']:g} minutes by a merge-on-read SQL writer (UPDATE or DELETE of 8 random keys every 2 s: position deletes on v2, "
        "DVs on v3) and a CDC writer (400 upserts and deletes every 2 s, equality deletes), each change applied to both tables in turn, while "
        "`icemaint daemon` maintains one of them with the default policy's MERGE, COMPACT and REWRITE triggers (`every` 1 minute; interval 20 s; "
        f"verification on) (`benchmarks/under_writers.py {' '.join(options)}`, and `--format-version 3`). The twin is the model of both writers: "
        "the tables are compared row for row (EXCEPT ALL both ways) at the end. \"rebased\": rows a writer deleted meanwhile in files a run "
        "replaced, carried over to the files it wrote, and the delete files that carried them (`maintenance/jobs/file_groups/rebase.py`). A writer "
        "statement Iceberg refuses (icemaint's commit replaced a file it had read) is counted and run again.",
        ["format", "what", "runs", "groups planned", "groups committed", "groups refused", "rows / delete files rebased"],
        rows,
    )


def hot_partitions_section(runs: list[dict], options: list[str]) -> list[str]:
    """The same bench with the SQL writer on a few partitions, without and with hot-partition deferral."""
    rows = []
    for r in runs:
        jobs = [j for j in under_writers_jobs(r["runs"]).values() if j["name"] in ("merge", "compact")]
        w, c = r["writers"], r["content"]
        planned, rewritten = sum(j["groups_planned"] for j in jobs), sum(j["groups_rewritten"] for j in jobs)
        deferred = sorted({p for j in jobs for p in j["hot_partitions"]})
        rows.append([f"v{r['format_version']}", r.get("defer_hot_window") or "off", f"{r.get('writer_lead_s') or 0:g}", "; ".join(f"{j['name']} " + ", ".join(f"{n} {st}" for st, n in sorted(j["statuses"].items())) for j in jobs), f"{planned}",
                     f"{rewritten}", f"{sum(j['partitions_deferred_hot'] for j in jobs)} ({len(deferred)} distinct)",
                     f"**{w['statement_failures']}** of {w['statements']}", f"{c['only_in_table']} / {c['only_in_model']}"])
    first = runs[0]
    return section(
        "Under writers, hot partitions deferred",
        f"The bench above, but the merge-on-read SQL writer's keys come from {first['hot_partitions']} of the {first['partitions']} partitions "
        "(late corrections to recent days); the CDC writer still writes everywhere. Without deferral, then with MERGE's and COMPACT's "
        f"`defer_hot_window` (`benchmarks/under_writers.py {' '.join(options)}`, and `--format-version 3`; without: no `--defer-hot-window` "
        "and no lead). With a lead, the writers start that long before the daemon, so its first run meets them already running. "
        "\"partitions deferred\": summed over the runs (a partition is counted once per run that left it); content: rows only in the table / "
        "only in the model.",
        ["format", "defer_hot_window", "writers' lead s", "runs", "groups planned", "groups committed", "partitions deferred", "writer statements refused", "content diff"],
        rows,
    )


def under_writers_jobs(runs: list[dict]) -> dict[str, dict]:
    """Per job: runs by status and the file groups' counters summed (the daemon's run records)."""
    jobs: dict[str, dict] = {}
    for run in runs:
        job = jobs.setdefault(run["job"], {"name": run["job"], "statuses": {}, "runs": 0, "groups_planned": 0, "groups_rewritten": 0, "groups_refused": 0,
                                           "rows_rebased": 0, "deletes_rebased": 0, "partitions_deferred_hot": 0, "hot_partitions": set()})
        job["statuses"][run["status"]] = job["statuses"].get(run["status"], 0) + 1
        job["runs"] += 1
        counters = run.get("counters") or {}
        for key in ("groups_planned", "groups_rewritten", "groups_refused", "rows_rebased", "deletes_rebased", "partitions_deferred_hot"):
            job[key] += int(counters.get(key, 0))
        job["hot_partitions"].update(counters.get("hot_partitions_deferred") or ())
    return jobs


def orphans_scale_section(one: dict, larger: list[dict], one_options: list[str], larger_options: list[list[str]]) -> list[str]:
    """ORPHANS at a million and ten million files, and beside millions of referenced ones:
    time, the process tree's peak memory, and exactly the planted orphans gone."""
    ice = next(r for r in one["contenders"] if r["contender"].startswith("icemaint"))
    rows = []
    for result in (one, *larger):
        for r in result["contenders"]:
            made = "links" if result.get("linked") else "files"
            live = "live links" if result.get("live_linked") else "live"
            rows.append([r["contender"], f"{result['orphans']:,} orphan {made} + {result['live']:,} {live}", f"{r['seconds']:.1f}",
                         f"{r['seconds'] / ice['seconds']:.2f}" if result is one else "", f"{r['listing_s']:.1f}" if r["listing_s"] is not None else "n/a",
                         f"{r['deleted']:,}", f"{r['orphans_left']:,}", f"{r['referenced_missing']:,}", f"{r['peak_rss_mib']:.0f}", str(r["processes_below"])])
    return section(
        "Orphan cleanup at millions of files",
        "Empty files (or hard links to empty files: see `benchmarks/orphans_scale.py`), dated 10 days back, 1,000 a folder; the table is metadata-only (pyiceberg appends of data-file entries pointing at empty "
        "files, in 10 commits), so nothing is read but metadata and the listing. icemaint runs as `icemaint orphans --older-than 1d` in its own "
        "process, verifying; its peak memory is that process's peak resident set (`wait4`) or the sampled sum over its process tree, whichever is "
        "larger (processes below it: a JVM would show). Stock `remove_orphan_files` runs in the bench's Spark session on an identical table; its "
        "peak is the sum of the peak resident sets of the bench's Python and JVM. After each run every retained snapshot's files are checked "
        f"to exist (`benchmarks/orphans_scale.py {' '.join(one_options)}`" + "".join(f", `{' '.join(o)}`" for o in larger_options) + "; one run each). "
        "With 1,000,000 referenced files the referenced paths pass half the default budget and move to a temporary SQLite file (`table/key_set.py`).",
        ["contender", "files", "s", "× icemaint", "listing s", "files deleted", "orphans left", "referenced files missing", "peak RSS MiB",
         "processes below"],
        rows,
    )


def expire_scale_section(result: dict, options: list[str]) -> list[str]:
    """EXPIRE at a million files of expired snapshots: icemaint at two budgets against stock."""
    ice = result["contenders"][0]
    rows = [[r["contender"], f"{r['seconds']:.1f}", f"{r['seconds'] / ice['seconds']:.2f}", f"{r['deleted']:,}", f"{r['expired_files_left']:,}",
             f"{r['live_missing'] + r['referenced_missing']:,}", f"{r['peak_tree_mib']:.0f}",
             f"{r['python_peak_mib']:.0f}" if r["python_peak_mib"] is not None else "n/a"] for r in result["contenders"]]
    return section(
        "Expiry at a million files",
        f"A metadata-only table: {result['expired']:,} data-file entries appended in 10 commits and deleted in one, then {result['live']:,} "
        "appended in 10 more, each entry's file a hard link to an empty file (`benchmarks/expire_scale.py "
        f"{' '.join(options)}`; one run each, an identical table per contender). Every snapshot but the current one expires; each contender "
        "must delete exactly the expired entries' files and the expired manifests and manifest lists. Each runs in its own process; its peak is "
        "the sampled resident memory of that process and everything below it (icemaint's JVM starts for the commit, stock's is its driver), and "
        "for icemaint also its Python process alone. Files missing: live files or files of a retained snapshot, checked afterwards.",
        ["contender", "s", "× icemaint (256 MiB)", "files deleted", "expired files left", "files missing", "peak RSS MiB (tree)", "Python peak MiB"],
        rows,
    )


def _cycle_rows(f: dict) -> list[list[str]]:
    """A fleet's cold, warm and check cycles (`benchmarks/fleet.py`), for both fleet sections."""
    return [["cold cycle", f"{f['first_s']:.1f} s ({f['first_ms_per_table']:.1f} ms a table)"],
            ["warm cycle (1% changed)", f"{f['warm_s']:.2f} s: **{f['warm_over_cold']:.3f}** x cold; {f['warm_reused']:,} tables reused"],
            ["cold check at the warm cycle's time", f"{f['check_s']:.1f} s; same decisions: {f['check_same_decisions']} ({f['decisions']:,} decisions)"]]


def fleet_section(f: dict, options: list[str]) -> list[str]:
    """A daemon's evaluation cycle over a whole fleet: cold, then warm with 1% of the tables changed."""
    return section(
        "fleet",
        f"{f['tables']:,} small tables made by `icemaint workload fleet` (pyiceberg appends, no Spark: 3 commits of 100 rows in 2 partitions each; "
        f"{'made in ' + format(f['generate_s'], '.0f') + ' s' if f['tables_created'] else 'made before this run, which found them'}; "
        f"SQL catalog on SQLite, local disk), evaluated as the daemon evaluates, in a fresh process that never "
        f"starts a JVM (`benchmarks/fleet.py {' '.join(options)}`; JVM started: {f['jvm_started']}): a cold cycle, then {f['tables_changed']:,} "
        "tables (one in 100) get one more commit, then a warm cycle, which reads again only the tables whose metadata location moved "
        "(`maintenance/schedule/kept.py`) and the run histories of tables whose runs moved (`maintenance/schedule/histories.py`). Then a "
        "cold evaluation at the warm cycle's very time, nothing kept, as a check: its decisions (table, job, due) must be the warm cycle's.",
        ["what", "value"],
        [*_cycle_rows(f),
         ["jobs due", f"{f['due']:,}"], ["peak RSS of the process (every table's evaluation kept)", f"{f['peak_rss_mib']:.0f} MiB"],
         *([[f"cold cycle reading one table at a time, against {f['metadata_reads']} at once", f"{f['serial_s']:.1f} s; same decisions: {f['serial_same_decisions']}"]]
           if "serial_s" in f else []),
         ["sharing daemons, PostgreSQL state: one alone, cold cycle", f"{f['shared_one_s']:.1f} s"],
         ["two at once, each its share (`maintenance/schedule/membership.py`)",
          f"{f['shared_two_s']:.1f} s (the slower; {' and '.join(f'{n:,}' for n in f['shared_two_tables'])} tables): **{f['shared_two_over_one']:.2f}** x one; "
          f"every table evaluated exactly once: {f['shared_every_table_once']}"]],
    )


def fleet_s3_section(f: dict, options: list[str]) -> list[str]:
    """The fleet on an object store far away: every request costs the latency."""
    return section(
        "fleet on S3 with latency",
        f"{f['tables']:,} tables made by the same generator (with {f.get('generate_workers', 4)} threads, in {f['generate_s']:.0f} s) on an S3 server (SeaweedFS, "
        f"started by the benchmark), then evaluated through a proxy that adds {f['latency_ms']:g} ms to every request "
        f"(`benchmarks/latency_proxy.py`; `benchmarks/fleet.py {' '.join(options)}`). The catalog is a SQL catalog on SQLite, so a warm cycle "
        "learns every table's metadata location in one query. Cold, warm (1% changed) and the cold check as in the section above; the cold cycle "
        f"reads {f['metadata_reads']} tables at once (`metadata_reads`, `maintenance/schedule/overlap.py`), and it is compared with one reading one "
        "table at a time. pyiceberg keeps the last 128 manifest lists it read, so the later cold cycles find a few of them read already.",
        ["what", "value"],
        [*_cycle_rows(f),
         [f"cold cycle reading one table at a time, against {f['metadata_reads']} at once", f"{f['serial_s']:.1f} s ({f['serial_s'] / f['check_s']:.1f} x the cold check); "
          f"same decisions: {f['serial_same_decisions']}"],
         ["peak RSS of the process", f"{f['peak_rss_mib']:.0f} MiB; JVM started: {f['jvm_started']}"]],
    )


S3_KINDS = ("GET", "HEAD", "LIST", "PUT", "POST", "DELETE")


def object_store_section(o: dict, options: list[str]) -> list[str]:
    """Each job on SeaweedFS behind the latency proxy against the same table on local disk:
    seconds, and the S3 and catalog requests the proxy counted."""
    contenders = o["contenders"]
    local = next(c for c in contenders if c["latency_ms"] is None)
    remote = [c for c in contenders if c["latency_ms"] is not None]
    header = ["job", "local disk s", *(f"{c['latency_ms']:g} ms: s" for c in remote), "S3 requests (" + " / ".join(S3_KINDS) + ")", "catalog requests"]
    rows = []
    for index, job in enumerate(local["jobs"]):
        reference = remote[0]["jobs"][index] if remote else job
        kinds = " / ".join(str(reference["s3"].get(kind, 0)) for kind in S3_KINDS)
        rows.append([job["job"].upper(), f"{job['seconds']:.1f}", *(f"{c['jobs'][index]['seconds']:.1f}" for c in remote), kinds,
                     str(reference["catalog"])])
    lines = section(
        "On an object store, with latency",
        f"A CDC table of {o['rows']:,} change events in {o['commits']} commits and {o['partitions']} partitions, generated identically for each "
        "contender (`workload cdc`, one seed), then the same sequence of jobs, each a CLI process as cron runs it, verified: on the embedded "
        "default's SQL catalog on local disk, and on SeaweedFS's Iceberg REST catalog and S3 (Iceberg's S3FileIO in Spark, pyarrow in "
        "pyiceberg), both behind `benchmarks/latency_proxy.py`, which delays each request by the latency and counts it "
        f"(`benchmarks/object_store.py {' '.join(options)}`). Requests are those of the first latency; they do not depend on it.",
        header, rows)
    warm = o.get("warm_cycle")
    if warm:
        cold_s3, warm_s3 = sum(warm["cold"]["s3"].values()), sum(warm["warm"]["s3"].values())
        lines += ["", f"A daemon over {warm['tables']} unchanged tables in the same REST catalog (a policy that never fires): its first cycle made "
                  f"{cold_s3:,} S3 requests ({', '.join(f'{k} {v}' for k, v in sorted(warm['cold']['s3'].items()))}) and "
                  f"{sum(warm['cold']['catalog'].values()):,} catalog requests; its second, warm, {warm_s3:,} S3 requests "
                  f"({', '.join(f'{k} {v}' for k, v in sorted(warm['warm']['s3'].items())) or 'none'}) and "
                  f"{sum(warm['warm']['catalog'].values()):,} catalog requests."]
    return lines


CRON = ("cron_fleet", "cron_fleet_10k", "cron_fleet_rest", "cron_fleet_rest_10k")


def cron_section(runs: dict[str, dict], plan: dict, measured: str = "") -> list[str]:
    """Cron ticks as CLI processes over a fleet: cold, warm with 1% changed, and a fresh
    check, on the SQL catalog and on SeaweedFS's REST catalog and S3 (requests counted)."""
    rows = []
    for name in [n for n in CRON if n in runs]:
        r = runs[name]
        where = "SQL catalog, local disk" if r["catalog"] == "sql" else "REST catalog + S3" + (f", {r['latency_ms']:g} ms a request" if r["latency_ms"] else "")
        rss = r["peak_rss_mib"]
        cpu = r["cpu_s"]
        rows.append([f"{r['tables']:,} tables, {where}", f"{r['cold_s']:.1f} s (CPU {cpu['cold']:.1f} s)",
                     f"{r['warm_s']:.2f} s: **{r['warm_over_cold']:.3f}** x cold (CPU {cpu['warm']:.2f} s: {r['warm_over_cold_cpu']:.3f} x); "
                     f"{r['warm_reused']:,} of {r['tables']:,} reused", f"{r['check_s']:.1f} s (CPU {cpu['check']:.1f} s)", f"{r['same_decisions']} ({r['decisions']:,}, {r['due']} due)",
                     " / ".join(_requests(r["requests"][step]) for step in ("cold", "warm", "check")) if r["catalog"] == "rest" else "local files",
                     f"{rss['cold']:.0f} / {rss['warm']:.0f} / {rss['check']:.0f}"])
    options = "; ".join(f"`{' '.join(plan[n])}`" for n in CRON if n in runs)
    return section(
        "Cron over a fleet",
        "Small tables made by `icemaint workload fleet` (pyiceberg appends, no Spark: 3 commits of 100 rows in 2 partitions each) under a "
        "policy of metadata triggers only (`benchmarks/cron_fleet.py`'s `POLICY`: MERGE, COMPACT, MANIFESTS, EXPIRE when their counts are "
        "reached), each step a new CLI process as a cron tick is, on a state database made afresh: a cold `run --dry-run --json` (nothing "
        "shared yet: it reads every table and writes each one's evaluation to the state database), then one table in 100 gets one more "
        "commit, then a warm `plan --all --json`, which decides a table still at the metadata location of its shared evaluation from it "
        "(`maintenance/schedule/stored.py`), then `plan --all --fresh --json`, every table read, as a check: the same decisions, every "
        "field (a reason's snapshot age aside). A SQL catalog names every table's metadata location in one query; a REST catalog only "
        "by loading each table (one GET a table, warm or cold), so there a warm tick still asks the catalog once per table and reads no "
        "manifest. On the REST catalog (SeaweedFS's, its S3 behind the same kind of proxy), `benchmarks/latency_proxy.py` counts every "
        f"request: S3 by kind, the catalog's by method (`benchmarks/cron_fleet.py` {options}). "
        + (measured + " " if measured else "") + "What issue 61 asks: a warm `plan` of 2,000 tables at most 0.1 x the cold run, decisions identical.",
        ["fleet", "cold `run --dry-run`", "warm `plan` (1% changed)", "`plan --fresh`", "same decisions (decisions, due)",
         "requests: cold / warm / fresh", "peak RSS MiB: cold / warm / fresh"],
        rows)


def _requests(counts: dict[str, dict[str, int]]) -> str:
    """`S3 1,604 (GET 802, HEAD 802), catalog 204`."""
    s3 = counts.get("s3", {})
    kinds = ", ".join(f"{kind} {s3[kind]:,}" for kind in S3_KINDS if s3.get(kind))
    return f"S3 {sum(s3.values()):,}{f' ({kinds})' if kinds else ''}, catalog {sum(counts.get('catalog', {}).values()):,}"


def convert_proof_section(results: dict[str, dict], plan: dict, measured: str = "") -> list[str]:
    """CONVERT verified by its deleted rows, beside CONVERT unverified and MERGE verified."""
    if "convert_proof" not in results:
        return []
    r = results["convert_proof"]
    rows = []
    for size in r["sizes"]:
        layout = f"{size['partitions']} partitions ({size['partitioning']})"
        runs = {run["contender"]: run for run in size["runs"]}
        merge = runs["MERGE, verified"]
        for label in ("CONVERT, unverified", "CONVERT, verified", "MERGE, verified"):
            run = runs[label]
            phases = run["cli_phase_seconds"]
            rows.append([f"{size['rows']:,} events, {size['commits']} commits, {layout}, v{size['format_version']}", label,
                         f"{run['cli_s']:.2f}", f"**{run['cli_s'] / merge['cli_s']:.2f}**", f"{run['warm_s']:.2f}", f"**{run['warm_s'] / merge['warm_s']:.2f}**",
                         " / ".join(f"{phases[p]:.2f}" for p in ("start", "plan", "read", "write", "verify", "commit")),
                         f"{run.get('verify_data_files', 0):,} / {run.get('verify_bytes', 0) / 2**20:.1f}" if run["verified"] else "-"])
    return section(
        "CONVERT verified by its deleted rows",
        "CONVERT's verification compares, for every data file its change can affect, the rows deleted before and after "
        "(`publish/proofs/deleted_rows.py`): it reads the key columns of the files an equality delete applies to and the delete "
        "files, no other column. Generated CDC tables (5% updates, 1% deletes, seed 77; the first is issue 60's); each run starts from the "
        "generated snapshot; medians of rounds in which every contender ran once, in turn (`benchmarks/convert_proof.py "
        + " ".join(plan["convert_proof"]) + "`). CLI: each run a new `icemaint <job> TABLE --json` process, fork to exit, and the median of "
        "its `phase_seconds` (start includes the process's own start and Spark's); warm: the job in an already started session (the "
        "daemon's path). " + (measured + " " if measured else "") + "What issue 60 asks: verified CONVERT at most 0.3 x verified MERGE "
        "as one CLI process.",
        ["table", "contender", "CLI s", "x MERGE", "warm s", "x MERGE", "CLI phases s: start / plan / read / write / verify / commit",
         "verify: data files / MiB read"],
        rows)


def under_flink_section(results: dict[str, dict], plan: dict, measured: str = "") -> list[str]:
    """icemaint's daemon and Flink's TableMaintenance, each under the same Flink upsert stream."""
    if "under_flink" not in results:
        return []
    r = results["under_flink"]
    rows = []
    for c in r["contenders"]:
        runs = c.get("runs")
        if runs is not None:
            statuses = {s: sum(1 for run in runs if run["status"] == s) for s in sorted({run["status"] for run in runs})}
            planned = sum(int((run.get("counters") or {}).get("groups_planned", 0)) for run in runs)
            rewritten = sum(int((run.get("counters") or {}).get("groups_rewritten", 0)) for run in runs)
            failures = ", ".join(f"{k} {v}" for k, v in statuses.items()) + (f"; file groups {rewritten}/{planned} committed" if planned else "")
        else:
            failures = f"{c.get('log_errors', 0)} error lines in its log"
        end, content, paused = c["end_files"], c["content"], c["files_at_writers_end"]
        operations = ", ".join(f"{op} {n}" for op, n in c["maintenance_operations"].items()) or "none"
        rows.append([
            "icemaint daemon" if c["contender"] == "icemaint" else "Flink TableMaintenance",
            f"{c['writer_exit']} ({c['writer_commits']} commits)",
            f"{c['maintenance_commits']} ({operations})", failures,
            f"{paused['data_files']} / {paused['equality_delete_files']} / {paused['position_delete_files']} ({paused['max_deletes_per_data_file']:.2f})",
            f"{end['data_files']} / {end['equality_delete_files']} / {end['position_delete_files']} ({end['max_deletes_per_data_file']:.2f})",
            f"{c['scan_s']:.2f} / {c['compacted_scan_s']:.2f} = **{c['scan_s'] / c['compacted_scan_s']:.2f}x**",
            f"{c['cpu_s']:.0f}",
            f"{content['only_in_table']} / {content['only_in_model']} of {content['model_rows']:,}",
        ])
    timeline = []
    for c in r["contenders"]:
        points = c["timeline"][:: max(1, len(c["timeline"]) // 6)]
        timeline.append(f"{c['contender']}: " + ", ".join(f"{p['s'] // 60:.0f}m {p['data_files']}/{p['equality_delete_files']}/{p['position_delete_files']}"
                                                          for p in points))
    return section(
        "Under a Flink writer",
        f"Apache Flink's Iceberg sink upserts {r['rows']:,} events into a table of {r['partitions']} partitions for {r['minutes']:g} minutes, "
        f"a commit per checkpoint every {r['checkpoint_interval_s']:g} s (30% updates, 5% deletes, one seed: the same events for each "
        "contender, each on a table of its own, one contender after the other). The writer has no restart strategy: exit 0 means no "
        "commit of its was refused. icemaint: `icemaint daemon` with the shipped streaming-cdc policy; Flink: Iceberg's TableMaintenance "
        "(RewriteDataFiles, ExpireSnapshots, DeleteOrphanFiles as Iceberg's quick start configures them, JDBC lock); each contender's "
        f"schedule cut to {r['every_s']} s (`benchmarks/under_flink.py {' '.join(plan['under_flink'])}`). Files: data / equality deletes / "
        "position deletes (or DVs) live when the writer ended, and after the contender ran on alone (as when a stream pauses); deletes "
        "per data file: the worst partition's; full scan, at the very end: Spark, every column, median of 3, beside the same rows written "
        "once with no delete file; CPU-s: the contender's whole process tree, from its start to its stop. "
        + (measured + " " if measured else "") + "Files over time (data/equality/position): " + "; ".join(timeline) + ".",
        ["contender", "writer exit (commits)", "maintenance commits", "runs", "files when the writer ended (deletes per data file)",
         f"files {r['settle_s']:g} s later",
         "full scan s / compacted s", "CPU-s", "content: only in table / only in model"],
        rows)


def native_peer_section(results: dict[str, dict], plan: dict, measured: str = "") -> list[str]:
    """icemaint's MERGE and COMPACT beside the native peer's `full` and `small_files`."""
    if "native_peer" not in results:
        return []
    r = results["native_peer"]
    tables = [(f"{s['rows']:,} events, {s['commits']} commits, {s['partitions']} partitions ({s['partitioning']}), v{s['format_version']}", s)
              for s in r["sizes"]]
    if r.get("appends"):
        a = r["appends"]
        tables.append((f"{a['rows']:,} rows appended in {a['commits']} commits x {a['partitions']} partitions ({a['before']['data_files']:,} files)", a))
    rows, phase_rows = [], []
    for label, table in tables:
        peer = next(run for run in table["runs"] if run["contender"].startswith("iceberg-compaction"))
        for run in table["runs"]:
            traffic = run["traffic"]
            requests = sum(count for kind, count in traffic.items() if not kind.startswith("bytes_"))
            rows.append([label, run["contender"], f"{run['wall_s']:.2f}", f"**{run['wall_s'] / peer['wall_s']:.1f}x**", f"{run['warm_s']:.2f}",
                         f"**{run['warm_s'] / peer['warm_s']:.1f}x**", f"{run['cpu_s']:.1f}", f"{run['peak_tree_mib']:,.0f}" if "peak_tree_mib" in run else "-",
                         f"{requests:,} / {traffic.get('bytes_sent', 0) / 2**20:,.0f} / {traffic.get('bytes_received', 0) / 2**20:,.0f}",
                         f"{run['data_files']} / {run['equality_delete_files']} / {run['position_delete_files']}", "same" if run["content_same"] else "CHANGED"])
            if "phase_seconds" in run:
                phases = run["phase_seconds"]
                phase_rows.append([label, run["contender"], *(f"{phases.get(p, 0):.2f}" for p in ("start", "plan", "read", "write", "verify", "commit")),
                                   f"{run['wall_s'] - sum(phases.values()):.2f}"])
            else:
                phase_rows.append([label, run["contender"], f"{run['peer_import_s']:.2f} (import)", "-", "-", "-", "-", "-", f"{run['wall_s'] - run['warm_s']:.2f}"])
    startup = r["startup"]
    noop = r.get("noop", {})
    text = (
        "nimtable's iceberg-compaction (PyPI `iceberg-compaction`, Rust on iceberg-rust and DataFusion, in its own venv: `make peer`) beside "
        "icemaint, on the same REST catalog and object store (SeaweedFS `weed mini`: its Iceberg REST catalog, its S3 API) and on exactly the "
        "same tables: generated CDC tables (5% updates, 1% deletes, seed 77) and an append-only table of small files, every run started "
        "from the generated snapshot. The peer is given icemaint's target file size and small-file threshold. Process: each run one new "
        "process (`icemaint <job> TABLE --json`; the peer's `benchmarks/native_peer_job.py`), fork to exit; CPU-s and peak RSS of its whole "
        "process tree (the JVM included); requests and MiB the store sent / received, from the store's own counters. Warm: icemaint's job "
        "in an already started Spark session (the daemon's path), the peer's `Compaction.run()` inside its process. Medians of rounds in "
        f"which every contender ran once, in turn, after one unmeasured run of each (`benchmarks/native_peer.py {' '.join(plan['native_peer'])}`). "
        "Files left: data / equality deletes / position deletes or DVs, from the metadata tables (not the snapshot summary); content: the "
        "table against the generated one. SeaweedFS's REST catalog refuses to create tables partitioned by `bucket[N]` and its table "
        "buckets refuse `.puffin` objects (deletion vectors): these tables are identity-partitioned, format 2 only. "
        + (measured + " " if measured else "")
        + f"`icemaint --help` as a process: {startup['help_s']:.2f} s; a MERGE with nothing to do as a process: {noop.get('noop_s', 0):.2f} s "
        f"({', '.join(noop.get('statuses', []))}). What issue 58 asks: verified MERGE of the 3M-event table within 1.5x of the peer's "
        "`full` warm and within 3x as one process; COMPACT within 1.5x of `small_files` warm."
    )
    return [*section(
        "Against a native engine",
        text,
        ["table", "contender", "process s", "x peer", "warm s", "x peer", "CPU-s", "peak tree MiB", "store: requests / MiB sent / MiB received",
         "files left", "content"],
        rows), *subsection(
        "Where the time goes",
        "The process runs above, medians of each phase (`phase_seconds` in icemaint's result; start includes the process's own start and "
        "Spark's); the last column is the process's time outside its phases (interpreter start before the clock, exit). The peer reports "
        "its import and its run only.",
        ["table", "contender", "start", "plan", "read", "write", "verify", "commit", "outside"],
        phase_rows)]


BUDGET_FLEETS = (("budget_fleet", "alike"), ("budget_fleet_skewed", "cold written harder"))  # the results, and what the section calls their writes


SPLICED = {"Cron over a fleet": (CRON, lambda results, plan, measured: cron_section(results, plan, measured)),
           "Under a Flink writer": (("under_flink",), lambda results, plan, measured: under_flink_section(results, plan, measured)),
           "CONVERT verified by its deleted rows": (("convert_proof",), lambda results, plan, measured: convert_proof_section(results, plan, measured)),
           "Against a native engine": (("native_peer",), lambda results, plan, measured: native_peer_section(results, plan, measured)),
           "What the scan reporter costs a reader": (("scan_reports",), lambda results, plan, measured: scan_reports_section(results, plan, measured)),
           "A budget spent where readers gain": (tuple(name for name, _ in BUDGET_FLEETS), lambda results, plan, measured: budget_fleet_section(results, plan, measured))}


def budget_fleet_section(results: dict[str, dict], plan: dict, measured: str = "") -> list[str]:
    """Twin fleets under one budget, spent by readers' value and in the planner's order,
    against an unmaintained twin, all measured by their readers' reports (issue 59): the
    CDC tables written alike, and the cold ones written harder than the hot ones."""
    runs = [(name, label, results[name]) for name, label in BUDGET_FLEETS if name in results]
    if not runs:
        return []
    r = runs[0][2]
    hot = r["hot_tables"]

    def within(figure: dict | None) -> str:
        if not figure or not figure["of"]:
            return "-"
        return f"{figure['within']} of {figure['of']} ({figure['share']:.0%}; median error {figure['median_error']:.0%})"

    rows, accuracy, ratios = [], [], []
    for name, label, result in runs:
        fleets, readers = result["fleets"], result["readers"]
        every = result.get("hot_writes_every", 1)
        writes = "every minute" if every == 1 else f"cold every minute, hot every {every} minutes"
        for twin, fleet in (("value", "value (readers' reports)"), ("triggers", "triggers (the planner's order)"), ("none", "none (not maintained)")):
            f = fleets[twin]
            maintained = twin != "none"
            all_runs = sum(f.get("runs", {}).values())
            committed = sum(n for key, n in f.get("runs", {}).items() if key.endswith(" committed"))
            compute = f"{f['run_s']:.0f} / {f['compute_s']:.1f}" if maintained and f.get("compute_s") is not None else f"{f['run_s']:.0f} / -" if maintained else "-"
            if maintained and f.get("daemon_cpu_s") is not None:
                compute += f" / {f['daemon_cpu_s']:.0f}"
            per = f.get("saved_per_compute_s") if maintained else None
            rows.append([writes + (f" ({result['commit']})" if result.get("commit") else ""), fleet, f"{committed} / {all_runs}" if maintained else "-", compute,
                         f"{f['hot_runs']}" if maintained else "-", f"{f['scans']:,} ({f['hot_scans']:,} hot)", f"{f['scan_cost_s']:.1f}",
                         f"{f['saved_s'] + 0.0:.1f}" if maintained else "-",
                         (f"{per + 0.0:.2f}" if per is not None else f"- ({f['saved_per_run_s']:.2f} per job s)" if f.get("saved_per_run_s") is not None else "-") if maintained else "-",
                         f"{readers[twin]['ms'] / 1000:.0f}" + (f" (saved {f['saved_wall_s']:.0f})" if maintained else ""),
                         f"{f['due_at_end_jobs']} / {f['due_at_end_s']:,}" if maintained else "-"])
            if maintained:
                accuracy.append([writes, twin, within(f.get("cost_within")), within(f.get("relief_within_runs")), within(f.get("relief_within_tables"))])
        ratio = result.get("value_over_triggers")
        per = "per compute-second" if fleets["value"].get("compute_s") is not None else "per second of job runs (measured before runs recorded compute-seconds)"
        spent_by = [f", {fleets[twin]['compute_s']:.1f} of the budget's {result['budget_s']:.1f} compute-seconds spent"
                    if fleets[twin].get("compute_s") is not None and "compute_per_estimated_s" in result else "" for twin in ("triggers", "value")]
        ratios.append(f"{label}, " + (f"**{ratio}x** {per}" if ratio is not None else "no ratio") +
                      f" (the planner's order saved {fleets['triggers']['saved_s'] + 0.0:.0f} of the "
                      f"{fleets['none']['scan_cost_s']:.0f} s the unmaintained twin's readers paid, {fleets['triggers']['hot_runs']} of its runs on hot "
                      f"tables{spent_by[0]}; the readers' order {fleets['value']['saved_s']:.0f} s, {fleets['value']['hot_runs']} runs on hot tables{spent_by[1]})")
    budgets = "; ".join(
        (f"{label}: {result['budget_s']:.1f} compute-seconds an hour, of the {result['due_at_start_s']:,} that the {result['due_at_start_jobs']} "
         "due jobs' estimates come to at what one run of each job cost per estimated second on a scratch table (MERGE "
         f"{result['compute_per_estimated_s']['merge']:.3f}, COMPACT {result['compute_per_estimated_s']['compact']:.3f})")
        if "compute_per_estimated_s" in result else
        f"{label}: {result['budget_s']:.0f} s of job runs an hour, of the {result['due_at_start_s']:,} s predicted for the {result['due_at_start_jobs']} due jobs "
        "(measured before the budget counted compute-seconds)" for _, label, result in runs)
    commands = "; ".join(f"`benchmarks/budget_fleet.py {' '.join(plan[name])}`" for name, _, _ in runs if name in plan)
    return [*section(
        "A budget spent where readers gain",
        f"Three identical fleets of {r['tables']} tables each, own SQL catalogs on local disk: {r['cdc_tables']} CDC tables (the workload generator's, 4 "
        "partitions; batches of 300 events, 30% updates and 5% deletes, the same batch to the three) and "
        f"{r['tables'] - r['cdc_tables']} tables of small appended files. One Spark reader per fleet, with the scan reporter, on one schedule: a "
        f"scan every 3 s, 90% of them of {len(hot)} hot tables drawn at random ({sum(1 for t in hot if t.startswith('c'))} CDC, "
        f"{sum(1 for t in hot if t.startswith('s'))} appended: {', '.join(hot)}), each scan the whole table. Two `icemaint daemon`s "
        f"maintain `value` and `triggers` with one policy (MERGE at 4 equality delete files, COMPACT at 8 small files, EXPIRE) and one budget: "
        f"{r['budget_part']:.0%} of the work due when they started ({budgets}); `daemon.budget_order` `value` (the best reader-seconds per compute-second, from the reports) and `triggers` (the "
        f"planner's order). Nobody maintains `none`. Two runs of {r['minutes']:.0f} minutes, one per way of writing the CDC tables: alike (a batch "
        "to each every minute), and cold tables written harder than the hot ones (a hot CDC table's batch only every few minutes, as raw "
        f"ingestion tables are written hardest and read least) ({commands}). Readers' cost: the sum over "
        "the scans each fleet's readers reported (the daemons' state databases; `none`'s through a door of the benchmark's own) of bytes read "
        "and 4 MiB per file opened, data and delete files (Spark's own measure of a read), in seconds at the reader model's 1.17 GB/s; saved: "
        "against `none`; per compute-second: over the daemon's runs' compute-seconds (CPU seconds of their Spark tasks and their own "
        "threads, `run/compute.py`; what the budget counts; job s: their wall seconds; daemon CPU s: the daemon's whole process tree, "
        "Python and JVM, evaluations of the 100 tables every 30 s and its JVM's start included). Readers' clocks: the sum of their scans' wall milliseconds, "
        "and what they saved against `none`'s (the machine's load shakes them: 2 cores for 6 JVMs). Due at the end: jobs and predicted "
        f"(compute-)seconds still due. Reader-seconds saved per compute-second of maintenance, `value` over `triggers` (issue 59 asks at least 2x): {'; '.join(ratios)}. "
        f"{measured}",
        ["CDC writes (commit)", "fleet", "runs committed / all", "job s / compute s / daemon CPU s", "runs on hot tables", "scans reported", "readers' cost s", "saved s",
         "saved per compute s",
         "readers' clocks s", "due at the end: jobs / s"], rows), *subsection(
        "How close the predictions came",
        "Each daemon's runs: predicted cost (the estimate the run recorded times the calibration it recorded, `value.predicted_cost_s`) against the run's compute-seconds (a run measured before runs recorded them: its own seconds "
        "less what it waited for Spark to start; committed runs that recorded a prediction); predicted reader-bytes removed from each scan against the scans readers reported of the snapshot the run "
        "committed, before the writer's next commit (`state/run_scans.py`), per run and per table (its last run with such scans). Within "
        "25%: issue 59 asks it of 80% of runs and of tables.",
        ["CDC writes", "fleet", "cost within 25%", "removed per scan within 25%: runs", "tables"], accuracy)]


def scan_reports_section(results: dict[str, dict], plan: dict, measured: str = "") -> list[str]:
    """A Spark reader's scans with icemaint's scan reporter against without it (issue 59)."""
    if "scan_reports" not in results:
        return []
    r = results["scan_reports"]
    bare = next(c for c in r["contenders"] if c["contender"] == "no reporter")
    rows = [[c["contender"], f"{c['scans']:,}", f"{c['median_ms']:.2f}", f"{c['median_ms'] - bare['median_ms']:+.2f}", f"{c['p90_ms']:.2f}",
             f"{c['report_us']:.1f} / {c['report_us_max']:.0f}" if c.get("report_us") is not None else "-", f"{c['process_s']:.1f}"]
            for c in r["contenders"]]
    return section(
        "What the scan reporter costs a reader",
        f"A Spark reader process (`maintenance/workload/readers.py`, `local[1]`) scans a generated CDC table of {r['rows']:,} change events in "
        f"{r['commits']} commits (4 partitions, delete files in every scan) whole, {r['scans']} times after {r['warmup']} unmeasured scans, as each "
        f"contender, {r['repeat']} rounds in turn (`benchmarks/scan_reports.py {' '.join(plan['scan_reports'])}`). Latency: the median and 90th "
        "percentile of every measured scan; in report(): what the reporter's own clock says its `report` took the thread planning each scan (its "
        "only work on a scan's path, which the scans' spread hides); process: the reader's wall time from start to exit (its exit gives "
        "queued reports one more second). "
        f"The daemon up took {r['reports_taken']:,} of the {r['reports_sent']:,} reports its reader sent. Issue 59's bound: no more than 1 ms "
        f"added at the median while the daemon is stopped. {measured}",
        ["contender", "scans", "median ms", "vs no reporter", "p90 ms", "in report() per scan, µs: median / max", "process s"], rows)


def ui_section(u: dict, options: list[str]) -> list[str]:
    """The status page: render times from the cached evaluation, against the issue's goal."""
    return section(
        "Status page from the cached health",
        f"The overview of {u['tables']:,} tables and one table's page, timed through `StatusPages.handle` (what the HTTP server calls; one row over HTTP), "
        f"medians of {u['repeat']} views after one unmeasured (`benchmarks/ui.py {' '.join(options)}`); the goal is under {u['goal_ms'] / 1000:g} s. "
        "How the health is cached: the overview never reads table metadata. It renders from a snapshot of the latest evaluation (every table's "
        "health counters, reader cost and the planner's decisions, without per-partition health or plans), which the daemon publishes after each "
        "evaluation and `icemaint ui` makes in a background thread, refreshed after `--refresh` while the stale one is still shown with its age "
        f"(publishing it took {u['publish_ms']:.0f} ms here). Runs and leases are read from the state database at every view: {u['runs']:,} runs "
        f"and {u['leases_held']} held leases, {u['state']}. A table's own page reads that table's metadata now.",
        ["page", "median ms", "max ms", "KiB", "under the goal"],
        [[p["page"], f"{p['median_ms']:.1f}", f"{p['max_ms']:.1f}", f"{p['kib']:.0f}", "yes" if p["max_ms"] < u["goal_ms"] else "**no**"]
         for p in u["pages"]],
    )


def compact_section(c: dict, options: list[str]) -> list[str]:
    stock = {j["job"].split()[-1]: j for j in c["jobs"] if j["job"].startswith("stock")}
    rows = []
    for j in c["jobs"]:
        strategy = "sort" if "sort" in j["job"] else "binpack"
        rows.append([j["job"], f"{j['job_s']:.1f}", f"{j['job_s'] / stock[strategy]['job_s']:.2f}", f"{j['mib_read']:.1f}", f"{j['mib_written']:.1f}",
                     str(j["data_files"]), f"{j['within_10pct_of_target']} of {j['files_beside_a_remainder']}", f"{j['scan_s']:.2f}",
                     f"{j['scan_s'] / j.get('floor_scan_s', c['floor']['scan_s']):.2f}"])
    rows.append(["floor: the same rows at the target size", "", "", "", "", str(c["floor"]["data_files"]),
                 f"{c['floor']['within_10pct_of_target']} of {c['floor']['files_beside_a_remainder']}", f"{c['floor']['scan_s']:.2f}", "1.00"])
    return section(
        "Small-file compaction against the stock procedure",
        f"An append-only table ({c['rows']:,} rows in {c['commits']} commits, {c['partitions']} partitions: {c['before']['data_files']:,} files, "
        f"full scan {c['before']['scan_s']:.2f} s), target {c['target_mib']:g} MiB (`benchmarks/compact.py {' '.join(options)}`). Every contender starts "
        f"from exactly that table (rolled back between them) and ran once unmeasured first; job times are medians of {c.get('job_repeat', 1)} rounds, "
        "each running every contender once in turn; scans are medians, and each contender's \"× floor\" divides by the floor's scans taken in turn with its own. \"files near the target\": files within "
        "±10% of the target, of those that are not a partition's last, smaller one.",
        ["contender", "s", "× stock", "MiB read", "MiB written", "files after", "files near the target", "full scan s", "× floor"],
        rows,
    )


def scaling_section(r: dict, options: list[str]) -> list[str]:
    rows = []
    for job in ("merge", "compact"):
        runs = [x for x in r["runs"] if x["job"] == job]
        for x in runs:
            base = next(b for b in runs if b["master"] == "local[1]" and b["max_concurrent_groups"] == 1 and b["max_group_bytes"] == x["max_group_bytes"])
            group_bytes = "default" if x["max_group_bytes"] is None else f"{x['max_group_bytes'] / 2**20:.1f} MiB"
            rows.append([job.upper(), group_bytes, x["master"], str(x["max_concurrent_groups"]), f"{x['job_s']:.1f}", f"{base['job_s'] / x['job_s']:.2f}",
                         f"{x['peak_rss_mib']:.0f}", str(x["snapshots"]), str(x["groups"])])
    return section(
        "Many partitions: one file group at a time, or several",
        f"A CDC table of {r['partitions']} partitions and {r['commits']} commits: {r['data_files']:,} data files and {r['delete_files']:,} delete files, "
        f"{r['rows']:,} rows (`benchmarks/scaling.py {' '.join(options)}`). The machine has {r['cores']} cores, so the scaling is shown with Spark's "
        "`local[1]` against `local[2]`. Each run is a process of its own on exactly the generated table, after a warm-up run on a small table; memory is "
        "the peak resident set of the process tree (Python and its JVM). With the default options the small partitions are combined into one file "
        "group (one Spark job); with `max_group_bytes` at 1/32 of the table they make about 32 groups, as a table 32 times the size would at the "
        "default. Speed-up: against `local[1]` with one group at a time, at the same `max_group_bytes`.",
        ["job", "max_group_bytes", "Spark master", "max_concurrent_groups", "s", "speed-up", "peak RSS MiB", "commits", "groups"],
        rows,
    )


def manifests_section(m: dict, options: list[str]) -> list[str]:
    before = m["stages"][0]
    rows = [[s["stage"], "" if s["job_s"] is None else f"{s['job_s']:.1f}", str(s["manifests"]), f"{s['plan_files_s']:.3f}",
             f"{s['plan_files_s'] / before['plan_files_s']:.2f}", f"{s['plan_one_partition_s']:.3f}", f"{s['health_s']:.3f}"] for s in m["stages"]]
    return section(
        "Manifests of a streaming table",
        f"A CDC table of {m['commits']:,} commits over {m['partitions']} partitions (`benchmarks/manifests.py {' '.join(options)}`): a full scan's planning "
        "in Iceberg (`planFiles()`, every task iterated), a scan filtered to one partition, and icemaint's metadata read (`health`, pyiceberg), medians "
        f"of {m['repeat']}; job times: medians of {m.get('job_repeat', 1)} rounds, each running every contender once in turn; each contender starts "
        "from the generated table.",
        ["table state", "job s", "manifests", "planFiles s", "× before", "one partition s", "health s"],
        rows,
    )


def verification_section(v: dict, m: dict, options: list[str]) -> list[str]:
    """Each job verified against the same job unverified, and what verification read."""
    by_label = {r["contender"]: r for r in v["runs"]}
    rows = []
    for r in v["runs"]:
        if not r["verified"]:
            continue
        plain = by_label[r["contender"].removesuffix(", verified")]
        rows.append([r["contender"].removesuffix(", verified"), f"{plain['job_s']:.2f}", f"{r['job_s']:.2f}", f"**{r['job_s'] / plain['job_s']:.2f}**",
                     f"{r['verify_data_files']:,}", f"{r['verify_bytes'] / 2**20:.1f}",
                     f"{100 * r['verify_share']:.1f}%"])
    stages = {s["stage"]: s for s in m["stages"]}
    plain_m, verified_m = stages["after icemaint MANIFESTS"], stages["after icemaint MANIFESTS, verified"]
    rows.append([f"MANIFESTS, {m['commits']:,}-commit table (section above)", f"{plain_m['job_s']:.1f}", f"{verified_m['job_s']:.1f}",
                 f"**{verified_m['job_s'] / plain_m['job_s']:.2f}**", "0", "0", "0% (live entries compared)"])
    lines = section(
        "Verification",
        f"Each job unverified (`--no-verify`) and verified (the default), on a CDC table of {v['rows']:,} change events in {v['commits']} commits over "
        f"{v['partitions']} partitions ({v['data_files']:,} data files, {v['data_mib']:.0f} MiB; {v['delete_files']:,} delete files), every run "
        f"starting from exactly the generated table; medians of {v['job_repeat']} rounds, each running every contender once in turn "
        f"(`benchmarks/verification.py {' '.join(options)}`). Verification reads the data files the change can affect, with their deletes "
        "(`maintenance/publish/change_scope.py`), on both sides, itself (never through the job's read); \"share\" is of both snapshots' data "
        "bytes. MANIFESTS compares live entries and reads no data file (its times: the manifests section's, medians of its --job-repeat rounds).",
        ["job", "unverified s", "verified s", "verified ÷ unverified", "data files read", "MiB read", "share read"],
        rows,
    )
    deleting = [[d["job"].upper(), f"{d['job_s']:.1f}", f"{d['files_deleted']:,}", f"{d['mib_read']:.2f}"] for d in v["deleting"]]
    lines += ["", f"EXPIRE and ORPHANS, verified, on that table after a MERGE, with 1,000 old orphans planted: before they ran, all "
              f"{v['live_data_files_cut']:,} live data files ({v['live_data_mib_cut']:.0f} MiB) were cut to zero bytes in place, so a verification "
              "that read a data file would have failed. Both succeeded, verified: they read no data file. MiB read: everything the run read (the "
              "Spark JVM's Hadoop counters and the Python process's `/proc/self/io`): metadata, manifests and the listing.", "",
              "| job | s | files deleted | MiB read in all |", "|---|---|---|---|"]
    lines += ["| " + " | ".join(row) + " |" for row in deleting]
    return lines


def scan_planning_section(p: dict, options: list[str]) -> list[str]:
    """Planning one partition's scan tasks, filtered to it or from the whole snapshot."""
    rows = [[layout["layout"], f"{layout['data_files']:,} / {layout['delete_files']:,} / {layout['manifests']:,}",
             f"{layout['wanted_files']} / {layout['wanted_deletes']}", f"{layout['partition_s']:.3f}", f"{layout['whole_s']:.3f}",
             f"**{layout['whole_s'] / layout['partition_s']:.1f}×**"] for layout in p["layouts"]]
    return section(
        "Planning one partition's rewrite",
        f"The scan tasks (every delete that applies) of one partition's data files, as MERGE, COMPACT and their verification plan them, on a CDC "
        f"table of {p['rows']:,} change events, {p['commits']} commits over {p['partitions']} partitions (`benchmarks/scan_planning.py "
        f"{' '.join(options)}`): the scan filtered to the partition (now) against the whole snapshot's scan (before), same JVM, same helper, "
        f"medians of {p['repeat']} alternating rounds. Both plans hold the same tasks and deletes (checked every round).",
        ["table", "data files / delete files / manifests", "partition's files / deletes", "partition's scan s", "whole snapshot s", "whole ÷ partition"],
        rows,
    )


def section(title: str, note: str, header: list[str], rows: list[list[str]]) -> list[str]:
    """A `##` section: a note, then a table."""
    lines = ["", f"## {title}", "", note, "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def subsection(title: str, note: str, header: list[str], rows: list[list[str]]) -> list[str]:
    """A `###` part of the section before it (spliced with it)."""
    lines = section(title, note, header, rows)
    return [lines[0], f"### {title}", *lines[2:]]


def format_3_summary(v2_sizes: list[dict], v3_sizes: list[dict]) -> list[str]:
    """Full-scan time of the same change events written as format 2 and as format 3."""
    lines: list[str] = []
    for size in v3_sizes:
        twin = next((t for t in v2_sizes if (t["rows"], t["commits"], t["partitioning"]) == (size["rows"], size["commits"], size["partitioning"])), None)
        if twin is None:
            continue
        lines += ["", f"### Format 2 beside format 3: {size['rows']:,} change events, {size['commits']} commits, {size['partitioning']}", "",
                  "| full scan s | format 2 | format 3 |", "|---|---|---|"]
        for label, stage in (("before maintenance", "before maintenance"), ("after CONVERT", "after icemaint CONVERT"), ("after MERGE", "after icemaint MERGE")):
            found = [next(s["scan_s"] for s in t["stages"] if s["stage"] == stage) for t in (twin, size)]
            lines.append(f"| {label} | {found[0]:.2f} | {found[1]:.2f} |")
    return lines


def machine() -> dict[str, str]:
    info = {"cores": str(os.cpu_count())}
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        model = next((line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines() if line.startswith("model name")), None)
        if model:
            info["cpu"] = model
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        kib = int(next(line.split()[1] for line in meminfo.read_text().splitlines() if line.startswith("MemTotal:")))
        info["memory"] = f"{kib / 2**20:.1f} GiB"
    info["os"] = platform.platform()
    info["python"] = platform.python_version()
    from importlib.metadata import version

    for package in ("pyspark", "pyiceberg", "pyarrow", "sqlalchemy"):
        info[package] = version(package)
    from maintenance.spark.session import iceberg_runtime_jar

    info["iceberg runtime"] = Path(iceberg_runtime_jar()).name
    java = subprocess.run(["java", "-version"], capture_output=True, text=True)
    info["java"] = (java.stderr.splitlines() or ["?"])[0]
    return info


if __name__ == "__main__":
    main()
