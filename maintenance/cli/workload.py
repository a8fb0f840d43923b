"""`icemaint workload cdc`: generate a table the way streaming CDC sinks write it."""

from __future__ import annotations

import click

from maintenance.cli.actions import generate_cdc
from maintenance.cli.app import AppContext, pass_app
from maintenance.cli.output import emit_fields, emit_json
from maintenance.cli.progress import wanted
from maintenance.workload.cdc import CdcOptions
from maintenance.workload.shape import KEYS, PARTITIONINGS, TableShape

MAX_ROWS = 20_000_000  # the generator models every live row in memory (a few hundred bytes each)


def register(cli: click.Group) -> None:
    @cli.group()
    def workload() -> None:
        """Generate test workloads."""

    @workload.command()
    @click.argument("table")
    @click.option("--rows", type=click.IntRange(min=1, max=MAX_ROWS), default=10_000, show_default=True,
                  help=f"Change events in all (at most {MAX_ROWS:,} per call: the generator models every live row in memory; call again to extend).")
    @click.option("--commits", type=click.IntRange(min=1), default=10, show_default=True, help="Commits to spread them over.")
    @click.option("--update-ratio", type=click.FloatRange(0, 1), default=0.1, show_default=True)
    @click.option("--delete-ratio", type=click.FloatRange(0, 1), default=0.02, show_default=True)
    @click.option("--partitions", type=click.IntRange(min=1), default=4, show_default=True, help="Regions, and partitions when partitioned.")
    @click.option("--unpartitioned", is_flag=True, help="No partitioning: every equality delete is global.")
    @click.option("--partitioning", type=click.Choice(PARTITIONINGS), default="identity", show_default=True)
    @click.option("--key", "key", type=click.Choice(KEYS), default="single", show_default=True, help="single (id) or composite (region, id).")
    @click.option("--format-version", "format_version", type=click.Choice(["2", "3"]), default="2", show_default=True,
                  help="3: in-batch supersedes become deletion vectors (equality deletes stay), as Flink writes format 3.")
    @click.option("--seed", type=int, default=42, show_default=True)
    @click.option("--json", "as_json", is_flag=True, help="Print JSON, with expected_rows.")
    @pass_app
    def cdc(app: AppContext, table: str, rows: int, commits: int, update_ratio: float, delete_ratio: float, partitions: int, unpartitioned: bool, partitioning: str, key: str, format_version: str, seed: int, as_json: bool) -> None:
        """Create (or extend) a merge-on-read table and write K upsert commits like a CDC sink."""
        shape = TableShape(partitioning="none" if unpartitioned else partitioning, partitions=partitions, key=key)
        options = CdcOptions(rows=rows, commits=commits, update_ratio=update_ratio, delete_ratio=delete_ratio, seed=seed, shape=shape,
                             format_version=int(format_version))
        result = generate_cdc(app, table, options, show_progress=wanted(as_json))
        emit_json(result.to_json()) if as_json else emit_fields(f"cdc workload on {result.table}", result.to_json())
