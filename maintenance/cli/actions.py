"""What more than one command does: the health and fingerprint of a table, generating a CDC
workload, evaluating tables by the policies and running the decisions. `demo` strings them
together; the commands of their own names wire them to flags. Commands import this, never
each other.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from maintenance.cli.output import emit_fields, emit_json_line, emit_rows, report, result_json
from maintenance.cli.progress import progress_display, wanted
from maintenance.errors import UnknownSnapshotError, UnreadableMetadataError
from maintenance.progress import Progress, no_progress
from maintenance.units import format_bytes

if TYPE_CHECKING:  # the rest is imported where it is used: `--help` needs none of it (`cli/app.py`)
    from maintenance.cli.app import AppContext
    from maintenance.spark.fingerprint import Fingerprint
    from maintenance.table.health import TableHealth
    from maintenance.workload.cdc import CdcOptions, CdcResult
    from maintenance.workload.flink_writer import FlinkOptions

_PARTITION_COLUMNS = ["partition", "data_files", "data_bytes", "data_records", "position_delete_files", "position_delete_records",
                      "equality_delete_files", "equality_delete_records", "deletion_vectors"]
_SIZES = ("data_bytes",)  # in binary units in text (JSON keeps the bytes)


def collect_health(app: AppContext, name: str) -> TableHealth:
    from maintenance.catalogs import load_table
    from maintenance.table.health import table_health

    ref = app.table(name)
    table = load_table(app.config, ref)
    with naming_the_table(ref):
        return table_health(str(ref), table, small_file_bytes=app.config.health.small_file_bytes)


@contextmanager
def naming_the_table(ref: object) -> Iterator[None]:
    """A damaged manifest list or manifest, reported with the table's name as well as the file's."""
    try:
        yield
    except UnreadableMetadataError as exc:
        raise UnreadableMetadataError(f"table '{ref}': {exc}") from exc


def collect_fingerprint(app: AppContext, name: str, snapshot_id: int | None = None, progress: Progress = no_progress) -> Fingerprint:
    """Checks the table and snapshot through pyiceberg first, so bad names fail before Spark starts."""
    from maintenance.catalogs import load_table
    from maintenance.spark.fingerprint import content_fingerprint
    from maintenance.spark.session import get_spark
    from maintenance.table.files import snapshot_files

    ref = app.table(name)
    table = load_table(app.config, ref)
    if snapshot_id is None:
        snapshot_id = table.metadata.current_snapshot_id
    elif table.snapshot_by_id(snapshot_id) is None:
        raise UnknownSnapshotError(f"table '{ref}' has no snapshot {snapshot_id}")
    progress("starting Spark")
    spark = get_spark(app.config)
    with naming_the_table(ref):
        files = snapshot_files(table, snapshot_id) if snapshot_id is not None else None
    progress("reading", data_files=len(files.data) if files else 0, mib=round(sum(f.size for f in files.data) / 2**20) if files else 0)
    return content_fingerprint(spark, ref, snapshot_id)


def print_health(health: TableHealth) -> None:
    """The table's counters, sizes in binary units; then one line per partition (a
    partitioned table), with its spec when the table has had more than one."""
    emit_fields(f"health of {health.table}", _human_sizes(health.to_json()), skip=("partitions",))
    if any(p.partition for p in health.partitions):
        click.echo(f"  partitions ({len(health.partitions):,}):")
        several_specs = len({p.spec_id for p in health.partitions}) > 1
        emit_rows([_human_sizes(p.__dict__) for p in health.partitions], [*_PARTITION_COLUMNS, *(["spec_id"] if several_specs else [])], indent="    ")


def _human_sizes(fields: dict[str, Any]) -> dict[str, Any]:
    return {key: format_bytes(value) if key in _SIZES and value is not None else value for key, value in fields.items()}


def generate_cdc(app: AppContext, table: str, options: CdcOptions, *, show_progress: bool = False, flink: FlinkOptions | None = None,
                 model_out: Path | None = None) -> CdcResult:
    """A CDC workload on `table`: a writer of tables, so its catalog is made where missing.
    `flink`: written by the Flink writer's job instead of the generator. `model_out`: the
    model's rows written there (Parquet) afterwards."""
    from maintenance.catalogs import get_catalog
    from maintenance.spark.session import get_spark
    from maintenance.workload.cdc import run_cdc_workload
    from maintenance.workload.model_file import write_model_rows

    ref = app.table(table)
    runtime = None
    if flink is not None:
        from maintenance.workload.flink_writer import check_flink_writer, run_flink_workload

        runtime = check_flink_writer(app.config, ref)
    get_catalog(app.config, ref.catalog, create=True)
    with progress_display(f"workload {ref}", enabled=show_progress) as progress:
        progress("starting Spark")
        spark = get_spark(app.config)
        if flink is not None and runtime is not None:
            result, model = run_flink_workload(spark, app.config, ref, options, flink, runtime, lambda phase: progress(phase))
        else:
            result, model = run_cdc_workload(spark, app.config, ref, options, lambda done, total: progress("committing", commits_done=done, commits=total))
    if model_out is not None:
        write_model_rows(model, model_out)
    return result


def evaluate_tables(app: AppContext, tables: tuple[str, ...], *, fresh: bool = False):  # type: ignore[no-untyped-def]
    """Evaluate the named tables (every table when none is named) by the policies: the
    evaluation, the policies, the state store it read, and how many tables were decided from
    the evaluations stored in the state database (None with `fresh`).

    A cron run is one more evaluator of the fleet: like a restarted daemon, it takes the
    stored evaluation of each table still at the metadata location the row was made at, and
    writes back what it read itself (`schedule/stored.py` says why that decides what a cold
    read would), so a tick reads only the tables that moved. `fresh` reads every table."""
    from maintenance.catalogs import load_table
    from maintenance.policy.loader import load_policies
    from maintenance.schedule.cycle import evaluate
    from maintenance.schedule.kept import KeptEvaluations
    from maintenance.spark.session import check_spark_settings
    from maintenance.state.store import open_state

    check_spark_settings(app.config)
    refs = [app.table(t) for t in tables] or None
    for ref in refs or []:
        load_table(app.config, ref)  # an unknown table is a usage error
    policies = load_policies(app.config.policies_dir)
    state = open_state(app.config)
    kept = None if fresh else KeptEvaluations()
    evaluation = evaluate(app.config, state, refs, policies, kept=kept)
    return evaluation, policies, state, (kept.reused if kept is not None else None)


def run_decisions(app: AppContext, state, decisions: list, policies: list, *, dry_run: bool, recheck: bool, as_json: bool) -> list:  # type: ignore[no-untyped-def]
    """Run planned jobs one after the other, each under its lease, reporting as they end."""
    from maintenance.schedule.cycle import run_decision
    from maintenance.state.leases import new_holder_id

    holder, results = new_holder_id("run"), []
    for decision in decisions:
        if not as_json:
            click.echo(f"{decision.table} {decision.job}: {decision.reason}")
        with progress_display(f"{decision.job} {decision.table}", enabled=wanted(as_json)) as progress:
            result = run_decision(app.config, state, decision, holder=holder, dry_run=dry_run, policies=policies, recheck=recheck, progress=progress)
        results.append(result)
        if as_json:
            emit_json_line(result_json(result, app.state_database))  # as each job ends: a cron log keeps what finished before a crash
        else:
            report(result, as_json=False)
    return results
