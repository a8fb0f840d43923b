"""One maintenance cycle: evaluate tables against their policies, run what is due.

Shared by `icemaint plan` (evaluate only), `icemaint run` (evaluate, then run in order)
and the daemon (evaluate on an interval, run concurrently). Evaluation reads metadata only;
Spark starts with the first job that runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone

import structlog

from maintenance.catalogs import TableRef, list_tables, load_table, parse_table_ref
from maintenance.config import Config
from maintenance.errors import IcemaintError, UsageError
from maintenance.health import TableHealth, table_health
from maintenance.jobs.context import JobContext
from maintenance.jobs.result import JobOutcome, JobResult
from maintenance.jobs.runner import JobBody, run_job
from maintenance.planner import Decision, decide, rank
from maintenance.policy.loader import load_policies
from maintenance.policy.model import JOB_ORDER, JobPolicy, Policy
from maintenance.policy.resolve import policy_for
from maintenance.state.store import StateStore

log = structlog.get_logger(__name__)
HISTORY_LIMIT = 50


def job_body(job: str) -> JobBody:
    """The body of each job, imported only when a job runs."""
    if job == "convert":
        from maintenance.jobs.convert.job import convert as body
    elif job == "rewrite":
        from maintenance.jobs.rewrite.job import rewrite as body
    elif job == "merge":
        from maintenance.jobs.merge.job import merge as body
    elif job == "expire":
        from maintenance.jobs.expire.job import expire as body
    elif job == "orphans":
        from maintenance.jobs.orphans.job import orphans as body
    else:
        raise UsageError(f"unknown job '{job}' (known: {', '.join(JOB_ORDER)})")
    return body


@dataclass
class Evaluation:
    decisions: list[Decision] = field(default_factory=list)  # ranked
    health: dict[str, TableHealth] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)  # table -> why it could not be evaluated

    @property
    def due(self) -> list[Decision]:
        return [d for d in self.decisions if d.due]


def evaluate(config: Config, state: StateStore, refs: list[TableRef] | None = None, policies: list[Policy] | None = None,
             now: datetime | None = None) -> Evaluation:
    """Every table (or the named ones) against its policy. A table whose catalog fails is a
    problem of that table, not of the cycle; a bad policy file stops everything (exit 2)."""
    policies = policies if policies is not None else load_policies(config.policies_dir)
    now = now or datetime.now(timezone.utc)
    result = Evaluation()
    decisions: list[Decision] = []
    for ref in refs if refs is not None else list_tables(config):
        try:
            decisions.extend(evaluate_table(config, state, ref, policies, now, result))
        except UsageError:
            raise
        except IcemaintError as exc:
            result.problems[str(ref)] = str(exc)
            log.warning("table not evaluated", table=str(ref), error=str(exc))
    result.decisions = rank(decisions)
    return result


def evaluate_table(config: Config, state: StateStore, ref: TableRef, policies: list[Policy], now: datetime, into: Evaluation | None = None) -> list[Decision]:
    table = load_table(config, ref)
    table_policy = policy_for(ref, dict(table.properties), policies)
    if not table_policy.enabled or not table_policy.enabled_jobs():
        return decide(table_policy, None, [], now)  # no manifest is read for a table left alone
    health = table_health(str(ref), table, small_file_bytes=config.health.small_file_bytes, now_s=now.timestamp())
    if into is not None:
        into.health[str(ref)] = health
    history = state.runs.list(table=str(ref), limit=HISTORY_LIMIT)
    return decide(table_policy, health, history, now)


def still_due(config: Config, state: StateStore, ref: TableRef, job: str, policies: list[Policy]) -> str | None:
    """Re-checked under the lease: None if the job is still due, else why not."""
    try:
        decisions = evaluate_table(config, state, ref, policies, datetime.now(timezone.utc))
    except IcemaintError as exc:
        return f"could not re-check: {exc}"
    for decision in decisions:
        if decision.job == job:
            return None if decision.due else f"no longer due: {decision.reason}"
    return "no longer due: the job is not enabled"


def run_decision(config: Config, state: StateStore, decision: Decision, *, holder: str | None = None, dry_run: bool = False,
                 policies: list[Policy] | None = None, recheck: bool = True, progress: Callable[[object], None] | None = None) -> JobResult:
    """Run one planned job under a lease, with its policy's options and Spark settings."""
    job_policy = decision.job_policy or JobPolicy(job=decision.job)
    ref = parse_table_ref(decision.table, config)
    precheck = None
    if recheck and policies is not None:
        precheck = lambda: still_due(config, state, ref, decision.job, policies)  # noqa: E731
    return run_job(
        config, ref, decision.job, _with_spark_settings(job_body(decision.job), job_policy.spark),
        holder=holder, dry_run=dry_run, verify=job_policy.verify and not dry_run, options={**job_policy.options, "progress": progress},
        state=state, precheck=precheck,
    )


def _with_spark_settings(body: JobBody, settings: dict[str, str]) -> JobBody:
    if not settings:
        return body

    def run(ctx: JobContext) -> JobOutcome:
        with spark_settings(ctx, settings):
            return body(ctx)

    return run


@contextmanager
def spark_settings(ctx: JobContext, settings: dict[str, str]) -> Iterator[None]:
    """A policy's Spark SQL settings for one job; the session's own come back afterwards."""
    conf = ctx.spark.conf
    previous: dict[str, str | None] = {}
    try:
        for key, value in settings.items():
            if not conf.isModifiable(key):
                raise UsageError(f"Spark setting {key} cannot change in a running session; set it in the config's spark.conf")
            previous[key] = conf.get(key, None)
            conf.set(key, value)
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                conf.unset(key)
            else:
                conf.set(key, value)


def named_jobs(evaluation: Evaluation, jobs: list[str], *, include_disabled: bool) -> list[Decision]:
    """`run --job`: the named jobs on every evaluated table, whatever the triggers say
    (tables with icemaint.enabled=false only when named on the command line)."""
    for job in jobs:
        job_body(job)  # unknown names fail before anything runs
    chosen = []
    by_table: dict[str, list[Decision]] = {}
    for decision in evaluation.decisions:
        by_table.setdefault(decision.table, []).append(decision)
    for table, decisions in sorted(by_table.items(), key=lambda item: -item[1][0].reader_cost.extra_bytes):
        known = {d.job: d for d in decisions}
        if "-" in known and not include_disabled:
            continue
        for job in sorted(set(jobs), key=JOB_ORDER.index):
            base = known.get(job) or Decision(table, job, True, "", decisions[0].policy, decisions[0].reader_cost)
            chosen.append(Decision(table, job, True, f"named on the command line ({base.reason or 'not in the policy'})", base.policy,
                                   base.reader_cost, base.estimated_s, base.job_policy))
    return chosen
