"""`icemaint health` (metadata only, no Spark) and `icemaint verify` (content, through Spark)."""

from __future__ import annotations

import click

from maintenance.catalogs import load_table
from maintenance.cli.main import AppContext, pass_app
from maintenance.cli.output import emit_fields, emit_json, emit_rows
from maintenance.cli.progress import progress_display, wanted
from maintenance.errors import UnknownSnapshotError
from maintenance.jobs.spec import Progress, no_progress
from maintenance.spark.fingerprint import Fingerprint, content_fingerprint
from maintenance.spark.session import get_spark
from maintenance.table.files import snapshot_files
from maintenance.table.health import TableHealth, table_health

_PARTITION_COLUMNS = ["partition", "data_files", "data_records", "position_delete_files", "position_delete_records", "equality_delete_files",
                      "equality_delete_records", "deletion_vectors"]


def collect_health(app: AppContext, name: str) -> TableHealth:
    ref = app.table(name)
    return table_health(str(ref), load_table(app.config, ref), small_file_bytes=app.config.health.small_file_bytes)


def collect_fingerprint(app: AppContext, name: str, snapshot_id: int | None = None, progress: Progress = no_progress) -> Fingerprint:
    """Checks the table and snapshot through pyiceberg first, so bad names fail before Spark starts."""
    ref = app.table(name)
    table = load_table(app.config, ref)
    if snapshot_id is None:
        snapshot_id = table.metadata.current_snapshot_id
    elif table.snapshot_by_id(snapshot_id) is None:
        raise UnknownSnapshotError(f"table '{ref}' has no snapshot {snapshot_id}")
    progress("starting Spark")
    spark = get_spark(app.config)
    files = snapshot_files(table, snapshot_id) if snapshot_id is not None else None
    progress("reading", data_files=len(files.data) if files else 0, mib=round(sum(f.size for f in files.data) / 2**20) if files else 0)
    return content_fingerprint(spark, ref, snapshot_id)


def print_health(health: TableHealth) -> None:
    emit_fields(f"health of {health.table}", health.to_json())
    if any(p.partition for p in health.partitions):
        click.echo("")
        emit_rows([p.__dict__ for p in health.partitions], _PARTITION_COLUMNS)


def register(cli: click.Group) -> None:
    @cli.command()
    @click.argument("table")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON (the fields the README lists).")
    @pass_app
    def health(app: AppContext, table: str, as_json: bool) -> None:
        """Table health from metadata only (no Spark)."""
        result = collect_health(app, table)
        emit_json(result.to_json()) if as_json else print_health(result)

    @cli.command()
    @click.argument("table")
    @click.option("--snapshot", "snapshot_id", type=int, default=None, help="Snapshot id (default: current).")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @pass_app
    def verify(app: AppContext, table: str, snapshot_id: int | None, as_json: bool) -> None:
        """Logical content fingerprint, read through Spark with all deletes applied."""
        with progress_display(f"verify {table}", enabled=wanted(as_json)) as progress:
            result = collect_fingerprint(app, table, snapshot_id, progress)
        emit_json(result.to_json()) if as_json else emit_fields(f"content of {result.table}", result.to_json())
