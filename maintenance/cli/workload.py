"""`icemaint workload cdc`: generate a table the way streaming CDC sinks write it;
`icemaint workload fleet`: many small tables at once, without Spark."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import click

from maintenance.cli.actions import generate_cdc
from maintenance.cli.app import AppContext, pass_app
from maintenance.cli.output import emit_fields, emit_json
from maintenance.cli.progress import progress_display, wanted
from maintenance.errors import UsageError
from maintenance.workload.shape import KEYS, PARTITIONINGS, TableShape

if TYPE_CHECKING:
    from maintenance.workload.fleet import FleetOptions, FleetResult

MAX_ROWS = 20_000_000  # the generator models every live row in memory (a few hundred bytes each)
MAX_FLEET_ROWS = 1_000_000  # rows of one fleet append, built in memory at once (about 200 bytes each in Python and Arrow)


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
    @click.option("--writer", type=click.Choice(["generator", "flink"]), default="generator", show_default=True,
                  help="generator: icemaint's own commits (fast). flink: Apache Flink's Iceberg sink in upsert mode, one commit per checkpoint "
                       "(about --commits checkpoints; needs 'make flink').")
    @click.option("--checkpoint-interval", "checkpoint_interval", type=float, default=None,
                  help="Flink writer: seconds between checkpoints, so between commits [default: 2].")
    @click.option("--parallelism", type=click.IntRange(1, 2), default=None, help="Flink writer: the sink's writers [default: 1].")
    @click.option("--restarts", type=click.IntRange(0, 10), default=None,
                  help="Flink writer: when its process is killed, restart it from its latest checkpoint, at most this many times [default: 0].")
    @click.option("--model-out", "model_out", type=click.Path(dir_okay=False, writable=True), default=None,
                  help="Write the rows the table must hold afterwards (the model) to this Parquet file.")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON, with expected_rows.")
    @pass_app
    def cdc(app: AppContext, table: str, rows: int, commits: int, update_ratio: float, delete_ratio: float, partitions: int, unpartitioned: bool, partitioning: str, key: str, format_version: str, seed: int,
            writer: str, checkpoint_interval: float | None, parallelism: int | None, restarts: int | None, model_out: str | None, as_json: bool) -> None:
        """Create (or extend) a merge-on-read table and write K upsert commits like a CDC sink."""
        from pathlib import Path

        from maintenance.workload.cdc import CdcOptions
        from maintenance.workload.flink_writer import FlinkOptions

        shape = TableShape(partitioning="none" if unpartitioned else partitioning, partitions=partitions, key=key)
        options = CdcOptions(rows=rows, commits=commits, update_ratio=update_ratio, delete_ratio=delete_ratio, seed=seed, shape=shape,
                             format_version=int(format_version))
        flink = None
        if writer == "flink":
            flink = FlinkOptions(checkpoint_interval_s=checkpoint_interval or FlinkOptions.checkpoint_interval_s, parallelism=parallelism or FlinkOptions.parallelism,
                                 restarts=restarts or 0)
        elif checkpoint_interval is not None or parallelism is not None or restarts is not None:
            raise UsageError("--checkpoint-interval, --parallelism and --restarts are options of --writer flink")
        result = generate_cdc(app, table, options, show_progress=wanted(as_json), flink=flink, model_out=Path(model_out) if model_out else None)
        emit_json(result.to_json()) if as_json else emit_fields(f"cdc workload on {result.table}", result.to_json())

    @workload.command()
    @click.option("--tables", type=click.IntRange(min=1, max=1_000_000), required=True, help="How many tables (existing ones are kept as they are).")
    @click.option("--namespace", default="fleet", show_default=True, help="Their namespace, in the default catalog (or catalog.namespace).")
    @click.option("--prefix", default="t", show_default=True, help="Table names: the prefix and a zero-padded number.")
    @click.option("--commits", type=click.IntRange(min=1), default=3, show_default=True, help="Appends per table (one snapshot each).")
    @click.option("--rows", type=click.IntRange(min=1, max=MAX_FLEET_ROWS), default=100, show_default=True,
                  help=f"Rows per append (at most {MAX_FLEET_ROWS:,}: each append is built in memory; fleets are many small tables).")
    @click.option("--partitions", type=click.IntRange(min=1), default=2, show_default=True, help="Partitions per table (identity on region).")
    @click.option("--seed", type=int, default=7, show_default=True)
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @pass_app
    def fleet(app: AppContext, tables: int, namespace: str, prefix: str, commits: int, rows: int, partitions: int, seed: int, as_json: bool) -> None:
        """Create many small tables at once (pyiceberg only: no Spark job per table), for fleet-scale planning."""
        from maintenance.workload.fleet import FleetOptions

        result = generate_fleet(app, namespace, FleetOptions(tables=tables, prefix=prefix, commits=commits, rows=rows, partitions=partitions, seed=seed),
                                show_progress=wanted(as_json))
        emit_json(result.to_json()) if as_json else emit_fields(f"fleet of {tables:,} tables in {result.catalog}.{result.namespace}", result.to_json())


def generate_fleet(app: AppContext, namespace: str, options: FleetOptions, *, show_progress: bool = False) -> FleetResult:
    """The fleet in `namespace`: `ns` in the default catalog, or `catalog.ns`."""
    from maintenance.catalogs import get_catalog
    from maintenance.workload.fleet import make_fleet

    parts = namespace.strip().split(".")
    if any(not part for part in parts):
        raise UsageError(f"namespace '{namespace}' must be ns or catalog.ns")
    catalog_name = app.config.default_catalog
    if len(parts) > 1:
        app.config.catalog(parts[0])  # an unknown catalog is a usage error
        catalog_name, parts = parts[0], parts[1:]
    options = dataclasses.replace(options, namespace=".".join(parts))
    with progress_display(f"workload fleet {catalog_name}.{options.namespace}", enabled=show_progress) as progress:
        return make_fleet(get_catalog(app.config, catalog_name, create=True), catalog_name, options,
                          lambda done, total: progress("creating", tables_done=done, tables=total))
