"""ORPHANS at scale, in miniature: no JVM, the listing streamed, the orphans spooled to disk
past a small memory budget, and still exactly the planted orphans deleted.

The tables are pyiceberg-written (`workload fleet`), so no Spark session is involved and a
JVM started by the job would show (the subprocess test forbids one outright)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from maintenance.catalogs import TableRef, get_catalog, load_table
from maintenance.config import Config
from maintenance.jobs.orphans.options import OrphansOptions
from maintenance.jobs.orphans.plan import plan
from maintenance.jobs.orphans.run import run
from maintenance.run.outcome import COMMITTED
from maintenance.run.runner import run_job, run_under_lease
from maintenance.table.marks import EPOCH_PROPERTY
from maintenance.workload.fleet import FleetOptions, make_fleet
from tests.support.cli import run_cli
from tests.support.file_checks import age, local, missing_referenced_files, plant

DAY_S = 86400


def fleet_table(config: Config, namespace: str, commits: int = 3) -> TableRef:
    make_fleet(get_catalog(config, config.default_catalog), config.default_catalog, FleetOptions(tables=1, namespace=namespace, commits=commits, rows=40))
    return TableRef(config.default_catalog, (namespace,), "t00000")


def plant_orphans(root: Path, folders: int, per_folder: int) -> set[Path]:
    """Old orphans in `folders` partition-like folders, plus hidden files that must stay."""
    planted = {plant(root / "data" / f"region={f}" / f"orphan-{i:05d}.parquet", 5) for f in range(folders) for i in range(per_folder)}
    plant(root / "data" / "_SUCCESS", 5)
    plant(root / "data" / "region=0" / ".hidden-by-its-writer", 5)
    return planted


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


def test_a_small_memory_budget_spools_the_orphans_and_still_deletes_exactly_them(config: Config) -> None:
    ref = fleet_table(config, "orph_spool")
    table = load_table(config, ref)
    root = local(table.location())
    for path in files_under(root):
        age(path, 10)  # only references protect the table's own files
    before = files_under(root)
    planted = plant_orphans(root, folders=12, per_folder=150)
    inputs = _inputs(config, ref)

    found = plan(inputs, OrphansOptions(older_than=DAY_S, memory_budget=4 * 1024))
    assert found.candidates.spooled and found.candidates.count == len(planted)
    assert {local(p) for p in found.candidates} == planted
    assert found.counters()["files_listed"] == len(before) + len(planted) + 2
    assert found.referenced.keys.spilled and found.counters()["references_on_disk"] == 1  # 2 KiB for the references (about 17 paths): on disk too
    found.candidates.close()

    result = run_job(config, ref, "orphans", {"older_than": DAY_S, "memory_budget": 4 * 1024}, verify=True)
    assert result.status == COMMITTED and result.content_verified is True, result.error
    assert result.counters["files_deleted"] == len(planted) and result.counters["files_deleted_per_second"] > 0
    claim = {p for p in files_under(root) - before if p.name.endswith(".metadata.json")}  # the claim's metadata version
    assert len(claim) == 1
    assert files_under(root) == before | claim | {root / "data" / "_SUCCESS", root / "data" / "region=0" / ".hidden-by-its-writer"}
    assert missing_referenced_files(load_table(config, ref)) == []


def test_a_spooled_orphan_that_a_commit_references_before_the_run_stays(config: Config) -> None:
    """Planned while unreferenced, then registered by a writer (`add_files`) before the
    run: the run's fresh look at the metadata takes it out of the spooled candidates."""
    ref = fleet_table(config, "orph_late_ref")
    table = load_table(config, ref)
    root = local(table.location())
    live = sorted(p for p in files_under(root / "data") if p.suffix == ".parquet")[0]
    imported = root / "data" / "region=0" / "imported-later.parquet"
    shutil.copy(live, imported)
    age(imported, 5)
    planted = plant_orphans(root, folders=4, per_folder=100)
    options = OrphansOptions(older_than=DAY_S, memory_budget=4 * 1024)

    def work(ctx):  # type: ignore[no-untyped-def]
        found = plan(ctx.metadata, options)
        assert found.candidates.spooled and imported in {local(p) for p in found.candidates}
        load_table(config, ref).add_files([f"file://{imported}"])  # a writer registers it now
        return run(ctx, found)

    result = run_under_lease(config, ref, "orphans", work, verify=True)
    assert result.status == COMMITTED, result.error
    assert result.counters["files_deleted"] == len(planted) and result.counters["files_referenced"] >= 1
    assert imported.exists() and not any(p.exists() for p in planted)
    assert missing_referenced_files(load_table(config, ref)) == []


@pytest.mark.process
def test_orphans_runs_where_no_jvm_can_start_and_claims_the_table(config: Config, home: Path) -> None:
    """JAVA_HOME points nowhere, so starting Spark fails (COMPACT shows it does); ORPHANS
    lists, claims (its epoch lands in the table's properties), deletes and verifies."""
    ref = fleet_table(config, "orph_nojvm", commits=6)  # six small files a partition: COMPACT has work
    root = local(load_table(config, ref).location())
    planted = plant_orphans(root, folders=3, per_folder=50)
    no_jvm = {"JAVA_HOME": "/nonexistent-icemaint-test"}

    needs_spark = run_cli("compact", str(ref), "--json", home=home, env=no_jvm)
    error = json.loads(needs_spark.stdout)["error"]
    assert needs_spark.returncode == 1 and error.startswith("Spark's JVM did not start: ") and "/nonexistent-icemaint-test/bin/java" in error, error

    proc = run_cli("orphans", str(ref), "--older-than", "1d", "--json", home=home, env=no_jvm)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["status"] == COMMITTED and report["files_deleted"] == len(planted) and report["content_verified"] is True, report
    assert not any(p.exists() for p in planted)
    table = load_table(config, ref)
    assert table.metadata.properties.get(EPOCH_PROPERTY) is not None
    assert missing_referenced_files(table) == []


def _inputs(config: Config, ref: TableRef):  # type: ignore[no-untyped-def]
    import time

    from maintenance.jobs.spec import PlanInput

    return PlanInput(ref, load_table(config, ref), config, int(time.time() * 1000))
