"""`icemaint <job> TABLE [options]`: one command per registered job, its flags generated
from the job's options; and `icemaint jobs`, which lists them all."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from maintenance.cli.actions import naming_the_table
from maintenance.cli.output import emit_json, emit_rows, report
from maintenance.cli.progress import progress_display, wanted
from maintenance.errors import EXIT_FAILED, EXIT_OK
from maintenance.jobs import registry
from maintenance.jobs.docs import jobs_json, jobs_markdown
from maintenance.jobs.options import Flag, OptionSpec
from maintenance.jobs.spec import JobSpec

if TYPE_CHECKING:
    from maintenance.cli.app import AppContext

COMMON_HELP = {
    "dry_run": "Plan and report; change nothing.",
    "verify": "Stage the change, verify it (the content of the files it can affect; MANIFESTS: the live entries; EXPIRE and ORPHANS: "
              "every file a retained snapshot needs), publish only then. On by default; --no-verify commits directly.",
    "as_json": "Print JSON (the README's CLI reference lists the fields).",
}


def run_and_report(app: AppContext, table: str, spec: JobSpec, options: Any, *, dry_run: bool, verify: bool, as_json: bool) -> int:
    from maintenance.catalogs import load_table
    from maintenance.run.runner import run_job
    from maintenance.spark.session import check_spark_settings

    check_spark_settings(app.config)
    ref = app.table(table)
    loaded = load_table(app.config, ref)  # an unknown table is a usage error, before any lease
    if spec.check_table is not None:
        spec.check_table(loaded, options)
    with progress_display(f"{spec.name} {ref}", enabled=wanted(as_json)) as progress, naming_the_table(ref):
        result = run_job(app.config, ref, spec, options, dry_run=dry_run, verify=verify, progress=progress)
    report(result, as_json, app.state_database)
    return EXIT_OK if result.ok else EXIT_FAILED


def _flag(option: OptionSpec) -> click.Option:
    assert option.flag is not None
    shown = option.kind.show(option.default)
    default_text = f" [default: {shown}]" if shown not in (None, (), False) else ""
    names = [option.flag, *([option.iceberg_flag] if option.iceberg_flag else []), option.name]
    if isinstance(option.kind, Flag):
        if option.default is True:  # on unless turned off: the flag and its `--no-` form
            return click.Option([f"{option.flag}/--no-{option.flag.removeprefix('--')}", option.name], default=None, help=option.help + " [default: on]")
        return click.Option(names, is_flag=True, default=None, help=option.help)
    metavar = option.metavar or option.kind.name.split()[0].upper()
    alias = f" (Iceberg: {option.iceberg_flag})" if option.iceberg_flag else ""
    return click.Option(names, multiple=option.repeatable, default=None, metavar=metavar, help=option.help + alias + default_text)


def options_from_flags(spec: JobSpec, values: Mapping[str, Any]) -> Any:
    """The job's options from its flags as click passes them (by field name): a flag's
    string, or a repeatable flag's strings, meet the option's `Kind.parse`, the very
    function a table property's string meets; a flag not given leaves the default."""
    given = {name: value for name, value in values.items() if value is not None and value != ()}
    return spec.parse_options(given)


def job_command(spec: JobSpec) -> click.Command:
    """The command of one job: TABLE, the common flags, and the job's own."""
    from maintenance.cli.app import pass_app

    own = [o for o in spec.option_specs() if o.flag is not None]

    @pass_app
    def callback(app: AppContext, table: str, dry_run: bool, verify: bool, as_json: bool, **values: Any) -> int:
        options = options_from_flags(spec, values)
        return run_and_report(app, table, spec, options, dry_run=dry_run, verify=verify, as_json=as_json)

    params: list[click.Parameter] = [
        click.Argument(["table"]),
        click.Option(["--dry-run", "dry_run"], is_flag=True, help=COMMON_HELP["dry_run"]),
        click.Option(["--verify/--no-verify", "verify"], default=True, show_default=True, help=COMMON_HELP["verify"]),
        click.Option(["--json", "as_json"], is_flag=True, help=COMMON_HELP["as_json"]),
        *(_flag(o) for o in own),
    ]
    return click.Command(spec.name, params=params, callback=callback, help=spec.summary, short_help=spec.summary)


def register(cli: click.Group) -> None:
    for spec in registry.JOBS:
        cli.add_command(job_command(spec))

    @cli.command("jobs")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON: {\"jobs\": [{\"name\": ..., \"options\": [...]}]}.")
    @click.option("--markdown", is_flag=True, help="Print the reference as Markdown (docs/cli.md).")
    def jobs(as_json: bool, markdown: bool) -> None:
        """Every job with its options: type, default, flag, policy key, table property."""
        if as_json:
            emit_json(jobs_json())
            return
        if markdown:
            click.echo(jobs_markdown())
            return
        for spec in registry.JOBS:
            click.echo(f"{spec.name}: {spec.summary}")
            rows = [{**o.to_json(spec.name), "default": o.to_json(spec.name)["default"]} for o in spec.option_specs()]
            if rows:
                emit_rows(rows, ["name", "type", "default", "flag", "policy_key"])
            click.echo("")
