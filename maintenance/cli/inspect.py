"""`icemaint health` (metadata only, no Spark) and `icemaint verify` (content, through Spark)."""

from __future__ import annotations

import click

from maintenance.cli.actions import collect_fingerprint, collect_health, print_health
from maintenance.cli.app import AppContext, pass_app
from maintenance.cli.output import emit_fields, emit_json
from maintenance.cli.progress import progress_display, wanted


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
