"""Deleting under a lease (`maintenance/jobs/deletion.py`): a holder paused in the middle of
its deletions deletes no file that became live meanwhile.

Each test runs ORPHANS or EXPIRE as a user does (`icemaint <job> ...` in a process group of
its own) and pauses the whole group (Python and its Spark JVM) with SIGSTOP right after its
first deletion (`ICEMAINT_STOP_AT=deleting`). Meanwhile an import (a writer re-adding files
the paused job is about to delete, as a migration's `add_files` does) makes some of its
remaining candidates live. Then the group is resumed with SIGCONT.

- After a takeover (an operator's forced release, another holder claiming the table), the
  resumed holder deletes nothing more: its result and its run record say `fenced` and
  count the one file it deleted.
- Without a takeover, when the pause outlasts a batch's window but not the lease, the
  resumed holder reads the references again before going on: it keeps the imported files
  and deletes the others.

The same, with ORPHANS stopped inside its first batch's look at the references, after the
table's metadata was loaded (`ICEMAINT_STOP_AT=references-read@2`, issue #62): a batch's
window starts before that look, so references from before the pause delete nothing, and
the lease row read before the batch fences a holder whose lease was forced free.

The oracle: a frozen parquet copy of the table taken after the import (EXCEPT ALL both
ways), every file a retained snapshot needs on disk, and the imported files themselves.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from pyiceberg.io.pyarrow import schema_to_pyarrow

from maintenance.catalogs import TableRef, get_catalog, load_table
from maintenance.config import Config, parse_config
from maintenance.jobs.context import JobContext
from maintenance.jobs.outcome import COMMITTED, FENCED, JobOutcome
from maintenance.jobs.runner import run_job, run_under_lease
from maintenance.state.store import open_state
from maintenance.workload.fleet import FleetOptions, make_fleet
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory, new_state_url
from tests.support.file_checks import age, local, missing_referenced_files
from tests.support.iceberg_oracle import FrozenRows
from tests.support.paths import REPO

pytestmark = pytest.mark.faults
PLANTED = 300
IMPORTED = 40


def write_config(home: Path, tmp_path: Path, state_url: str, ttl: float) -> tuple[Config, Path]:
    raw = {"home": str(home), "state": {"url": state_url}, "leases": {"ttl_seconds": ttl}}
    path = tmp_path / "icemaint.yaml"
    path.write_text(yaml.safe_dump(raw))
    return parse_config(raw, source=str(path), base_dir=tmp_path), path


class PausedJob:
    """`icemaint <job>` in a process group of its own, stopped by itself at a fault point
    (`stop_at`, `maintenance/faults.py`: by default its first deletion; None: by the test)."""

    def __init__(self, config_path: Path, home: Path, job: str, table: str, args: list[str], stop_at: str | None = "deleting") -> None:
        env = {**os.environ, "ICEMAINT_HOME": str(home)}
        env.pop("ICEMAINT_STOP_AT", None)
        if stop_at is not None:
            env["ICEMAINT_STOP_AT"] = stop_at
        self.stop_at = stop_at
        command = [sys.executable, "-m", "maintenance", "--config", str(config_path), job, table, "--json", *args]
        self.proc = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)

    def stopped(self) -> bool:
        return Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T"

    def wait_until_stopped(self, timeout: float = 240) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"the job ended before it reached {self.stop_at}: {self.proc.communicate()}")
            if self.stopped():
                return
            time.sleep(0.05)
        raise AssertionError(f"the job never reached {self.stop_at}")

    def resume(self) -> dict:  # type: ignore[type-arg]
        os.killpg(self.proc.pid, signal.SIGCONT)
        out, err = self.proc.communicate(timeout=240)
        assert out.strip(), f"no result (exit {self.proc.returncode}): {err[-3000:]}"
        return json.loads(out)

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def plant_importable_orphans(config: Config, ref: TableRef, count: int, folder_name: str = "imp") -> list[Path]:
    """Valid parquet files of the table's schema (no field ids, as `add_files` wants), region
    0, three days old, under data/region=0/<folder_name>/, in the order ORPHANS deletes them
    (a folder's files by name): orphans until somebody imports them."""
    table = load_table(config, ref)
    schema = schema_to_pyarrow(table.schema(), include_field_ids=False)
    folder = local(table.location()) / "data" / "region=0" / folder_name
    folder.mkdir(parents=True)
    paths = []
    for n in range(count):
        path = folder / f"imp-{n:05d}.parquet"
        pq.write_table(importable_rows(schema, [10_000_000 + n * 10 + i for i in range(10)]), path)
        paths.append(age(path, days=3))
    return paths


def importable_rows(schema: pa.Schema, ids: list[int]) -> pa.Table:
    """Rows of the table's schema (a CDC table's or a fleet table's): the ids, region 0, text
    and numbers where a column needs them, nulls elsewhere."""
    columns = {}
    for field in schema:
        if field.name == "id":
            columns[field.name] = ids
        elif field.name == "region":
            columns[field.name] = [0] * len(ids)
        elif pa.types.is_string(field.type):
            columns[field.name] = [f"imported-{i}" for i in ids]
        elif pa.types.is_integer(field.type):
            columns[field.name] = [1] * len(ids)
        else:
            columns[field.name] = [None] * len(ids)
    return pa.Table.from_pydict(columns, schema=schema)


def force_release(config_path: Path, home: Path, ref: TableRef) -> None:
    """An operator forces the lease free (`icemaint leases release --force`)."""
    released = subprocess.run([sys.executable, "-m", "maintenance", "--config", str(config_path), "leases", "release", str(ref), "--force"],
                              cwd=REPO, env={**os.environ, "ICEMAINT_HOME": str(home)}, capture_output=True, text=True, timeout=120)
    assert released.returncode == 0, released.stderr


def take_over(config: Config, config_path: Path, home: Path, ref: TableRef) -> None:
    """An operator forces the lease free; once the paused holder's lease has expired, another
    holder takes it and claims the table."""
    force_release(config_path, home, ref)
    deadline = time.monotonic() + 60
    while True:
        def claim(ctx: JobContext) -> JobOutcome:
            ctx.table.claim()
            return JobOutcome(COMMITTED)

        taken = run_under_lease(config, ref, "takeover", claim, holder="holder-B")
        if taken.status == COMMITTED:
            return
        assert time.monotonic() < deadline, f"the lease never became free: {taken.error}"
        time.sleep(0.5)


def expired_data_files(spark, ref: TableRef) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """Data files some snapshot added that the current snapshot no longer has (a COMPACT
    rewrote them), as Iceberg's Java `DataFile`s: what EXPIRE deletes first once those
    snapshots go, and what a writer may import again."""
    from maintenance.spark.jvm import load_java_table

    table = load_java_table(spark, ref)
    live = {str(task.file().location()) for task in _iterate(table.newScan().planFiles())}
    added = {}
    for snapshot in table.snapshots():
        for data_file in snapshot.addedDataFiles(table.io()):
            added.setdefault(str(data_file.location()), data_file)
    return {path: data_file for path, data_file in added.items() if path not in live}


def _iterate(closeable):  # type: ignore[no-untyped-def]
    try:
        iterator = closeable.iterator()
        while iterator.hasNext():
            yield iterator.next()
    finally:
        closeable.close()


def append_files_again(spark, ref: TableRef, data_files: list[object]) -> None:  # type: ignore[no-untyped-def]
    """A writer imports data files an older snapshot had (Iceberg's Java API, as a migration
    would): they become live again in a new snapshot."""
    from maintenance.spark.jvm import load_java_table

    append = load_java_table(spark, ref).newAppend()
    for data_file in data_files:
        append = append.appendFile(data_file)
    append.commit()


def prepare(job: str, spark, config: Config, cdc_table: CdcFactory) -> tuple[TableRef, list[str], dict[str, object]]:  # type: ignore[no-untyped-def]
    """A table, the job's arguments, and (EXPIRE) the data files its expiry will delete."""
    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=600, commits=6, update_ratio=0.3, delete_ratio=0.05)
    if job == "orphans":
        plant_importable_orphans(config, ref, PLANTED)
        return ref, ["--older-than", "1d"], {}
    compacted = run_job(config, ref, "compact", {"min_input_files": 2})
    assert compacted.status == COMMITTED, compacted.error
    return ref, ["--older-than", "0s", "--retain-last", "1"], expired_data_files(spark, ref)


