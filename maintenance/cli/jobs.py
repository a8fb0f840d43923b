"""`icemaint <job> TABLE`: run one maintenance job now on one table, under a lease."""

from __future__ import annotations

from typing import Any

import click

from maintenance.cli.main import AppContext, pass_app
from maintenance.cli.output import emit_fields, emit_json
from maintenance.cli.progress import progress_display, wanted
from maintenance.errors import EXIT_FAILED, EXIT_OK
from maintenance.jobs.result import JobResult
from maintenance.jobs.runner import run_job


def run_and_report(app: AppContext, table: str, job: str, *, dry_run: bool, verify: bool, as_json: bool, options: dict[str, Any]) -> int:
    ref = app.table(table)
    from maintenance.catalogs import load_table
    from maintenance.cycle import job_body

    load_table(app.config, ref)  # an unknown table is a usage error, before any lease
    with progress_display(f"{job} {ref}", enabled=wanted(as_json)) as progress:
        result = run_job(app.config, ref, job, job_body(job), dry_run=dry_run, verify=verify, options={**options, "progress": progress})
    report(result, as_json)
    return EXIT_OK if result.ok else EXIT_FAILED


def report(result: JobResult, as_json: bool) -> None:
    if as_json:
        emit_json(result.to_json())
        return
    emit_fields(f"{result.job} {result.table}: {result.status}", result.to_json())
    if result.error and not result.ok:
        click.echo(f"icemaint: error: {result.error}", err=True)


def common_options(function):  # type: ignore[no-untyped-def]
    for option in reversed(
        [
            click.argument("table"),
            click.option("--dry-run", is_flag=True, help="Plan and report; change nothing."),
            click.option("--verify", is_flag=True, help="Compare the content fingerprint before and after."),
            click.option("--json", "as_json", is_flag=True, help="Print JSON (CONTRACT.md fields)."),
        ]
    ):
        function = option(function)
    return function


partition_option = click.option(
    "--partition", "partitions", multiple=True, metavar="PATH", help="Only this partition, as its path (e.g. region=3); repeatable."
)


def register(cli: click.Group) -> None:

    @cli.command()
    @common_options
    @partition_option
    @pass_app
    def merge(app: AppContext, table: str, dry_run: bool, verify: bool, as_json: bool, partitions: tuple[str, ...]) -> int:
        """MERGE deletes into data files and drop the delete files, sequence numbers kept (a Spark job)."""
        return run_and_report(app, table, "merge", dry_run=dry_run, verify=verify, as_json=as_json, options={"partitions": partitions})

    @cli.command()
    @common_options
    @partition_option
    @pass_app
    def rewrite(app: AppContext, table: str, dry_run: bool, verify: bool, as_json: bool, partitions: tuple[str, ...]) -> int:
        """REWRITE position deletes: at most one file per partition and target size (a Spark job)."""
        return run_and_report(app, table, "rewrite", dry_run=dry_run, verify=verify, as_json=as_json, options={"partitions": partitions})

    @cli.command()
    @common_options
    @partition_option
    @click.option("--max-files-per-commit", type=click.IntRange(min=1), default=None, help="At most this many equality delete files per commit.")
    @pass_app
    def convert(app: AppContext, table: str, dry_run: bool, verify: bool, as_json: bool, partitions: tuple[str, ...], max_files_per_commit: int | None) -> int:
        """CONVERT equality deletes into position deletes (a Spark job)."""
        return run_and_report(
            app, table, "convert", dry_run=dry_run, verify=verify, as_json=as_json,
            options={"partitions": partitions, "max_files_per_commit": max_files_per_commit},
        )

    @cli.command()
    @common_options
    @click.option("--older-than", "older_than", metavar="DURATION", default=None,
                  help="Expire snapshots older than this (e.g. 5d); default: the table's history.expire.max-snapshot-age-ms, else 5 days.")
    @click.option("--retain-last", type=click.IntRange(min=1), default=None,
                  help="Keep at least this many snapshots per branch; default: history.expire.min-snapshots-to-keep, else 1.")
    @click.option("--checkpoint-key", "checkpoint_keys", multiple=True, metavar="KEY",
                  help="A snapshot summary key marking a writer's resume point (repeatable; adds to flink.max-committed-checkpoint-id).")
    @pass_app
    def expire(app: AppContext, table: str, dry_run: bool, verify: bool, as_json: bool, older_than: str | None, retain_last: int | None, checkpoint_keys: tuple[str, ...]) -> int:
        """EXPIRE old snapshots, delete the files only they used and old metadata.json versions."""
        from maintenance.durations import parse_duration
        from maintenance.jobs.expire.plan import DEFAULT_CHECKPOINT_KEYS, Retention

        retention = Retention(
            max_snapshot_age_ms=int(parse_duration(older_than) * 1000) if older_than is not None else None,
            min_snapshots_to_keep=retain_last,
            checkpoint_keys=tuple(dict.fromkeys((*DEFAULT_CHECKPOINT_KEYS, *checkpoint_keys))),
        )
        return run_and_report(app, table, "expire", dry_run=dry_run, verify=verify, as_json=as_json, options={"retention": retention})

    @cli.command()
    @common_options
    @click.option("--older-than", "older_than", metavar="DURATION", default="3d", show_default=True,
                  help="Only files last modified longer ago than this are deleted.")
    @click.option("--force", is_flag=True, help="Allow a margin below 1 hour.")
    @pass_app
    def orphans(app: AppContext, table: str, dry_run: bool, verify: bool, as_json: bool, older_than: str, force: bool) -> int:
        """Delete ORPHAN files under the table location that no metadata references."""
        from maintenance.durations import parse_duration
        from maintenance.jobs.orphans.job import check_margin

        older_than_s = parse_duration(older_than)
        check_margin(older_than_s, force, dry_run)
        return run_and_report(app, table, "orphans", dry_run=dry_run, verify=verify, as_json=as_json,
                              options={"older_than_s": older_than_s, "force": force})
