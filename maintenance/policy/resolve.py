"""Which policy a table gets: its `icemaint.policy` property, else the highest-priority
policy whose selector matches; then the table's `icemaint.` properties on top."""

from __future__ import annotations

from maintenance.catalogs import TableRef
from maintenance.policy.loader import (
    PolicyError,
    deep_merge,
    overrides_from_properties,
    parse_job,
    property_where,
)
from maintenance.policy.model import Policy, TablePolicy


def policy_for(ref: TableRef, properties: dict[str, str], policies: list[Policy]) -> TablePolicy:
    own, nested = overrides_from_properties(properties)
    table = str(ref)
    enabled_text = own.get("icemaint.enabled", "true").strip().lower()
    if enabled_text not in ("true", "false"):
        raise PolicyError(f"table {table}: icemaint.enabled must be true or false (got {own['icemaint.enabled']!r})")
    chosen = _choose(ref, own.get("icemaint.policy"), policies)
    if chosen is None:
        return TablePolicy(ref=ref, policy="(none)", enabled=False, jobs={}, overrides=own)
    if nested:  # the table's own job settings: its policy's, merged and parsed again
        where = property_where(table)
        jobs = {job: parse_job(job, raw, where / job, chosen.timezone) for job, raw in deep_merge(chosen.raw_jobs, nested).items()}
    else:  # a fleet's usual table: its policy's jobs as they are, no deep copy per table (a warm cron tick decides thousands)
        jobs = dict(chosen.jobs)
    return TablePolicy(ref=ref, policy=chosen.name, enabled=enabled_text == "true", jobs=jobs, overrides=own)


def _choose(ref: TableRef, named: str | None, policies: list[Policy]) -> Policy | None:
    if named is not None:
        for policy in policies:
            if policy.name == named:
                return policy
        raise PolicyError(f"table {ref}: icemaint.policy names an unknown policy '{named}' (known: {', '.join(p.name for p in policies)})")
    return next((p for p in policies if p.selector.matches(ref)), None)
