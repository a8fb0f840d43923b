"""`icemaint db upgrade`, `icemaint leases [release TABLE --force]`, `icemaint runs`.

`leases --json` and `runs --json` print JSON arrays, as scripts read them; each entry names
the state database it came from (`state_database`, the other `--json` answers' field) rather
than the array becoming an object. An empty array names none: `-v` says it on stderr, and
the text output says it ("no runs in ...")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from maintenance.cli.app import AppContext, pass_app
from maintenance.cli.output import emit_json, emit_rows
from maintenance.errors import UsageError
from maintenance.run.outcome import iso_ms
from maintenance.units import format_seconds

if TYPE_CHECKING:
    from maintenance.state.leases import LeaseState
    from maintenance.state.runs import RunRecord


def lease_json(lease: LeaseState) -> dict[str, Any]:
    return {
        "table": lease.table,
        "holder": lease.holder if lease.held else None,
        "epoch": lease.epoch,
        "held": lease.held,
        "acquired_at": iso_ms(lease.acquired_at_ms),
        "heartbeat_at": iso_ms(lease.heartbeat_at_ms),
        "expires_at": iso_ms(lease.expires_at_ms) if lease.expires_at_ms > lease.now_ms else None,
        "expires_in_s": round((lease.expires_at_ms - lease.now_ms) / 1000, 3) if lease.expires_at_ms > lease.now_ms else None,
    }


def run_json(run: RunRecord) -> dict[str, Any]:
    out = run.to_json()
    out["started_at"] = iso_ms(out.pop("started_at_ms"))
    out["ended_at"] = iso_ms(out.pop("ended_at_ms"))
    out["duration_s"] = None if run.ended_at_ms is None else round((run.ended_at_ms - run.started_at_ms) / 1000, 3)
    return out


def _run_row(record: dict[str, Any]) -> dict[str, Any]:
    """A run as a line of text: its duration for people (`4m05s`; `-` while running)."""
    seconds = record["duration_s"]
    return {**record, "duration": None if seconds is None else format_seconds(seconds)}


def register(cli: click.Group) -> None:
    @cli.group()
    def db() -> None:
        """The state database."""

    @db.command("upgrade")
    @pass_app
    def db_upgrade(app: AppContext) -> None:
        """Apply migrations to the state database (a no-op when up to date)."""
        from maintenance.state.database import head_revision, make_engine, upgrade

        revision = upgrade(make_engine(app.config.state_url))
        click.echo(f"state database at revision {revision} (head {head_revision()})")

    @cli.group(invoke_without_command=True)
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @click.pass_context
    def leases(ctx: click.Context, as_json: bool) -> None:
        """Show table leases."""
        if ctx.invoked_subcommand is not None:
            return
        from maintenance.state.store import open_state

        app: AppContext = ctx.find_object(AppContext)
        app.start_logging()
        rows = [lease_json(lease) for lease in open_state(app.config).leases.list()]
        if as_json:
            emit_json([{**row, "state_database": app.state_database} for row in rows])
        elif rows:
            emit_rows(rows, ["table", "held", "holder", "epoch", "expires_in_s", "heartbeat_at"])
        else:
            click.echo(f"no leases in {app.state_database}")

    @leases.command("release")
    @click.argument("table")
    @click.option("--force", is_flag=True, help="Required: this takes the lease from whoever holds it.")
    @pass_app
    def leases_release(app: AppContext, table: str, force: bool) -> None:
        """An operator's forced release: takes the lease from its holder and bumps its epoch
        (the holder is fenced at its next check). Another holder can take it once the old
        expiry has passed: until then the old holder may still be inside a proven deletion."""
        from maintenance.state.store import open_state

        name = str(app.table(table))
        store = open_state(app.config).leases
        if not force:
            current = store.get(name)
            if current is None or not current.held:
                click.echo(f"the lease on {name} is not held; nothing to release")
                return
            raise UsageError(f"the lease on {name} is held by {current.holder}; taking it from its holder needs --force")
        released = store.force_release(name)
        wait_s = max(0, released.free_at_ms - released.now_ms) / 1000
        free = f"free for another holder in {wait_s:.1f} s, when the old holder's lease expires" if wait_s else "free for another holder now"
        click.echo(f"released {name}; epoch is now {released.epoch}; {free}")

    @cli.command()
    @click.option("--table", "table", default=None, help="Only this table.")
    @click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @pass_app
    def runs(app: AppContext, table: str | None, limit: int, as_json: bool) -> None:
        """Run history, newest first."""
        from maintenance.state.store import open_state

        name = str(app.table(table)) if table else None
        records = [run_json(r) for r in open_state(app.config).runs.list(table=name, limit=limit)]
        if as_json:
            emit_json([{**record, "state_database": app.state_database} for record in records])
        elif records:
            emit_rows([_run_row(r) for r in records], ["started_at", "duration", "table", "job", "status", "snapshot_id", "run_id", "error"])
        else:
            click.echo(f"no runs in {app.state_database}")
