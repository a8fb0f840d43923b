"""`icemaint plan`, `icemaint run` and `icemaint daemon`: the policies put to work."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import click

from maintenance.cli.actions import evaluate_tables, run_decisions
from maintenance.cli.app import AppContext, pass_app
from maintenance.cli.output import emit_json, emit_json_line, emit_rows
from maintenance.cli.params import BUDGET, DURATION, POSITIVE_DURATION, DaemonSetting
from maintenance.errors import EXIT_FAILED, EXIT_OK, UsageError
from maintenance.jobs.registry import JOB_NAMES

if TYPE_CHECKING:
    from maintenance.schedule.cycle import Evaluation
    from maintenance.schedule.decisions import Decision
    from maintenance.state.store import StateStore


def _note_unselected(app: AppContext, decisions: list) -> None:  # type: ignore[type-arg]
    """Tables no policy selects get no maintenance: say so, since a `policies:` folder of
    one's own replaces the shipped one, default policy included."""
    from maintenance.config import REPO_POLICIES
    from maintenance.schedule.decisions import NO_POLICY

    unselected = sorted({d.table for d in decisions if d.reason == NO_POLICY})
    if unselected:
        shipped = "" if app.config.policies_dir == REPO_POLICIES else f"; the shipped default policy ({REPO_POLICIES / 'default.yaml'}) is not in it"
        click.echo(f"note: no policy in {app.config.policies_dir} selects {len(unselected)} table(s) (e.g. {unselected[0]}): they get no "
                   f"maintenance{shipped}", err=True)


FRESH_HELP = ("Read every table's metadata again (default: a table still at the metadata location the state database's stored "
              "evaluation was made at is decided from it, as daemons do).")


def _evaluated_any(evaluation: Evaluation) -> bool:
    """Whether "nothing due on N table(s)" says something: not when no table was evaluated
    because a catalog could not be listed or lists none (its problem is the answer)."""
    return bool(evaluation.decisions) or not evaluation.problems


def _report_problems(problems: dict[str, str]) -> None:
    for table, problem in problems.items():
        click.echo(f"icemaint: error: {table}: {problem}", err=True)


def _show_budget(evaluation: Evaluation, budget_s: float, order: str, as_json: bool) -> int:
    """`plan --budget`: the choice a daemon with this budget would make now (`schedule/budget.py`)."""
    from maintenance.schedule.budget import choose

    choices = choose(evaluation.due, budget_s, order)
    rows = [{"run": "run" if c.chosen else "wait", "table": c.decision.table, "job": c.decision.job, **c.prediction.to_json(), "why": c.why} for c in choices]
    if as_json:
        emit_json({"budget_s": budget_s, "choices": rows, "problems": evaluation.problems})
    else:
        if not rows and _evaluated_any(evaluation):
            click.echo(f"nothing due on {len({d.table for d in evaluation.decisions})} table(s)")
        emit_rows(rows, ["run", "table", "job", "cost_s", "benefit_s_per_day", "scans_per_day", "benefit_basis", "why"])
        _report_problems(evaluation.problems)
    return evaluation.exit_code


def _within_budget(due: list[Decision], budget_s: float, order: str, state: StateStore) -> list[Decision]:
    """`run --budget`: the due jobs that fit in what the last hour's recorded runs left of the
    budget (`schedule/budget.py`); what waits is said in one line."""
    from maintenance.schedule.budget import choose, recorded_spending
    from maintenance.units import format_seconds

    spent = recorded_spending(state)
    choices = choose(due, max(0.0, budget_s - spent), order, budget_s)
    waiting = [c for c in choices if not c.chosen]
    if waiting:
        click.echo(f"budget: {len(waiting)} of {len(choices)} due job(s) wait ({format_seconds(spent)} of {format_seconds(budget_s)} spent in the last "
                   f"hour; first: {waiting[0].decision.table} {waiting[0].decision.job}, {waiting[0].why}); 'icemaint plan --budget' lists them", err=True)
    return [c.decision for c in choices if c.chosen]


