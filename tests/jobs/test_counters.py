"""The one list of counters (`jobs/counters.py`): every counter a job reports is described,
and each is spelled where its home says (a job's own, or shared)."""

from __future__ import annotations

from maintenance.jobs import registry
from maintenance.jobs.counters import undocumented
from maintenance.run.outcome import COMMITTED, NOOP, PLANNED
from maintenance.run.runner import run_job
from tests.conftest import CdcFactory
from tests.support.file_checks import local, plant
from tests.support.paths import REPO


def test_every_counter_a_job_reports_is_described(spark, config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(rows=800, commits=3, update_ratio=0.3, delete_ratio=0.05)
    plant(local(f"{config.catalogs['local'].warehouse}/tests") / ref.name / "data" / "left-behind.parquet", days_old=5)
    options = {"expire": {"max_snapshot_age": 0}, "orphans": {"older_than": 86400}}
    for spec in registry.JOBS:
        for dry_run in (True, False):
            result = run_job(config, ref, spec.name, options.get(spec.name), dry_run=dry_run)
            assert result.status in ((PLANNED, NOOP) if dry_run else (COMMITTED, NOOP)), (spec.name, result.error)
            assert undocumented(result.counters, spec.counters) == [], (spec.name, result.counters)


def test_each_counter_lives_where_the_rule_says() -> None:
    """`jobs/counters.py`'s rule, read from the source: a shared counter is spelled in two
    jobs' folders or in a module outside every job's folder (which several jobs run); a
    job's own counter is spelled in no other job's folder and in no shared module, and is
    not also shared. The modules every job runs (`run/`, `publish/`) count as shared."""
    from maintenance.jobs.counters import COUNTERS as SHARED

    jobs_dir = REPO / "maintenance" / "jobs"
    folders = (jobs_dir, REPO / "maintenance" / "run", REPO / "maintenance" / "publish")
    sources = {path: path.read_text() for folder in folders for path in folder.rglob("*.py") if path.name != "counters.py"}

    def homes(counter: str) -> set[str]:
        """Each job folder, or `shared`, whose code spells the counter."""
        found = set()
        for path, text in sources.items():
            if f'"{counter}"' in text or f"'{counter}'" in text or f"{counter}=" in text:
                parts = path.relative_to(jobs_dir).parts if path.is_relative_to(jobs_dir) else ()
                found.add(parts[0] if len(parts) > 1 and parts[0] in registry.JOB_NAMES else "shared")
        return found

    misplaced = [(name, sorted(homes(name))) for name in SHARED if len(homes(name)) == 1 and homes(name) != {"shared"}]
    assert misplaced == [], f"shared counters only one job reports: move them to its counters.py: {misplaced}"
    for spec in registry.JOBS:
        for name in spec.counters:
            assert name not in SHARED, (spec.name, name)
            assert homes(name) <= {spec.name}, (spec.name, name, homes(name))
