"""The job contract as users see it: `icemaint jobs`, the generated reference, every counter
described, and the same parser behind a flag, a policy key and a table property."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from maintenance.jobs import registry
from maintenance.jobs.counters import undocumented
from maintenance.jobs.outcome import COMMITTED, NOOP
from maintenance.jobs.reference import jobs_markdown
from maintenance.jobs.runner import run_job
from maintenance.policy.loader import PolicyError, load_policy_file
from maintenance.policy.resolve import policy_for
from tests.conftest import CdcFactory
from tests.file_checks import local, plant
from tests.test_cli import in_process

REPO = Path(__file__).resolve().parents[1]


def test_jobs_json_lists_every_job_with_its_options(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = in_process(capsys, "jobs", "--json")
    listed = json.loads(out)["jobs"]
    assert code == 0 and [j["name"] for j in listed] == list(registry.JOB_NAMES)
    expire = next(j for j in listed if j["name"] == "expire")
    age = next(o for o in expire["options"] if o["name"] == "max_snapshot_age")
    assert age == {**age, "type": "duration", "policy_key": "jobs.expire.retention.max_snapshot_age",
                   "table_property": "icemaint.expire.retention.max_snapshot_age", "flag": "--older-than"}
    force = next(o for j in listed if j["name"] == "orphans" for o in j["options"] if o["name"] == "force")
    assert force["policy_key"] is None and force["flag"] == "--force"


def test_docs_cli_md_is_generated_from_the_registry() -> None:
    assert (REPO / "docs" / "cli.md").read_text().strip() == jobs_markdown().strip(), "run: icemaint jobs --markdown > docs/cli.md"


@pytest.mark.parametrize(
    ("policy_value", "property_value", "flag_value", "error"),
    [("0", "0", "0", "must be an integer of at least 1"), ("soon", "soon", "soon", "not a duration")],
)
def test_a_flag_a_policy_key_and_a_table_property_share_one_parser(tmp_path: Path, capsys, config, cdc_table: CdcFactory,
                                                                   policy_value: str, property_value: str, flag_value: str, error: str) -> None:
    key, flag = ("min_snapshots_to_keep", "--retain-last") if "integer" in error else ("max_snapshot_age", "--older-than")
    path = tmp_path / "p.yaml"
    path.write_text(f"name: p\njobs:\n  expire:\n    every: 1h\n    retention:\n      {key}: {policy_value}\n")
    with pytest.raises(PolicyError, match=error):
        load_policy_file(path)
    good = tmp_path / "good.yaml"
    good.write_text("name: good\njobs:\n  expire:\n    every: 1h\n")
    ref, _, _ = cdc_table(rows=100, commits=1)
    with pytest.raises(PolicyError, match=error):
        policy_for(ref, {f"icemaint.expire.retention.{key}": property_value}, [load_policy_file(good)])
    code, _, err = in_process(capsys, "expire", str(ref), flag, flag_value)
    assert code == 2 and error in err


def test_every_counter_a_job_reports_is_described(spark, config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(rows=800, commits=3, update_ratio=0.3, delete_ratio=0.05)
    plant(local(f"{config.catalogs['local'].warehouse}/tests") / ref.name / "data" / "left-behind.parquet", days_old=5)
    options = {"expire": {"max_snapshot_age": 0}, "orphans": {"older_than": 86400}}
    for spec in registry.JOBS:
        for dry_run in (True, False):
            result = run_job(config, ref, spec.name, options.get(spec.name), dry_run=dry_run)
            assert result.status in (COMMITTED, NOOP), (spec.name, result.error)
            assert undocumented(result.counters, spec.counters) == [], (spec.name, result.counters)


def test_a_daemon_merge_reads_each_manifest_once_while_evaluating_and_never_again_to_plan(spark, config, cdc_table: CdcFactory, tmp_path: Path) -> None:
    """Evaluation reads the current snapshot's manifests once (pyiceberg); the job under the
    lease, on the same snapshot, reuses the evaluation's plan and reads none of them again."""
    from maintenance.policy.loader import load_policies
    from maintenance.schedule.cycle import evaluate, run_decision
    from maintenance.state.store import open_state
    from maintenance.table.files import CACHE

    (tmp_path / "merge.yaml").write_text("name: merge\njobs:\n  merge:\n    when: {equality_delete_files: 1}\n    every: 1h\n")
    policies = load_policies(tmp_path)
    ref, _, _ = cdc_table(rows=1500, commits=6, update_ratio=0.3)
    state = open_state(config)
    CACHE.clear()
    before = CACHE.manifests_read
    evaluation = evaluate(config, state, [ref], policies)
    evaluated = CACHE.manifests_read - before
    from maintenance.catalogs import load_table

    table = load_table(config, ref)
    manifests = len(table.current_snapshot().manifests(table.io))
    assert evaluated == manifests
    (decision,) = [d for d in evaluation.due if d.job == "merge"]
    assert decision.prepared is not None and decision.prepared.snapshot_id == table.metadata.current_snapshot_id

    result = run_decision(config, state, decision, policies=policies)

    assert result.status == COMMITTED and result.content_verified, result.error
    # The re-check under the lease and the plan read nothing; the one read after the job is
    # the new snapshot's health, recorded with the run (and cached for the next evaluation).
    table = load_table(config, ref)
    assert table.metadata.current_snapshot_id == result.snapshot_id
    assert CACHE.manifests_read - before == manifests + len(table.current_snapshot().manifests(table.io))


def test_nothing_outside_a_jobs_folder_and_the_registry_knows_the_job() -> None:
    """A job is its folder and one registry line: no other module imports a job's package or
    spells a job's name (the health measures `manifests`/`small_manifests` count manifests,
    not the MANIFESTS job, and are the one allowed spelling)."""
    import re

    package = REPO / "maintenance"
    allowed_literals = {('"manifests"', "maintenance/policy/triggers.py"), ('"manifests"', "maintenance/ui/pages.py")}
    found = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(REPO).as_posix()
        if relative == "maintenance/jobs/registry.py":
            continue
        text = "\n".join(re.sub(r"#.*", "", line) for line in path.read_text().splitlines())  # code, not comments
        for name in registry.JOB_NAMES:
            if relative.startswith(f"maintenance/jobs/{name}/"):
                continue
            imports = re.findall(rf"(?:from maintenance\.jobs\.{name}\b|from maintenance\.jobs import [^\n]*\b{name}\b|import maintenance\.jobs\.{name}\b)", text)
            literals = [f'"{name}"'] * text.count(f'"{name}"') + [f"'{name}'"] * text.count(f"'{name}'")
            found += [(relative, hit) for hit in imports]
            found += [(relative, hit) for hit in literals if (hit, relative) not in allowed_literals]
    assert found == []
