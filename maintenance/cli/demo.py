"""`icemaint demo`: the main job on the embedded default, start to finish."""

from __future__ import annotations

import time

import click

from maintenance.cli.actions import collect_fingerprint, collect_health, evaluate_tables, generate_cdc, print_health, run_decisions
from maintenance.cli.app import AppContext, pass_app
from maintenance.cli.output import emit_fields
from maintenance.errors import EXIT_FAILED, EXIT_OK, UsageError

DEMO_TABLE = "demo.orders"


def register(cli: click.Group) -> None:
    @cli.command()
    @click.option("--table", "table", default=DEMO_TABLE, show_default=True)
    @click.option("--rows", type=click.IntRange(min=1), default=20_000, show_default=True)
    @click.option("--commits", type=click.IntRange(min=1), default=10, show_default=True)
    @pass_app
    def demo(app: AppContext, table: str, rows: int, commits: int) -> int:
        """Generate a CDC table, show its health, run one policy-driven cycle, verify its content."""
        from maintenance.catalogs import get_catalog, load_table, table_exists
        from maintenance.spark.errors import java_errors
        from maintenance.spark.session import get_spark
        from maintenance.state.store import open_state
        from maintenance.workload.cdc import CdcOptions
        from maintenance.workload.shape import SHAPE_PROPERTY

        ref = app.table(table)
        get_catalog(app.config, ref.catalog, create=True)  # a writer of tables: on a fresh home, its catalog is made first
        if table_exists(app.config, ref):
            if SHAPE_PROPERTY not in load_table(app.config, ref).properties:
                raise UsageError(f"table '{ref}' exists and was not made by the demo; pass another --table")
            click.echo(f"0. dropping the previous demo table {ref} and its run history")
            with java_errors(f"drop {ref}"):
                get_spark(app.config).sql(f"DROP TABLE {ref.spark_name} PURGE")
            open_state(app.config).runs.forget(str(ref))  # the new table has had no runs
        click.echo(f"1. writing {commits} CDC commits ({rows} change events) to {ref} ...")
        started = time.monotonic()
        result = generate_cdc(app, table, CdcOptions(rows=rows, commits=commits, update_ratio=0.1, delete_ratio=0.02))
        click.echo(f"   done in {time.monotonic() - started:.1f}s: {result.equality_delete_files} equality and {result.position_delete_files} position delete files; {result.expected_rows} rows expected")
        click.echo("2. health (metadata only):")
        print_health(collect_health(app, table))
        click.echo("3. content through Spark, all deletes applied:")
        fingerprint, scan_before = _timed_fingerprint(app, table)
        emit_fields(f"   full scan in {scan_before:.2f}s", fingerprint.to_json())
        verdict = "matches" if fingerprint.rows == result.expected_rows else "DOES NOT MATCH"
        click.echo(f"   rows {verdict} the workload model ({result.expected_rows})")
        if fingerprint.rows != result.expected_rows:
            return EXIT_FAILED

        click.echo("4. one maintenance cycle, as the policies decide (each job under a lease, content verified):")
        results = _one_cycle(app, ref)
        if not results or not all(r.ok and r.content_verified is not False for r in results):
            return EXIT_FAILED
        verified = all(r.content_verified for r in results if r.content_verified is not None)
        click.echo("5. health after:")
        print_health(collect_health(app, table))
        _, scan_after = _timed_fingerprint(app, table)
        click.echo(f"6. full scan {scan_before:.2f}s before, {scan_after:.2f}s after; content_verified: {verified}")
        return EXIT_OK


def _one_cycle(app: AppContext, ref):  # type: ignore[no-untyped-def]
    """What `icemaint run TABLE` does: plan by policy, show the plan, run what is due."""
    evaluation, policies, state, _ = evaluate_tables(app, (str(ref),), fresh=True)
    for decision in evaluation.decisions:
        click.echo(f"   {'due' if decision.due else 'not due'}: {decision.job} ({decision.policy} policy): {decision.reason}")
    return run_decisions(app, state, evaluation.due, policies, dry_run=False, recheck=True, as_json=False)


def _timed_fingerprint(app: AppContext, table: str):  # type: ignore[no-untyped-def]
    """The content fingerprint and how long the full scan took (best of two, warm)."""
    timings, result = [], None
    for _ in range(2):
        started = time.monotonic()
        result = collect_fingerprint(app, table)
        timings.append(time.monotonic() - started)
    return result, min(timings)
