"""What an operator meets first, as the README tells them to run it: dry runs without side
effects, cron's JSON Lines, lists in text output, durations with units, skips that are not
errors, a policies folder that selects nothing."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from maintenance.config import Config
from maintenance.state.store import open_state
from tests.conftest import CdcFactory
from tests.support.cli import assert_one_line_error, in_process, json_lines
from tests.support.file_checks import local, plant
from tests.support.paths import REPO


def test_a_dry_run_changes_nothing_later_planning_reads(capsys: pytest.CaptureFixture[str], spark, config: Config, cdc_table: CdcFactory) -> None:
    """`run --dry-run` takes no lease and records no run: `plan` shows exactly what it showed
    before (but for the clock: the oldest snapshot's age in a reason), and the jobs it found
    work for say `planned`."""
    ref, _, _ = cdc_table(rows=800, commits=3, update_ratio=0.3)
    state = open_state(config)
    _, before, _ = in_process(capsys, "plan", str(ref), "--all", "--json")
    lease_before = state.leases.get(str(ref))
    runs_before = state.runs.count(table=str(ref))

    code, out, err = in_process(capsys, "run", str(ref), "--dry-run", "--json")

    results = json_lines(out)
    assert code == 0, err
    assert all(r["dry_run"] and r["run_id"] is None for r in results), results
    assert {r["job"]: r["status"] for r in results}["merge"] == "planned", results  # ORPHANS, planned by listing, may find nothing: noop
    _, after, _ = in_process(capsys, "plan", str(ref), "--all", "--json")
    assert _decisions(after) == _decisions(before)
    assert state.leases.get(str(ref)) == lease_before and state.runs.count(table=str(ref)) == runs_before


def _decisions(plan_json: str) -> list[tuple[str, bool, str]]:
    """A plan's decisions, the clock taken out of their reasons (`oldest_snapshot_age 2.1s < 5d`)."""
    return [(d["job"], d["due"], re.sub(r"oldest_snapshot_age \S+", "oldest_snapshot_age AGE", d["reason"])) for d in json.loads(plan_json)["decisions"]]


@pytest.mark.process
def test_the_readmes_cron_line_run_twice_is_json_lines(spark, home: Path, config: Config, cdc_table: CdcFactory, tmp_path: Path) -> None:
    """`icemaint run --json >> file`, as cron runs it, twice: every line a JSON object."""
    ref, _, _ = cdc_table(rows=600, commits=2, update_ratio=0.3)
    log = tmp_path / "icemaint-run.json"
    for _ in range(2):
        cron = f"{sys.executable} -m maintenance run {ref} --job orphans --json >> {log}"
        subprocess.run(["/bin/sh", "-c", cron], cwd=REPO, check=True, env={"ICEMAINT_HOME": str(home), "PATH": "/usr/bin:/bin"}, timeout=300)
    lines = log.read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(line)["job"] == "orphans" for line in lines)
    if shutil.which("jq"):
        read = subprocess.run(["jq", "-c", ".", str(log)], capture_output=True, text=True, check=True)
        assert len(read.stdout.splitlines()) == 2


def test_text_output_lists_what_a_dry_run_would_do(capsys: pytest.CaptureFixture[str], spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(rows=300, commits=1)
    root = local(f"{config.catalogs['local'].warehouse}/tests") / ref.name
    for n in range(13):
        plant(root / "data" / f"forgotten-{n:02d}.parquet", 5)

    code, out, _ = in_process(capsys, "orphans", str(ref), "--dry-run")

    assert code == 0 and f"orphans {ref}: planned" in out
    assert "would_delete (13):" in out and "forgotten-00.parquet" in out and "… and 3 more (--json lists them all)" in out


@pytest.mark.process
def test_a_duration_without_a_unit_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from tests.support.cli import run_cli

    proc = run_cli("orphans", "demo.orders", "--older-than", "5", home=tmp_path)
    assert_one_line_error(proc, 2, "needs a unit", "5s, 5m, 5h or 5d")


def test_a_skip_is_reported_as_one_not_as_an_error(capsys: pytest.CaptureFixture[str], spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(rows=300, commits=1)
    lease = open_state(config).leases.acquire(str(ref), "another-daemon", ttl_s=120)
    assert lease is not None
    try:
        code, out, err = in_process(capsys, "orphans", str(ref))
    finally:
        open_state(config).leases.release(lease)
    assert code == 0 and f"orphans {ref}: skipped (leased by another-daemon)" in out
    assert "error" not in out and err == ""


def test_a_policies_folder_that_selects_no_table_says_so(capsys: pytest.CaptureFixture[str], spark, config: Config, cdc_table: CdcFactory,
                                                          tmp_path: Path) -> None:
    ref, _, _ = cdc_table(rows=300, commits=1)
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "gdpr.yaml").write_text("name: gdpr\nselect:\n  namespaces: [gdpr]\njobs:\n  expire:\n    every: 1d\n")
    cfg = tmp_path / "icemaint.yaml"
    cfg.write_text(f"home: {config.home}\npolicies: {policies}\n")

    code, out, err = in_process(capsys, "--config", str(cfg), "plan", str(ref))

    assert code == 0 and f"no policy in {policies} selects 1 table(s) (e.g. {ref})" in err and "default.yaml) is not in it" in err


def test_jobs_that_make_no_snapshot_say_what_they_changed(capsys: pytest.CaptureFixture[str], spark, config: Config, cdc_table: CdcFactory) -> None:
    """ORPHANS and EXPIRE end `committed` without a new snapshot: the title says what they
    changed instead, and no `snapshot_id -` line suggests a commit went missing."""
    ref, _, _ = cdc_table(rows=300, commits=3)
    root = local(f"{config.catalogs['local'].warehouse}/tests") / ref.name
    for n in range(3):
        plant(root / "data" / f"forgotten-{n:02d}.parquet", 5)

    code, out, err = in_process(capsys, "orphans", str(ref))
    assert code == 0, err
    assert f"orphans {ref}: committed, deleted 3 unreferenced file(s); deleting orphans changes no table metadata" in out
    assert "snapshot_id" not in out

    code, out, err = in_process(capsys, "expire", str(ref), "--older-than", "0s")
    assert code == 0, err
    assert f"expire {ref}: committed, expired " in out and ".metadata.json; expiring adds no snapshot" in out
    assert "snapshot_id" not in out
    plant(root / "data" / "forgotten-later.parquet", 5)
    code, out, _ = in_process(capsys, "orphans", str(ref), "--json")
    result = json.loads(out)
    assert result["status"] == "committed" and result["snapshot_id"] is None and result["effect"].startswith("deleted 1 unreferenced file(s)")
