"""Fault injection: every job killed with SIGKILL (its whole process group, Python and the
Spark JVM, as a container kill does) at every named point of its own, and at the lease and
the claim that every job shares (`maintenance/faults.py`; `POINTS` says which), then:

- every process of the group was killed by SIGKILL and none is left
  (`tests/support/process_group.py` reaps them and reports how each ended);
- the table's content is what it was (a frozen parquet copy, EXCEPT ALL both ways);
- the killed run's record names the epoch the table (and its snapshot, once published)
  carries, and keeps it once abandoned;
- no file any retained snapshot needs is missing;
- the lease is taken by the next holder once its TTL has passed, and the killed run, left
  `running`, becomes `abandoned`;
- after an expiry and `orphans --older-than 0s --force`, nothing the killed run wrote is
  left anywhere under the table location.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config, LeaseConfig
from maintenance.run.outcome import COMMITTED, NOOP
from maintenance.run.runner import run_job
from maintenance.state.store import open_state
from maintenance.table.marks import EPOCH_PROPERTY, SUMMARY_EPOCH, SUMMARY_RUN_ID
from maintenance.table.paths import normalise
from maintenance.table.references import ReferencedFiles
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory
from tests.support.file_checks import local, missing_referenced_files, plant
from tests.support.iceberg_oracle import FrozenRows
from tests.support.paths import REPO

pytestmark = pytest.mark.faults
TTL_S = 3.0
# The points each job reaches (where `faults.point`/`faults.watch` is called): the Spark
# writers (CONVERT, REWRITE and the file-group engine of MERGE and COMPACT) write files;
# everything that publishes through `JobContext.publish` stages and publishes; MERGE and
# COMPACT commit file groups; EXPIRE and ORPHANS delete. Every job also reaches the lease and
# the claim, through the runner's and the context's code that every job shares: those are
# killed once (COMPACT), and the claim once more by ORPHANS, the one job that claims without
# a JVM (one case costs CI about 10 s).
POINTS = {
    "convert": ("spark-write", "staged", "published"),
    "rewrite": ("spark-write", "staged", "published"),
    "merge": ("spark-write", "staged", "published", "groups-committed"),
    "compact": ("lease-acquired", "claimed", "spark-write", "staged", "published", "groups-committed"),
    "manifests": ("staged", "published"),
    "expire": ("deleting",),
    "orphans": ("claimed", "deleting"),
}
CASES = [(job, point) for job, points in POINTS.items() for point in points]
CLAIMED = {"claimed", "published", "groups-committed", "deleting"}  # the table carries the run's epoch
# A change is staged in memory (`spark/fenced_table.py`): killed there, the run has committed
# nothing, not even its claim, so the catalog still names the metadata file it named before.
UNCOMMITTED = {"lease-acquired", "spark-write", "staged"}
PUBLISHED = {"published", "groups-committed"}  # the current snapshot is the run's
ARGS = {
    "expire": ["--older-than", "0s", "--retain-last", "1"],
    "orphans": ["--older-than", "1d"],
    # one group per partition, committed one at a time: a kill after the first commit leaves the others untouched
    # (groups of one file each, so small partitions are not combined into one group)
    "compact": ["--min-input-files", "2", "--commit-every-groups", "1", "--max-concurrent-groups", "1", "--max-group-bytes", "1"],
    "merge": ["--commit-every-groups", "1", "--max-concurrent-groups", "1", "--max-group-bytes", "1"],
}


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


@dataclasses.dataclass(frozen=True)
class Killed:
    """How the job's process group ended (tests/support/process_group.py's report) and its output."""

    pgid: int
    leader: int | None
    ended: list[dict[str, object]]
    output: str

    def assert_killed_whole(self, point: str, job: str) -> None:
        """Python and its Spark JVM (started by every point past the lease: the claim is the
        JVM's; ORPHANS starts none at all) died of SIGKILL at `point`, and nothing of the
        group is left. One exception to "a JVM was there": CONVERT writes its deletes with
        pyarrow while Spark starts in the background, so at `spark-write` its Spark may be
        anywhere from not yet launched through its launcher scripts (`spark-submit`,
        `spark-class`) to a running JVM. An armed point the job never reaches ends it
        normally: that fails here. Other descendants only had to end: PySpark's Python
        workers run in a process group of their own and exit when the JVM is gone."""
        assert self.leader == -signal.SIGKILL, f"the job was not killed at {point} (exit {self.leader}):\n{self.output[-3000:]}"
        jvms = [e for e in self.ended if e["name"] == "java"]
        assert all(e["code"] == -signal.SIGKILL for e in jvms), f"a JVM was not killed by SIGKILL: {self.ended}"
        spark_may_be_starting = job == "convert" and point == "spark-write"
        if job == "orphans":
            assert not jvms, f"ORPHANS started a JVM: {self.ended}"
        else:
            assert jvms or point == "lease-acquired" or spark_may_be_starting, f"no Spark JVM at {point}: {self.ended}"
        with pytest.raises(ProcessLookupError):
            os.killpg(self.pgid, 0)


def run_killed(config_path: Path, home: Path, job: str, table: str, point: str, args: list[str] | None = None) -> Killed:
    """The job as a user runs it, in a process group of its own, killed at `point`."""
    env = {**os.environ, "ICEMAINT_HOME": str(home), "ICEMAINT_KILL_AT": point}
    report, output = config_path.parent / "group.json", config_path.parent / "job.log"
    command = [sys.executable, "-m", "maintenance", "--config", str(config_path), job, table, "--verify", "--json", *(ARGS.get(job, []) if args is None else args)]
    with output.open("wb") as out:
        reaper = subprocess.Popen([sys.executable, "-m", "tests.support.process_group", str(report), "--", *command], cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            reaper.wait(timeout=300)
        finally:
            if reaper.poll() is None:  # the job hung, or a process of its group outlived the kill
                try:
                    os.killpg(json.loads(report.read_text())["pgid"], signal.SIGKILL)
                except (OSError, ValueError, KeyError):
                    pass
                reaper.kill()
                reaper.wait()
    assert reaper.returncode == 0, f"the job's process group did not end (reaper exit {reaper.returncode}):\n{output.read_text()[-3000:]}"
    ended = json.loads(report.read_text())
    return Killed(ended["pgid"], ended["leader"], ended["ended"], output.read_text())


@pytest.mark.parametrize(("job", "point"), CASES, ids=[f"{j}-{p}" for j, p in CASES])
def test_a_job_killed_at_a_named_point_leaves_the_table_whole_and_cleanable(spark, home: Path, config: Config, cdc_table: CdcFactory,
                                                                           tmp_path: Path, job: str, point: str) -> None:
    commits = 6 if job == "expire" else 3  # expiry deletes a manifest list per expired snapshot: several batches
    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=800, commits=commits, update_ratio=0.3, delete_ratio=0.05)
    root = local(load_table(config, ref).location())
    if job == "orphans":
        for n in range(5):
            plant(root / "data" / f"left-behind-{n}.parquet", days_old=3)
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    before = files_under(root)
    loaded = load_table(config, ref)
    data_files_before, metadata_before = loaded.inspect.data_files().num_rows, loaded.metadata_location
    config_path = tmp_path / "icemaint.yaml"
    config_path.write_text(yaml.safe_dump({"home": str(home), "leases": {"ttl_seconds": TTL_S}}))

    run_killed(config_path, home, job, str(ref), point).assert_killed_whole(point, job)
    lease_expired = time.monotonic() + TTL_S + 0.5  # the killed holder's lease, at the latest

    frozen.assert_same()
    table = load_table(config, ref)
    assert missing_referenced_files(table) == []
    state = open_state(config)
    killed = next(r for r in state.runs.list(table=str(ref)) if r.job == job)
    assert killed.status == "running" and killed.lease_epoch is not None
    if point in CLAIMED:
        assert table.properties.get(EPOCH_PROPERTY) == str(killed.lease_epoch)
    if point in UNCOMMITTED:
        assert table.metadata_location == metadata_before and EPOCH_PROPERTY not in table.properties
    if point in PUBLISHED:
        summary = table.current_snapshot().summary  # type: ignore[union-attr]
        assert (summary[SUMMARY_RUN_ID], summary[SUMMARY_EPOCH]) == (killed.run_id, str(killed.lease_epoch))
        if point == "groups-committed":  # groups of one file: the first of several commits replaced one
            assert summary["deleted-data-files"] == "1" and data_files_before > 1, (summary, data_files_before)

    time.sleep(max(0.0, lease_expired - time.monotonic()))  # what the checks above did not already wait
    short = dataclasses.replace(config, leases=LeaseConfig(ttl_seconds=TTL_S))
    expired = run_job(short, ref, "expire", {"max_snapshot_age": 0, "min_snapshots_to_keep": 1}, verify=True)
    assert expired.status in (COMMITTED, NOOP), expired.error
    abandoned = state.runs.get(killed.run_id)
    assert abandoned is not None and (abandoned.status, abandoned.lease_epoch) == ("abandoned", killed.lease_epoch)
    cleaned = run_job(short, ref, "orphans", {"older_than": 0, "force": True}, verify=True)
    assert cleaned.status in (COMMITTED, NOOP), cleaned.error

    frozen.assert_same()
    table = load_table(config, ref)
    assert missing_referenced_files(table) == []
    referenced = ReferencedFiles()
    referenced.add_table(table)
    left = sorted(str(p) for p in files_under(root) - before if not referenced_or_its_checksum(p, referenced))
    assert left == [], f"files of the killed {job} left after cleanup: {left[:5]}"
    empty = sorted(str(d) for d in (root / "data").glob("icemaint-*/**") if d.is_dir() and not any(p.is_file() for p in d.rglob("*")))
    assert empty == [], f"empty output folders of the killed {job} left after cleanup: {empty}"


def referenced_or_its_checksum(path: Path, referenced: ReferencedFiles) -> bool:
    """A file some metadata references, or the Hadoop checksum (`.NAME.crc`) beside one."""
    if path.name.startswith(".") and path.name.endswith(".crc"):
        path = path.with_name(path.name[1:-4])
    return normalise(str(path)) in referenced.keys


def test_a_multi_group_run_killed_after_its_first_commit_keeps_that_group_and_nothing_else(spark, home: Path, config: Config, cdc_table: CdcFactory,
                                                                                          tmp_path: Path) -> None:
    ref, _, _ = cdc_table(shape=TableShape("identity", 3, "single"), rows=1500, commits=5, update_ratio=0.3, delete_ratio=0.05)
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    before = _files_by_partition(spark, ref)
    config_path = tmp_path / "icemaint.yaml"
    config_path.write_text(yaml.safe_dump({"home": str(home), "leases": {"ttl_seconds": TTL_S}}))
    sizes = [sum(local(p).stat().st_size for p in paths) for paths in before.values()]
    assert 2 * min(sizes) > max(sizes)
    one_group_per_partition = ["--max-group-bytes", str(max(sizes)), "--min-input-files", "2", "--commit-every-groups", "1", "--max-concurrent-groups", "1"]

    run_killed(config_path, home, "compact", str(ref), "groups-committed", one_group_per_partition).assert_killed_whole("groups-committed", "compact")

    frozen.assert_same()
    after = _files_by_partition(spark, ref)
    rewritten = [p for p in before if after[p] != before[p]]
    assert len(rewritten) == 1 and len(after[rewritten[0]]) == 1 and not after[rewritten[0]] & before[rewritten[0]]
    assert all(after[p] == before[p] for p in before if p not in rewritten)  # the other groups: untouched
    assert load_table(config, ref).current_snapshot().summary["icemaint.job"] == "compact"


def _files_by_partition(spark, ref: TableRef) -> dict[str, set[str]]:  # type: ignore[no-untyped-def]
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    out: dict[str, set[str]] = {}
    for row in spark.sql(f"SELECT partition.region AS region, file_path FROM {ref.spark_name}.data_files").collect():
        out.setdefault(str(row.region), set()).add(row.file_path)
    return out


def files_any_snapshot_references(spark, ref: TableRef) -> set[str]:  # type: ignore[no-untyped-def]
    """Iceberg's own answer (its `all_*` metadata tables): every content file, manifest and
    manifest list some snapshot of the current metadata references, as local paths."""
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    name = ref.spark_name
    rows = spark.sql(f"SELECT file_path AS p FROM {name}.all_files UNION SELECT path FROM {name}.all_manifests "
                     f"UNION SELECT manifest_list FROM {name}.snapshots").collect()
    return {str(local(r.p)) for r in rows}


def test_an_expire_killed_at_its_first_deletion_is_finished_by_the_next_one(spark, home: Path, config: Config, cdc_table: CdcFactory,
                                                                           tmp_path: Path) -> None:
    """The killed run's expiry is committed, its deletions are not: the old metadata versions
    in the log still name the expired snapshots, so orphan cleanup keeps their files. The
    next EXPIRE finds those snapshots there and deletes their files."""
    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=800, commits=6, update_ratio=0.3, delete_ratio=0.05)
    assert run_job(config, ref, "compact", {"min_input_files": 2}).status == COMMITTED  # old data files: only old snapshots have them
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    before = files_any_snapshot_references(spark, ref)
    config_path = tmp_path / "icemaint.yaml"
    config_path.write_text(yaml.safe_dump({"home": str(home), "leases": {"ttl_seconds": TTL_S}}))

    run_killed(config_path, home, "expire", str(ref), "deleting").assert_killed_whole("deleting", "expire")

    expired = before - files_any_snapshot_references(spark, ref)  # what the committed expiry made unreachable
    left = sorted(p for p in expired if Path(p).exists())
    assert len(expired) > 10 and len(left) == len(expired) - 1  # one file was deleted before the kill
    time.sleep(TTL_S + 0.5)
    short = dataclasses.replace(config, leases=LeaseConfig(ttl_seconds=TTL_S))
    again = run_job(short, ref, "expire", {"max_snapshot_age": 0, "min_snapshots_to_keep": 1}, verify=True)
    assert again.status == COMMITTED, again.error
    assert again.counters["snapshots_left_behind"] > 0 and again.counters["files_deleted"] == len(left), again.counters
    assert [p for p in expired if Path(p).exists()] == []
    assert run_job(short, ref, "expire", {"max_snapshot_age": 0, "min_snapshots_to_keep": 1}).status == NOOP  # nothing left behind now
    cleaned = run_job(short, ref, "orphans", {"older_than": 0, "force": True}, verify=True)
    assert cleaned.status in (COMMITTED, NOOP), cleaned.error
    frozen.assert_same()
    assert missing_referenced_files(load_table(config, ref)) == []