def import_remaining(job: str, spark, config: Config, ref: TableRef, expired: dict[str, object]) -> list[Path]:  # type: ignore[no-untyped-def]
    """Make IMPORTED of the files the paused job has not deleted yet live again."""
    if job == "orphans":
        remaining = sorted((local(load_table(config, ref).location()) / "data" / "region=0" / "imp").glob("*.parquet"))
        assert len(remaining) == PLANTED - 1  # the one file deleted before the pause
        chosen = remaining[:IMPORTED]
        load_table(config, ref).add_files([str(p) for p in chosen])
        return chosen
    remaining = [p for p in expired if local(p).exists()]
    assert len(remaining) == len(expired) - 1 and len(remaining) >= 2
    chosen = remaining[: max(2, len(remaining) // 2)]
    append_files_again(spark, ref, [expired[p] for p in chosen])
    return [local(p) for p in chosen]


STALE_CASES = [(job, kind) for job in ("orphans", "expire") for kind in ("sqlite", "postgresql")]


@pytest.mark.parametrize(("job", "state_kind"), STALE_CASES, ids=[f"{j}-{k}" for j, k in STALE_CASES])
def test_a_holder_paused_past_a_takeover_deletes_no_file_made_live(spark, home: Path, tmp_path: Path, cdc_table: CdcFactory, job: str, state_kind: str) -> None:
    for state_url in new_state_url(state_kind, tmp_path):
        config, config_path = write_config(home, tmp_path, state_url, ttl=6.0)
        ref, args, expired = prepare(job, spark, config, cdc_table)
        paused = PausedJob(config_path, home, job, str(ref), args)
        try:
            paused.wait_until_stopped()
            take_over(config, config_path, home, ref)
            imported = import_remaining(job, spark, config, ref, expired)
            frozen = FrozenRows(spark, ref, tmp_path / f"frozen-{uuid.uuid4().hex[:6]}")
            result = paused.resume()
        finally:
            paused.kill()

        assert result["status"] == FENCED, result
        assert result["files_deleted"] == 1, result  # the one before the pause, counted although fenced
        assert all(p.exists() for p in imported)
        frozen.assert_same()
        assert missing_referenced_files(load_table(config, ref)) == []
        record = open_state(config).runs.get(result["run_id"])
        assert record is not None and record.status == FENCED and record.counters["files_deleted"] == 1, record


@pytest.mark.parametrize("job", ["orphans", "expire"])
def test_a_holder_paused_within_its_lease_reads_the_references_again_before_going_on(spark, home: Path, tmp_path: Path, cdc_table: CdcFactory, job: str) -> None:
    """A pause longer than a batch's window (2 s) but well within the lease: the resumed holder
    still holds its lease, reads the newest metadata before its next batch and keeps the files
    imported meanwhile."""
    for state_url in new_state_url("sqlite", tmp_path):
        config, config_path = write_config(home, tmp_path, state_url, ttl=120.0)
        ref, args, expired = prepare(job, spark, config, cdc_table)
        paused = PausedJob(config_path, home, job, str(ref), args)
        try:
            paused.wait_until_stopped()
            started = time.monotonic()
            imported = import_remaining(job, spark, config, ref, expired)
            frozen = FrozenRows(spark, ref, tmp_path / "frozen")
            time.sleep(max(0.0, 3.0 - (time.monotonic() - started)))  # past the window of the batch in flight
            result = paused.resume()
        finally:
            paused.kill()

        assert result["status"] == COMMITTED, result
        assert result["files_referenced_since_planning"] == len(imported), result
        assert all(p.exists() for p in imported)
        frozen.assert_same()
        assert missing_referenced_files(load_table(config, ref)) == []
        if job == "orphans":
            left = sorted((local(load_table(config, ref).location()) / "data" / "region=0" / "imp").glob("*.parquet"))
            assert left == sorted(imported) and result["files_deleted"] == PLANTED - IMPORTED


# -- a pause inside the look at the references (issue #62) ------------------------------
# ORPHANS reads the newest metadata once before deleting and again before each batch:
# `references-read@2` stops it inside the first batch's read, after the table's metadata was
# loaded and before its references were added. The tables are pyiceberg's (`workload fleet`),
# so ORPHANS (format 2) never starts a JVM and the test no Spark session.
IN_REFRESH = "references-read@2"
WINDOW_S = 2.0  # `jobs/deletion.WINDOW_S`


def fleet_table(config: Config) -> TableRef:
    namespace = f"del_{uuid.uuid4().hex[:8]}"
    make_fleet(get_catalog(config, config.default_catalog), config.default_catalog, FleetOptions(tables=1, namespace=namespace, commits=3, rows=40))
    return TableRef(config.default_catalog, (namespace,), "t00000")


def table_rows(config: Config, ref: TableRef) -> list[tuple]:  # type: ignore[type-arg]
    """The table's rows as pyiceberg reads them (every data file it references, read)."""
    rows = load_table(config, ref).scan().to_arrow().to_pylist()
    return sorted(tuple(sorted(row.items())) for row in rows)


def import_files(config: Config, ref: TableRef, paths: list[Path]) -> None:
    """A writer registers existing files (`add_files`, as a migration does): they become live."""
    load_table(config, ref).add_files([f"file://{p}" for p in paths])


@pytest.mark.parametrize("state_kind", ["sqlite", "postgresql"])
def test_a_holder_paused_reading_the_references_is_fenced_by_a_forced_release(home: Path, tmp_path: Path, state_kind: str) -> None:
    """Paused in its first batch's look at the references; meanwhile an operator forces the
    lease free (nobody takes it) and a writer imports old files it was about to delete. The
    lease's TTL outlasts the pause by far, so neither the keeper (no renewal is due) nor the
    proven time nor the table's epoch (nobody claimed it) stops the resumed holder: only its
    read of the lease row before the batch does. It deletes nothing and records `fenced`."""
    for state_url in new_state_url(state_kind, tmp_path):
        config, config_path = write_config(home, tmp_path, state_url, ttl=120.0)
        ref = fleet_table(config)
        planted = plant_importable_orphans(config, ref, PLANTED)
        paused = PausedJob(config_path, home, "orphans", str(ref), ["--older-than", "1d"], stop_at=IN_REFRESH)
        try:
            paused.wait_until_stopped()
            assert all(p.exists() for p in planted)  # stopped before its first deletion
            force_release(config_path, home, ref)
            imported = planted[:IMPORTED]  # the first the deleter would reach
            import_files(config, ref, imported)
            rows = table_rows(config, ref)
            result = paused.resume()
        finally:
            paused.kill()

        assert result["status"] == FENCED, result
        assert "is no longer held" in result["error"], result  # the database's answer, not the keeper's
        assert result["files_deleted"] == 0, result
        assert all(p.exists() for p in planted)
        assert table_rows(config, ref) == rows
        assert missing_referenced_files(load_table(config, ref)) == []
        record = open_state(config).runs.get(result["run_id"])
        assert record is not None and record.status == FENCED and record.counters["files_deleted"] == 0, record


def test_a_holder_paused_reading_the_references_reads_them_again_before_deleting(home: Path, tmp_path: Path) -> None:
    """Paused in its first batch's look at the references, within its lease, while a writer
    imports old files it was about to delete; resumed past the batch's window. The window
    started before the read, so the resumed holder deletes nothing on the references from
    before the pause: it reads them again, keeps the imported files and deletes the rest."""
    for state_url in new_state_url("sqlite", tmp_path):
        config, config_path = write_config(home, tmp_path, state_url, ttl=120.0)
        ref = fleet_table(config)
        planted = plant_importable_orphans(config, ref, PLANTED)
        paused = PausedJob(config_path, home, "orphans", str(ref), ["--older-than", "1d"], stop_at=IN_REFRESH)
        try:
            paused.wait_until_stopped()
            stopped = time.monotonic()
            assert all(p.exists() for p in planted)
            imported = planted[:IMPORTED]
            import_files(config, ref, imported)
            rows = table_rows(config, ref)
            time.sleep(max(0.0, WINDOW_S + 1.0 - (time.monotonic() - stopped)))  # past the window of the batch paused in its read
            result = paused.resume()
        finally:
            paused.kill()

        assert all(p.exists() for p in imported), f"{sum(not p.exists() for p in imported)} imported files deleted: {json.dumps(result)}"
        assert result["status"] == COMMITTED, json.dumps(result)
        assert result["files_referenced_since_planning"] == IMPORTED, result
        assert result["files_deleted"] == PLANTED - IMPORTED, result
        assert sorted(p for p in planted if p.exists()) == imported
        assert table_rows(config, ref) == rows
        assert missing_referenced_files(load_table(config, ref)) == []
