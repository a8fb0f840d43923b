"""EXPIRE: remove old snapshots (keeping branches, tags and writers' resume points) and the
files only they referenced."""

from maintenance.jobs.expire.counters import COUNTERS
from maintenance.jobs.expire.options import ExpireOptions
from maintenance.jobs.spec import JobSpec, lazy

SPEC = JobSpec(
    name="expire",
    summary="EXPIRE old snapshots, delete the files only they used and old metadata.json versions.",
    options=ExpireOptions,
    plan=lazy("maintenance.jobs.expire.plan", "plan"),
    run=lazy("maintenance.jobs.expire.run", "run"),
    estimate=lazy("maintenance.jobs.expire.estimate", "estimate"),
    formats=(1, 2, 3),
    plans_at_a_time=True,  # which snapshots are old enough to go depends on the time
    counters=COUNTERS,
)
