"""The one list of jobs, in the order they run on one table.

Policies, the schedule, the command line, the daemon and `icemaint jobs` all read it: a new
job is its own folder plus one line here.
"""

from __future__ import annotations

from maintenance.errors import UsageError
from maintenance.jobs.spec import JobSpec

from maintenance.jobs import compact, convert, expire, manifests, merge, orphans, rewrite, stats  # isort: skip

JOBS: tuple[JobSpec, ...] = (
    convert.SPEC,
    rewrite.SPEC,
    merge.SPEC,
    compact.SPEC,
    manifests.SPEC,
    stats.SPEC,
    expire.SPEC,
    orphans.SPEC,
)
JOB_NAMES: tuple[str, ...] = tuple(spec.name for spec in JOBS)
_BY_NAME = {spec.name: spec for spec in JOBS}


def job(name: str) -> JobSpec:
    spec = _BY_NAME.get(name)
    if spec is None:
        raise UsageError(f"unknown job '{name}' (known: {', '.join(JOB_NAMES)})")
    return spec


def order(name: str) -> int:
    """A job's place within one table's jobs (unknown names last)."""
    return JOB_NAMES.index(name) if name in _BY_NAME else len(JOB_NAMES)
