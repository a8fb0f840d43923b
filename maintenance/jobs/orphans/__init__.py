"""ORPHANS: delete files under the table location that no metadata references."""

from maintenance.jobs.orphans.counters import COUNTERS
from maintenance.jobs.orphans.options import OrphansOptions, check_inventory, check_margin
from maintenance.jobs.spec import JobSpec, lazy

SPEC = JobSpec(
    name="orphans",
    summary="Delete ORPHAN files under the table location that no metadata references.",
    options=OrphansOptions,
    plan=lazy("maintenance.jobs.orphans.plan", "plan"),
    run=lazy("maintenance.jobs.orphans.run", "run"),
    estimate=lazy("maintenance.jobs.orphans.estimate", "estimate"),
    formats=(1, 2, 3),
    plans_from_metadata=False,
    check_options=check_margin,
    check_table=check_inventory,
    counters=COUNTERS,
    health_after=False,
)
