"""Entry point: global options, and the one place errors become a line and an exit code.

Importing this imports every command module, each light (`cli/app.py`): the help of every
command is there without pyiceberg, Spark, SQLAlchemy or structlog."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from maintenance.cli.app import AppContext
from maintenance.cli.exits import interrupted
from maintenance.errors import EXIT_FAILED, EXIT_USAGE, IcemaintError
from maintenance.logs import LOG_FORMATS, level_names
from maintenance.redact import redact_text


class IcemaintGroup(click.Group):
    """The top-level group: its options (`--config`, `--log-format`, `--log-level`,
    `--verbose`) are accepted after the command too, as before it."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, hoist_options(args, self.value_options(), self.flag_options()))

    def value_options(self) -> set[str]:
        return {name for p in self.params if isinstance(p, click.Option) and not p.is_flag for name in p.opts}

    def flag_options(self) -> set[str]:
        """The group's own flags (`--help` and `--version` stay where they are: after a
        command they are that command's)."""
        return {name for p in self.params if isinstance(p, click.Option) and p.is_flag and p.name in ("verbose",) for name in p.opts}


def hoist_options(args: Sequence[str], names: set[str], flags: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """`args` with every option of `names` and its value, and every flag of `flags`, moved to the front, in their order
    (so the last one given still wins), up to a `--`: `plan --config x T` is `--config x plan T`.
    One left without its value (the last argument) ends the list there, so that click says
    what it lacks rather than take the command for its value."""
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest.extend(args[i:])
            break
        if arg in flags:
            front.append(arg)
            i += 1
            continue
        name, has_value, _ = arg.partition("=")
        if name in names:
            if not has_value and i + 1 == len(args):
                return [*front, arg]  # "Option '--config' requires an argument."
            taken = 1 if has_value else 2
            front.extend(args[i:i + taken])
            i += taken
            continue
        rest.append(arg)
        i += 1
    return front + rest


@click.group(cls=IcemaintGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--config", "config_path", metavar="PATH", help="Config file (default: $ICEMAINT_CONFIG, ./icemaint.yaml, else the embedded default).")
@click.option("--log-format", type=click.Choice(LOG_FORMATS), default=None, help="Log format on stderr (console on a TTY, json otherwise).")
@click.option("--log-level", type=click.Choice(level_names()), default=None, help="Log level on stderr (default: off for commands, info for the daemon).")
@click.option("-v", "--verbose", is_flag=True, help="Log at info on stderr (as --log-level info): which config, state database and catalogs a command uses.")
@click.version_option(package_name="icemaint")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None, log_format: str | None, log_level: str | None, verbose: bool) -> None:
    """icemaint: keeps Iceberg merge-on-read tables healthy.

    \b
    --config, --log-format, --log-level and -v may also follow the command:
    `icemaint plan --config x` is `icemaint --config x plan`."""
    ctx.obj = AppContext(config_path=config_path, log_format=log_format, log_level=log_level or ("info" if verbose else None),
                         daemon=ctx.invoked_subcommand == "daemon")


def _register_commands() -> None:
    from maintenance.cli import demo, inspect, jobs, schedule, state, ui, workload

    for module in (inspect, workload, jobs, schedule, state, ui, demo):
        module.register(cli)


_register_commands()


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; any error ends as one line on stderr and the contract's exit code."""
    try:
        code = cli.main(args=argv, prog_name="icemaint", standalone_mode=False)
    except click.exceptions.Abort as exc:
        if isinstance(exc.__cause__, KeyboardInterrupt):
            interrupted()
        _fail("aborted", EXIT_FAILED)
    except click.ClickException as exc:
        _fail(exc.format_message(), EXIT_USAGE if isinstance(exc, click.UsageError) else exc.exit_code)
    except IcemaintError as exc:
        _log().error("command failed", error=str(exc), exc_info=exc.__cause__ is not None)
        _fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        interrupted()
    except Exception as exc:  # a bug: keep the trace in the log, one line on the terminal
        _log().error("unexpected error", exc_info=True)
        _fail(f"unexpected {type(exc).__name__}: {redact_text(str(exc).splitlines()[0] if str(exc) else '')} (details in the log)", EXIT_FAILED)
    sys.exit(code if isinstance(code, int) else 0)


def _log():  # type: ignore[no-untyped-def]
    """The logger for an error: the command's logs when it had set them up, else quiet ones
    (structlog's defaults would print the traceback, with local variables, on stdout)."""
    import structlog

    from maintenance.logs import configure_quiet

    if not structlog.is_configured():
        configure_quiet()
    return structlog.get_logger(__name__)


def _fail(message: str, code: int) -> None:
    click.echo(f"icemaint: error: {redact_text(message)}", err=True)
    sys.exit(code)
