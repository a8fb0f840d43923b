"""The decisions: from table health (metadata only) and policies, what is due, why, and in
which order (a `Decision` per table and job; a job's own plan is its folder's `plan.py`).

Tables are ranked by what their delete and small files cost readers per full scan,
estimated in bytes a reader handles beyond a clean table's (`table.reader_cost`: an opened
file counts as Spark's 4 MiB open cost): each data-file task opens every delete file that applies to it
(by the delete rule's scope: partition, or all of the table for a global equality delete,
and sequence numbers) and holds every applicable equality delete in memory, so deletes
cost in proportion to the data files they apply to, not to their own number. (Amoro weighs small
files, equality and position deletes 40/40/20 whatever the table's size; this ranks a
table with 100 equality deletes over 1,000 data files far above one with 100 over 2.)
Within a table, jobs run in the registry's order (`jobs/registry.py`, the one list of jobs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from maintenance.backoff import doubling
from maintenance.catalogs import TableRef
from maintenance.durations import format_duration
from maintenance.jobs import registry
from maintenance.jobs.spec import PreparedPlan
from maintenance.policy.model import JobPolicy, TablePolicy
from maintenance.policy.triggers import compared
from maintenance.run.outcome import COMMITTED, FAILED, FENCED, NOOP
from maintenance.state.runs import RunRecord
from maintenance.table.health import TableHealth
from maintenance.table.reader_cost import NO_COST, ReaderCost, reader_cost
from maintenance.units import format_seconds

if TYPE_CHECKING:
    from maintenance.schedule.value import Prediction

BACKOFF_BASE_S = 60.0
BACKOFF_MAX_S = 3600.0
DONE = (COMMITTED, NOOP)  # a run that counts for the schedule
UNSUCCESSFUL = (FAILED, FENCED)  # a run that counts for the backoff


@dataclass
class Decision:
    ref: TableRef  # the table, as the job runner takes it (`table` is its name, as shown and keyed)
    job: str
    due: bool
    reason: str
    policy: str
    reader_cost: ReaderCost
    estimated_s: float = 0.0
    job_policy: JobPolicy | None = field(default=None, repr=False)
    prepared: PreparedPlan | None = field(default=None, repr=False)  # the plan made while evaluating
    prediction: Prediction | None = None  # of a due job: its cost and its readers' gain (`schedule/value.py`)

    @property
    def table(self) -> str:
        return str(self.ref)

    def to_json(self) -> dict[str, Any]:
        return {
            "table": self.table, "job": self.job, "due": self.due, "reason": self.reason, "policy": self.policy,
            "estimated_s": round(self.estimated_s, 1), **self.reader_cost.to_json(),
            **(self.prediction.to_json() if self.prediction is not None else {}),
        }


NO_POLICY = "no policy selects it"


def decide(table_policy: TablePolicy, health: TableHealth | None, history: list[RunRecord], now: datetime) -> list[Decision]:
    """One decision per enabled job of the table's policy, due or not, with the reason
    (`health` may be None for a table that is disabled or that no policy selects)."""
    table = table_policy.ref
    if not table_policy.enabled or health is None:
        why = "disabled by icemaint.enabled=false" if table_policy.overrides.get("icemaint.enabled") else NO_POLICY
        return [Decision(table, "-", False, why if not table_policy.enabled else "no job enabled", table_policy.policy, NO_COST)]
    cost = reader_cost(health)
    decisions = []
    for job_policy in table_policy.enabled_jobs():
        due, reason = _due(job_policy, health, [r for r in history if r.job == job_policy.job], now)
        decisions.append(Decision(table, job_policy.job, due, reason, table_policy.policy, cost, registry.job(job_policy.job).estimate(health), job_policy))
    return decisions


def rank(decisions: list[Decision]) -> list[Decision]:
    """Due jobs first, the costliest tables first, then each table's jobs in the registry's order."""
    return sorted(decisions, key=lambda d: (not d.due, -d.reader_cost.extra_bytes, d.table, registry.order(d.job)))


def _due(policy: JobPolicy, health: TableHealth, history: list[RunRecord], now: datetime) -> tuple[bool, str]:
    schedule = policy.schedule
    if schedule.quiet_at(now):
        return False, "quiet hours"
    now_ms = now.timestamp() * 1000
    failures = []
    for run in history:  # newest first; running and skipped runs say nothing either way
        if run.status in UNSUCCESSFUL:
            failures.append(run)
        elif run.status in DONE:
            break
    if failures:
        wait_s = doubling(BACKOFF_BASE_S, len(failures), BACKOFF_MAX_S)
        since_s = (now_ms - (failures[0].ended_at_ms or failures[0].started_at_ms)) / 1000
        if since_s < wait_s:
            return False, f"backing off after {len(failures)} failed run(s): next try in {format_seconds(wait_s - since_s)}"
    last_done = next((r for r in history if r.status in DONE), None)
    if last_done is not None:
        last_ms = last_done.ended_at_ms or last_done.started_at_ms
        if schedule.every_s is not None and now_ms - last_ms < schedule.every_s * 1000:
            return False, f"ran {format_seconds((now_ms - last_ms) / 1000)} ago (every {format_duration(schedule.every_s)})"
        if schedule.cron is not None:
            next_ms = _next_cron_ms(schedule.cron, schedule.timezone, last_ms)
            if next_ms > now_ms:
                return False, f"next cron time {datetime.fromtimestamp(next_ms / 1000, timezone.utc):%Y-%m-%d %H:%M} UTC"
    if policy.triggers:
        checked = compared(policy.triggers, health)  # once: reached and not (`fired`, `not_reached`) compared twice per job
        reasons = [text for reached, text in checked if reached]
        if not reasons:
            return False, f"no trigger reached: {'; '.join(text for reached, text in checked if not reached)}"
        return True, "; ".join(reasons)
    if last_done is None:
        return True, "scheduled; never ran"
    return True, "scheduled"


def _next_cron_ms(expression: str, zone: str, after_ms: float) -> float:
    from apscheduler.triggers.cron import CronTrigger

    trigger = CronTrigger.from_crontab(expression, timezone=zone)
    after = datetime.fromtimestamp(after_ms / 1000, timezone.utc)
    fire = trigger.get_next_fire_time(None, after)
    return fire.timestamp() * 1000 if fire else float("inf")
