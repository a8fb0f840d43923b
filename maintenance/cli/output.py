"""How results reach the terminal: JSON for scripts, short aligned text for people."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import click

from maintenance.jobs.outcome import JobResult


def emit_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, default=str))


def emit_fields(title: str, fields: Mapping[str, Any], *, skip: tuple[str, ...] = ()) -> None:
    click.echo(title)
    shown = {k: v for k, v in fields.items() if k not in skip and not isinstance(v, (list, dict))}
    width = max((len(k) for k in shown), default=0)
    for key, value in shown.items():
        click.echo(f"  {key.ljust(width)}  {'-' if value is None else value}")


def emit_rows(rows: list[Mapping[str, Any]], columns: list[str]) -> None:
    if not rows:
        return
    widths = {c: max(len(c), *(len(_cell(r.get(c))) for r in rows)) for c in columns}
    click.echo("  ".join(c.ljust(widths[c]) for c in columns))
    for row in rows:
        click.echo("  ".join(_cell(row.get(c)).ljust(widths[c]) for c in columns))


def _cell(value: Any) -> str:
    return "-" if value is None else str(value)


def report(result: JobResult, as_json: bool) -> None:
    if as_json:
        emit_json(result.to_json())
        return
    emit_fields(f"{result.job} {result.table}: {result.status}", result.to_json())
    if result.error and not result.ok:
        click.echo(f"icemaint: error: {result.error}", err=True)
