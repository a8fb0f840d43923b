"""One maintenance cycle: evaluate tables against their policies, run what is due.

Shared by `icemaint plan` (evaluate only), `icemaint run` (evaluate, then run in order)
and the daemon (evaluate on an interval, run concurrently). Evaluation reads metadata
only: each table's manifests once (`table.files` keeps them for the job that follows),
and for every job whose triggers fired it makes the job's plan, so a job with nothing to
do is not due, and the job reuses that very plan when the table has not moved. Spark
starts with the first job that runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING

import structlog

from maintenance.catalogs import TableRef, catalog_listing, load_table, no_table_hint
from maintenance.config import Config
from maintenance.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, ConfigError, IcemaintError, UsageError
from maintenance.jobs import registry
from maintenance.jobs.spec import PlanInput, PreparedPlan
from maintenance.policy.loader import load_policies, policy_properties
from maintenance.policy.model import JobPolicy, Policy
from maintenance.policy.resolve import policy_for
from maintenance.progress import Progress, no_progress
from maintenance.schedule import stored
from maintenance.schedule.decisions import Decision, decide, rank
from maintenance.schedule.histories import HISTORY_LIMIT
from maintenance.schedule.kept import Kept, KeptEvaluations
from maintenance.schedule.membership import ALONE, Membership, Share
from maintenance.schedule.overlap import in_order
from maintenance.schedule.value import predict_due, recorded
from maintenance.state.database import StateUnavailableError
from maintenance.state.store import StateStore
from maintenance.table.health import TableHealth, oldest_snapshot_ms, table_health

if TYPE_CHECKING:  # a plan never runs a job: the runner (Spark's session, publishing, the REST client) is imported by `run_decision`
    from pyiceberg.table import Table

    from maintenance.run.outcome import JobResult

log = structlog.get_logger(__name__)


@dataclass
class Evaluation:
    decisions: list[Decision] = field(default_factory=list)  # ranked
    health: dict[str, TableHealth] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)  # table -> why it could not be evaluated
    catalogs_failing: dict[str, str] = field(default_factory=dict)  # catalog -> why its tables could not be listed
    catalogs_listed: list[str] = field(default_factory=list)
    catalogs_empty: dict[str, str] = field(default_factory=dict)  # listed catalog that lists no table -> why it may not (a hint)
    catalogs_misconfigured: list[str] = field(default_factory=list)  # failing for the configuration's fault (a ConfigError)
    shares: dict[str, Share] = field(default_factory=dict)  # catalog -> this daemon's share of it (several daemons)

    @property
    def due(self) -> list[Decision]:
        return [d for d in self.decisions if d.due]

    @property
    def exit_code(self) -> int:
        """A catalog the configuration gets wrong (a missing SQLite file, a refused password) is
        exit 2, as any bad configuration; any other problem is exit 1."""
        if self.catalogs_misconfigured:
            return EXIT_USAGE
        return EXIT_FAILED if self.problems else EXIT_OK


def evaluate(config: Config, state: StateStore, refs: list[TableRef] | None = None, policies: list[Policy] | None = None,
             now: datetime | None = None, kept: KeptEvaluations | None = None, membership: Membership | None = None) -> Evaluation:
    """Every table (or the named ones) against its policy: the one evaluation loop of the
    daemon, the status page, `plan`, `run` and the demo. A failing catalog is a problem of
    its tables, and a table that cannot be evaluated, for any reason (a bug included), a
    problem of that table, not of the cycle; a configured catalog that lists no table is a
    problem too (a wrong name or path lists nothing, and "nothing due" would hide it); a bad
    policy file stops everything (exit 2); so
    does a state database that cannot be reached (no table can be decided without its history).
    `kept`: the daemon's evaluations from its previous cycle; a table whose metadata location
    has not changed since is not read again (`schedule/kept.py`). `membership`: the daemon's,
    when several share the fleet: only its share of each listed catalog is evaluated
    (`schedule/membership.py`)."""
    policies = policies if policies is not None else load_policies(config.policies_dir)
    now = now or datetime.now(timezone.utc)
    result = Evaluation()
    decisions: list[Decision] = []
    locations: dict[str, str] = {}
    listing = refs is None
    if refs is None:
        refs = []
        for name in config.catalogs:
            try:
                found, found_at = catalog_listing(config, name)
                if not found:
                    result.catalogs_empty[name] = hint = no_table_hint(config, name)
                    result.problems[f"catalog {name}"] = f"lists no table; {hint}"
                refs.extend(found)
                if kept is not None:
                    locations.update(found_at or {})
                result.catalogs_listed.append(name)
            except (UsageError, StateUnavailableError):
                raise
            except IcemaintError as exc:
                result.catalogs_failing[name] = result.problems[f"catalog {name}"] = str(exc)
                if isinstance(exc, ConfigError):
                    result.catalogs_misconfigured.append(name)
                log.warning("catalog not listed", catalog=name, error=str(exc))
    listed = {str(ref) for ref in refs}
    if listing and membership is not None:
        result.shares = membership.shares(state, result.catalogs_listed)
        refs = [ref for ref in refs if result.shares[ref.catalog].holds(ref)]
    on = stored.basis(config)
    if kept is not None:
        kept.histories.refresh(state)
        kept.histories.read_missing(state, [str(ref) for ref in refs])
        kept.reused = 0
        stored.adopt(kept, state, refs, locations, on)
    one_table = lambda ref: _evaluate_one(config, state, ref, policies, now, kept, locations.get(str(ref)))  # noqa: E731
    for ref, (found, health, problem) in zip(refs, in_order(refs, lambda name: config.catalog(name).metadata_reads, one_table)):
        decisions.extend(found)
        if health is not None:
            result.health[str(ref)] = health
        if problem is not None:
            result.problems[str(ref)] = problem
            if kept is not None:
                kept.forget(ref)
    if kept is not None:
        stored.write(kept, state, refs, on)
    if kept is not None and listing:
        kept.keep_only({str(ref) for ref in refs})
        for name in result.catalogs_listed:
            stored.forget_dropped(state, name, listed, result.shares.get(name, ALONE))
    result.decisions = rank(decisions)
    predict_due(result.due, result.health, state)
    return result


def _evaluate_one(config: Config, state: StateStore, ref: TableRef, policies: list[Policy], now: datetime, kept: KeptEvaluations | None,
                  metadata_location: str | None) -> tuple[list[Decision], TableHealth | None, str | None]:
    """One table of a cycle (on a metadata-read thread, `overlap.in_order`): its decisions,
    its health, and the problem that kept it from being evaluated, if any."""
    into = Evaluation()
    try:
        decisions = evaluate_table(config, state, ref, policies, now, into, kept=kept, metadata_location=metadata_location)
    except (UsageError, StateUnavailableError):
        raise
    except IcemaintError as exc:
        log.warning("table not evaluated", table=str(ref), error=str(exc))
        return [], None, str(exc)
    except Exception as exc:  # noqa: BLE001 (one table's unexpected failure is its row's problem; the log keeps the traceback)
        log.exception("table not evaluated", table=str(ref))
        return [], None, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return decisions, into.health.get(str(ref)), None


def evaluate_table(config: Config, state: StateStore, ref: TableRef, policies: list[Policy], now: datetime, into: Evaluation | None = None,
                   table: Table | None = None, only_job: str | None = None, kept: KeptEvaluations | None = None,
                   metadata_location: str | None = None) -> list[Decision]:
    """The table's decisions; every due job's plan is made now (`_prepared`), or with
    `only_job` only that job's (the re-check under one job's lease: planning every due job
    there planned N due jobs about N² times per cycle). With `kept` (the daemon's), what the
    previous cycle saw of the table stands while its metadata location (`metadata_location`,
    when the catalog listed it, else the loaded table's) is the same (`schedule/kept.py`)."""
    found = kept.get(ref, metadata_location) if kept is not None and table is None else None
    if found is None:
        table = table if table is not None else load_table(config, ref)
        found = kept.get(ref, table.metadata_location) if kept is not None else None
    properties = found.properties if found is not None else policy_properties(table.properties)  # type: ignore[union-attr]
    table_policy = policy_for(ref, properties, policies)
    active = table_policy.enabled and bool(table_policy.enabled_jobs())
    health = found.health_at(now.timestamp()) if found is not None else None
    if found is None or (active and health is None):
        table = table if table is not None else load_table(config, ref)
        if found is not None and table.metadata_location != found.metadata_location:
            return evaluate_table(config, state, ref, policies, now, into, table, only_job, kept)  # it moved meanwhile
        health = table_health(str(ref), table, small_file_bytes=config.health.small_file_bytes, now_s=now.timestamp()) if active else None
        found = Kept(table.metadata_location, properties, health, oldest_snapshot_ms(table.metadata))
    elif kept is not None:
        kept.count_reused()
    if kept is not None:
        kept.keep(ref, found)
    if not active:
        return decide(table_policy, None, [], now)  # no manifest is read for a table left alone
    assert health is not None
    if into is not None:
        into.health[str(ref)] = health
    history = kept.histories.of(state, str(ref)) if kept is not None else state.runs.list(table=str(ref), limit=HISTORY_LIMIT)
    decisions = decide(table_policy, health, history, now)
    chosen = [d for d in decisions if d.due and only_job in (None, d.job)]
    for decision in chosen:
        nothing = found.nothing_to_do.get(_plan_key(decision))
        if nothing is not None:
            _nothing_to_do(decision, nothing)
    to_plan = [d for d in chosen if d.due and registry.job(d.job).plans_from_metadata]
    if to_plan:
        table = table if table is not None else load_table(config, ref)
        if table.metadata_location != found.metadata_location:
            return evaluate_table(config, state, ref, policies, now, into, table, only_job, kept)  # it moved since it was listed
        inputs = PlanInput(ref, table, config, int(now.timestamp() * 1000))
        for decision in to_plan:
            nothing = _prepared(decision, inputs)
            if nothing is not None and not registry.job(decision.job).plans_at_a_time:
                found.nothing_to_do[_plan_key(decision)] = nothing
    return decisions


def _plan_key(decision: Decision) -> tuple[str, str]:
    """A plan's key among a table's kept plans: the job and its policy's options."""
    return decision.job, repr(decision.job_policy.options if decision.job_policy else None)


def _prepared(decision: Decision, inputs: PlanInput) -> str | None:
    """A due job's plan, made now from the metadata already read, in the decision; when the
    plan has nothing to do, the job is not due, and this says why (the plan's words)."""
    spec = registry.job(decision.job)
    options = spec.parse_options(decision.job_policy.options if decision.job_policy else None)
    plan = spec.plan(inputs, options)
    if plan.empty:
        nothing = plan.nothing_to_do()
        _nothing_to_do(decision, nothing)
        return nothing
    decision.prepared = PreparedPlan(inputs.table.metadata.current_snapshot_id, options, plan)
    return None


def _nothing_to_do(decision: Decision, nothing: str) -> None:
    decision.due, decision.reason = False, f"nothing to do: {nothing} (fired: {decision.reason})"


def still_due(config: Config, state: StateStore, ref: TableRef, decision: Decision, policies: list[Policy]) -> str | None:
    """Re-checked under the lease: None if the job is still due, else why not. When the
    table has not moved, the evaluation's health and plan stand (no manifest is read again);
    the run history may have moved (another daemon just did the job), so it is read again."""
    try:
        table = load_table(config, ref)
        decisions = evaluate_table(config, state, ref, policies, datetime.now(timezone.utc), table=table, only_job=decision.job)
    except IcemaintError as exc:
        return f"could not re-check: {exc}"
    for found in decisions:
        if found.job == decision.job:
            if found.due and found.prepared is not None:
                decision.prepared = found.prepared  # the newest plan, for the run to reuse
            return None if found.due else f"no longer due: {found.reason}"
    return "no longer due: the job is not enabled"


def run_decision(config: Config, state: StateStore, decision: Decision, *, holder: str | None = None, dry_run: bool = False,
                 policies: list[Policy] | None = None, recheck: bool = True, progress: Progress = no_progress) -> JobResult:
    """Run one planned job under a lease, with its policy's options and Spark settings."""
    from maintenance.run.runner import run_job

    job_policy = decision.job_policy or JobPolicy(job=decision.job)
    ref = decision.ref
    precheck = None
    if recheck and policies is not None:
        precheck = lambda: still_due(config, state, ref, decision, policies)  # noqa: E731
    return run_job(
        config, ref, decision.job, job_policy.options,
        holder=holder, dry_run=dry_run, verify=job_policy.verify and not dry_run, state=state, precheck=precheck,
        prepared=lambda: decision.prepared, progress=progress, spark_settings=job_policy.spark,  # the re-check's plan, if it made one
        predicted=recorded(decision.prediction, decision.estimated_s) if decision.prediction is not None else None,
    )


def named_jobs(evaluation: Evaluation, jobs: list[str], *, include_disabled: bool) -> list[Decision]:
    """`run --job`: the named jobs on every evaluated table, whatever the triggers say
    (tables with icemaint.enabled=false only when named on the command line)."""
    for name in jobs:
        registry.job(name)  # unknown names fail before anything runs
    chosen = []
    by_table: dict[str, list[Decision]] = {}
    for decision in evaluation.decisions:
        by_table.setdefault(decision.table, []).append(decision)
    for table, decisions in sorted(by_table.items(), key=lambda item: -item[1][0].reader_cost.extra_bytes):
        known = {d.job: d for d in decisions}
        if "-" in known and not include_disabled:
            continue
        health = evaluation.health.get(table)
        for name in sorted(set(jobs), key=registry.order):
            base = known.get(name) or Decision(decisions[0].ref, name, True, "", decisions[0].policy, decisions[0].reader_cost,
                                               registry.job(name).estimate(health) if health is not None else 0.0)  # a job the policy has not
            chosen.append(Decision(decisions[0].ref, name, True, f"named on the command line ({base.reason or 'not in the policy'})", base.policy,
                                   base.reader_cost, base.estimated_s, base.job_policy, base.prepared))
    return chosen
