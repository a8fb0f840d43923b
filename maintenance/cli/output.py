"""How results reach the terminal: JSON for scripts, short aligned text for people."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from maintenance.cli.json_text import dumps_indented
from maintenance.state.statuses import SKIPPED

if TYPE_CHECKING:
    from maintenance.run.outcome import JobResult

LIST_ITEMS_SHOWN = 10  # a list in text output: its first items and how many there are


def emit_json(value: Any) -> None:
    click.echo(dumps_indented(value))  # `json.dumps(value, indent=2, default=str)`, with the C encoder doing most


def emit_json_line(value: Any) -> None:
    """One JSON object on one line (JSON Lines: `icemaint run --json >> file` appends records)."""
    click.echo(json.dumps(value, default=str, separators=(",", ":")))


def emit_fields(title: str, fields: Mapping[str, Any], *, skip: tuple[str, ...] = ()) -> None:
    """Scalars aligned, one per line; then each list and mapping: its size and first items."""
    click.echo(title)
    shown = {k: v for k, v in fields.items() if k not in skip and not isinstance(v, (list, dict))}
    width = max((len(k) for k in shown), default=0)
    for key, value in shown.items():
        click.echo(f"  {key.ljust(width)}  {'-' if value is None else value}")
    for key, value in fields.items():
        if key in skip or not isinstance(value, (list, dict)):
            continue
        items = [f"{k}: {v}" for k, v in value.items()] if isinstance(value, dict) else [_item(v) for v in value]
        if not items:
            continue
        click.echo(f"  {key} ({len(items):,}):")
        for item in items[:LIST_ITEMS_SHOWN]:
            click.echo(f"    {item}")
        if len(items) > LIST_ITEMS_SHOWN:
            click.echo(f"    … and {len(items) - LIST_ITEMS_SHOWN:,} more (--json lists them all)")


def _item(value: Any) -> str:
    """A list item on one line: a mapping (a MERGE group) as `key=value` pairs, its lists by
    their first entries or their count."""
    if not isinstance(value, Mapping):
        return str(value)
    parts = []
    for key, inner in value.items():
        if isinstance(inner, (list, tuple)):
            inner = ",".join(map(str, inner)) if len(inner) <= 3 else f"{len(inner):,} ({inner[0]}, …)"
        parts.append(f"{key}={inner}")
    return " ".join(parts)


def emit_rows(rows: list[Mapping[str, Any]], columns: list[str], *, indent: str = "") -> None:
    if not rows:
        return
    widths = {c: max(len(c), *(len(_cell(r.get(c))) for r in rows)) for c in columns}
    click.echo(indent + "  ".join(c.ljust(widths[c]) for c in columns).rstrip())
    for row in rows:
        click.echo(indent + "  ".join(_cell(row.get(c)).ljust(widths[c]) for c in columns).rstrip())


def _cell(value: Any) -> str:
    return "-" if value is None else str(value)


def result_json(result: JobResult, state_database: str | None) -> dict[str, Any]:
    """A job result as `--json` prints it: with the state database its run was recorded in."""
    return {**result.to_json(), **({"state_database": state_database} if state_database else {})}


def report(result: JobResult, as_json: bool, state_database: str | None = None) -> None:
    if as_json:
        emit_json(result_json(result, state_database))
        return
    if result.status == SKIPPED:  # not an error: why it did not run
        emit_fields(f"{result.job} {result.table}: skipped ({result.reason})", result.to_json(), skip=("reason",))
        return
    if result.reason is not None:  # a noop: why, in the title
        emit_fields(f"{result.job} {result.table}: {result.status}, {result.reason}", result.to_json(), skip=("reason",))
        return
    if result.effect is not None:  # committed without a new snapshot: what changed instead, in the title
        emit_fields(f"{result.job} {result.table}: {result.status}, {result.effect}", result.to_json(), skip=("effect", "snapshot_id"))
    else:
        emit_fields(f"{result.job} {result.table}: {result.status}", result.to_json())
    if result.error and not result.ok:
        click.echo(f"icemaint: error: {result.error}", err=True)