def register(cli: click.Group) -> None:
    @cli.command()
    @click.argument("tables", nargs=-1, metavar="[TABLE]...")
    @click.option("--all", "show_all", is_flag=True, help="Also list the jobs that are not due, with why.")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @click.option("--fresh", is_flag=True, help=FRESH_HELP)
    @click.option("--budget", type=BUDGET, metavar="SECONDS_PER_HOUR",
                  help="Show which due jobs this many compute-seconds of job runs an hour (600, or 10m) would run, in daemon.budget_order (best value for readers first by default), and what waits and why.")
    @pass_app
    def plan(app: AppContext, tables: tuple[str, ...], show_all: bool, as_json: bool, fresh: bool, budget: float | None) -> int:
        """What is due, per policy, and why, worst tables first; changes nothing."""
        evaluation, _, _, reused = evaluate_tables(app, tables, fresh=fresh)
        if budget is not None:
            return _show_budget(evaluation, budget, app.config.daemon.budget_order, as_json)
        if as_json:
            emit_json({"decisions": [d.to_json() for d in evaluation.decisions], "problems": evaluation.problems, "state_database": app.state_database,
                       "tables_reused": reused})
        else:
            shown = evaluation.decisions if show_all else evaluation.due
            if not shown and _evaluated_any(evaluation):
                click.echo(f"nothing due on {len({d.table for d in evaluation.decisions})} table(s)")
            emit_rows([{**d.to_json(), "due": "due" if d.due else "-"} for d in shown],
                      ["due", "table", "job", "policy", "read_amplification", "extra_opens_per_scan", "delete_records_per_scan", "estimated_s", "reason"])
            _note_unselected(app, evaluation.decisions)
            _report_problems(evaluation.problems)
        return evaluation.exit_code

    @cli.command()
    @click.argument("tables", nargs=-1, metavar="[TABLE]...")
    @click.option("--job", "jobs", multiple=True, type=click.Choice(JOB_NAMES), help="Run this job whatever the triggers say (repeatable).")
    @click.option("--dry-run", is_flag=True, help="Plan each job and report; change nothing.")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON Lines: one job result per line, as each job ends.")
    @click.option("--fresh", is_flag=True, help=FRESH_HELP)
    @click.option("--budget", type=BUDGET, metavar="SECONDS_PER_HOUR",
                  help="Run only the due jobs that fit in what this many compute-seconds an hour (600, or 10m) have left after the last hour's "
                       "recorded runs, in daemon.budget_order; the others wait for a later run.")
    @pass_app
    def run(app: AppContext, tables: tuple[str, ...], jobs: tuple[str, ...], dry_run: bool, as_json: bool, fresh: bool, budget: float | None) -> int:
        """One maintenance cycle under leases, then exit (for cron)."""
        from maintenance.schedule.cycle import named_jobs
        from maintenance.schedule.value import predict_due

        if budget is not None and jobs:
            raise UsageError("--budget chooses among the due jobs; --job names the jobs to run: give one of them")
        evaluation, policies, state, _ = evaluate_tables(app, tables, fresh=fresh)
        chosen = evaluation.due
        if jobs:
            chosen = named_jobs(evaluation, list(jobs), include_disabled=bool(tables))
            predict_due(chosen, evaluation.health, state)  # a named run records its prediction as a due one does
        if budget is not None:
            chosen = _within_budget(chosen, budget, app.config.daemon.budget_order, state)
        results = run_decisions(app, state, chosen, policies, dry_run=dry_run, recheck=not jobs, as_json=as_json)
        evaluated = len({d.table for d in evaluation.decisions})
        if not chosen and not as_json and _evaluated_any(evaluation):
            click.echo(f"nothing due on {evaluated} table(s)")
        elif not chosen and dry_run and _evaluated_any(evaluation):  # a dry run always answers; a real one appends only job results (cron's JSON Lines file)
            emit_json_line({"status": "nothing due", "tables": evaluated, "dry_run": True, "state_database": app.state_database})
        _report_problems(evaluation.problems)
        return evaluation.exit_code or (EXIT_OK if all(r.ok for r in results) else EXIT_FAILED)

    @cli.command()
    @click.option("--interval", cls=DaemonSetting, key="interval", type=POSITIVE_DURATION, metavar="DURATION", help="Between evaluations of every table.")
    @click.option("--max-concurrent-jobs", cls=DaemonSetting, key="max_concurrent_jobs", type=click.IntRange(min=1), metavar="N",
                  help="Tables worked on at once (one job per table at a time).")
    @click.option("--spark-idle", cls=DaemonSetting, key="spark_idle", type=DURATION, metavar="DURATION", help="Stop Spark after this long without a job.")
    @click.option("--shutdown-grace", cls=DaemonSetting, key="shutdown_grace", type=DURATION, metavar="DURATION",
                  help="On SIGTERM/SIGINT, let running jobs finish this long, then cancel them.")
    @click.option("--metrics-port", cls=DaemonSetting, key="metrics_port", type=click.IntRange(0, 65535), metavar="PORT",
                  help="Port of /metrics, the probes and the status page; 0 turns them off.")
    @click.option("--metrics-host", cls=DaemonSetting, key="metrics_host", metavar="HOST", help="Address they listen on; 127.0.0.1 keeps them local.")
    @click.option("--metrics-tables", cls=DaemonSetting, key="metrics_tables", type=click.IntRange(min=0), metavar="N",
                  help="Per-table metric series for at most this many tables; 0: none.")
    @click.option("--budget", cls=DaemonSetting, key="budget", type=BUDGET, metavar="SECONDS_PER_HOUR",
                  help="Compute-seconds of job runs per hour (600, or 10m); beyond it due jobs wait, the best value for readers first.")
    @pass_app
    def daemon(app: AppContext, **settings: object) -> int:
        """The scheduler: evaluates every table on an interval and runs what is due, until SIGTERM/SIGINT.

        Its settings are the config's `daemon:` section (README, Deployment); each flag overrides one key."""
        from maintenance.daemon.service import Daemon
        from maintenance.spark.session import check_spark_settings

        config = app.config
        check_spark_settings(config)  # a configuration Spark cannot take: exit 2 at start, not a failed job each cycle
        flags = [p for p in click.get_current_context().command.params if isinstance(p, DaemonSetting)]
        given = {flag.attribute: settings[flag.name] for flag in flags if flag.name and settings[flag.name] is not None}
        if given:
            config = dataclasses.replace(config, daemon=dataclasses.replace(config.daemon, **given))
        return Daemon(config).run()
