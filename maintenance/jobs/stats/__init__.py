"""STATS: distinct-value sketches and partition statistics for the current snapshot, as Iceberg's own actions write them."""

from maintenance.jobs.spec import JobSpec, lazy
from maintenance.jobs.stats.counters import COUNTERS
from maintenance.jobs.stats.options import StatsOptions

SPEC = JobSpec(
    name="stats",
    summary="STATS: NDV sketches (Puffin) and partition statistics of the current snapshot, for engines' cost-based planning (a Spark job).",
    options=StatsOptions,
    plan=lazy("maintenance.jobs.stats.plan", "plan"),
    run=lazy("maintenance.jobs.stats.run", "run"),
    estimate=lazy("maintenance.jobs.stats.estimate", "estimate"),
    formats=(1, 2, 3),
    check_table=lazy("maintenance.jobs.stats.plan", "check_table"),
    counters=COUNTERS,
)
