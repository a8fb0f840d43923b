"""Deleting under a lease (`maintenance/jobs/file_removal/fenced.py`): a holder paused in the middle of
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
the lease row read before the batch fences a holder whose lease was forced free. A `slow`
test repeats that trial twelve times under CPU load, stopping ORPHANS at random moments.

The oracle: a frozen parquet copy of the table taken after the import (EXCEPT ALL both
ways), every file a retained snapshot needs on disk, and the imported files themselves.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from io import BytesIO
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from pyiceberg.io.pyarrow import schema_to_pyarrow

from maintenance.catalogs import TableRef, get_catalog, load_table
from maintenance.config import Config, parse_config
from maintenance.run.context import JobContext
from maintenance.run.outcome import COMMITTED, FAILED, FENCED, JobOutcome
from maintenance.run.runner import run_job, run_under_lease
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

    def __init__(self, config_path: Path, home: Path, job: str, table: str, args: list[str], stop_at: str | None = "deleting",
                 log: Path | None = None) -> None:
        """`log`: where its stderr goes (else a pipe, read when it ends)."""
        env = {**os.environ, "ICEMAINT_HOME": str(home)}
        env.pop("ICEMAINT_STOP_AT", None)
        if stop_at is not None:
            env["ICEMAINT_STOP_AT"] = stop_at
        self.stop_at = stop_at
        self.log = log
        command = [sys.executable, "-m", "maintenance", "--config", str(config_path), job, table, "--json", *args]
        with open(log, "w") if log is not None else _no_file() as err:
            self.proc = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=err if log is not None else subprocess.PIPE,
                                         text=True, start_new_session=True)

    def stopped(self) -> bool:
        return Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T"

    def wait_until_stopped(self, timeout: float = 240, or_ended: bool = False) -> bool:
        """Whether it stopped; with `or_ended`, False if it ended first (else that fails)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                if or_ended:
                    return False
                raise AssertionError(f"the job ended before it reached {self.stop_at}: {self.proc.communicate()}")
            if self.stopped():
                return True
            time.sleep(0.01)
        raise AssertionError(f"the job never reached {self.stop_at}")

    def resume(self) -> dict:  # type: ignore[type-arg]
        os.killpg(self.proc.pid, signal.SIGCONT)
        return self.result()

    def result(self) -> dict:  # type: ignore[type-arg]
        out, err = self.proc.communicate(timeout=240)
        if self.log is not None:
            err = self.log.read_text()
        assert out.strip(), f"no result (exit {self.proc.returncode}): {err[-3000:]}"
        return json.loads(out)

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


@contextlib.contextmanager
def _no_file() -> Iterator[None]:
    yield None


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
WINDOW_S = 2.0  # `jobs/file_removal/fenced.WINDOW_S`


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


# -- the trial of issue #62, a dozen times over, under load ---------------------------------
STRESS_ROUNDS = 12  # 20 rounds cost CI 4 minutes; ICEMAINT_STRESS_ROUNDS=100 for a long run
STRESS_PLANTED = 2_500  # as in the trial
SPINNERS = 16
MIN_SPINNERS = 4  # the load a round never goes below when it is lightened (`Spinners.lighten`)
LOADED_AFTER_RESUME_S = 2.0  # the spinners run this long after the resume (or until the run ends)
STRESS_TTL_S = 120.0  # no renewal falls within a run (its first is due after 40 s): only the lease row fences a forced release
STOP_MODES = ("references-read@2", "deleting", "delay", "delay")  # a named point, or a random moment of the deletions (half the rounds)


def stress_rounds(rounds: int, rng: random.Random) -> list[tuple[str, bool]]:
    """Each round's stop and whether the lease is forced free: every stop mode in its share
    of the rounds, half of each with a forced release, in a random order."""
    modes = [STOP_MODES[n % len(STOP_MODES)] for n in range(rounds)]
    plan = [(mode, n % 2 == 1) for mode in sorted(set(modes)) for n in range(modes.count(mode))]
    rng.shuffle(plan)
    return plan


class Spinners:
    """Processes that only burn CPU: running from a run's claim (right before it deletes) to
    its stop, and for `LOADED_AFTER_RESUME_S` after its resume; stopped while the run starts
    and plans, while the test plants files, imports them during the pause and checks (none of
    that is under test, and on two cores each would take ten times as long)."""

    def __init__(self, count: int) -> None:
        # each in a session of its own: with the kernel's autogroups, a session's processes share
        # one slice of the CPU, so spinners beside the test would slow the test, not the job
        self.procs = [subprocess.Popen([sys.executable, "-S", "-c", "while True: pass"], start_new_session=True) for _ in range(count)]
        self.active = count  # how many run when they run
        self.pause()

    def _signal(self, sig: int) -> None:
        for proc in self.procs:
            os.kill(proc.pid, sig)

    def run(self) -> None:
        for proc in self.procs[: self.active]:
            os.kill(proc.pid, signal.SIGCONT)

    def pause(self) -> None:
        self._signal(signal.SIGSTOP)

    def lighten(self) -> None:
        """Half as many from now on (at least `MIN_SPINNERS`): for a machine on which this load
        stretches a batch's look at the references past its window (`STALLED_BATCHES` of them
        fail the run before it deletes anything, a safe ending but not the one under test)."""
        self.active = max(MIN_SPINNERS, self.active // 2)

    def close(self) -> None:
        for proc in self.procs:
            proc.kill()
            proc.wait()


def plant_round(folder: Path, count: int, imported: int, template: Path, rows_for: Callable[[int], bytes]) -> list[Path]:
    """`count` old orphans in `folder`, in deletion order (by name); the last `imported` hold
    rows of their own (`rows_for(n)`), the others are hard links to `template` (three days old:
    never imported, and made ten times faster than files written one by one)."""
    folder.mkdir(parents=True)
    paths = []
    for n in range(count):
        path = folder / f"imp-{n:05d}.parquet"
        if n < count - imported:
            os.link(template, path)
        else:
            path.write_bytes(rows_for(n))
            age(path, days=3)
        paths.append(path)
    return paths


def metadata_versions(table_root: Path) -> int:
    return sum(1 for entry in os.scandir(table_root / "metadata") if entry.name.endswith(".metadata.json"))


def expire_lease_now(store, ref: TableRef) -> None:  # type: ignore[no-untyped-def]
    """A forced release keeps the lease until its old expiry (2 minutes here). Once the old
    holder's process has ended, the test lets that time pass at once, so the next round can
    take the lease on the same table."""
    from sqlalchemy import update

    from maintenance.state.schema import LeaseRow

    leases = LeaseRow.__table__
    with store.leases.engine.begin() as conn:
        conn.execute(update(leases).where(leases.c.table_name == str(ref)).values(expires_at_ms=0))


@pytest.mark.process
@pytest.mark.slow
def test_orphans_paused_at_random_under_load_loses_no_live_file(home: Path, tmp_path: Path) -> None:
    """The trial of issue #62, twelve times on one table: ORPHANS deletes 2,500 freshly
    planted old unreferenced files of a format-2 table (pyiceberg's: no JVM) while 16 spinners
    load the two cores (`Spinners` says when); it is stopped (SIGSTOP of its group) inside its
    first batch's look at the references, right after its first deletion, or at a random
    moment of its deletions (0-30 ms after the planted folder began to shrink); in half the
    rounds the lease is forced free meanwhile; during every pause 40 of the remaining planted
    files are imported (`add_files`): the 40 it would delete last (a folder's files go in name
    order, `table/listing.walk_location`), so the one file in flight at the stop is never one of
    them. Resumed past its batch's window, it deletes none of them: after a forced release it
    is fenced, having deleted at most the one file in flight since the stop; otherwise it
    commits, counting them as referenced since planning, and deletes every other orphan.
    Every file the table references exists after every round, and every imported row reads
    back at the end. A round stopped too late to leave 40 files is run again; one whose run
    failed before it deleted anything because its batches stalled (on a slower machine, each
    look at the references and the lease outlasted its window under this load) is run again
    with half the spinners (`Spinners.lighten`); any other failure fails the test. State on
    PostgreSQL, where the stopped run holds no lock the release would wait for (on SQLite, a
    stage write in flight locks the whole file). ICEMAINT_STRESS_SEED,
    ICEMAINT_STRESS_ROUNDS and ICEMAINT_STRESS_SPINNERS set the seed, the number of rounds
    and the spinners at first."""
    seed = int(os.environ.get("ICEMAINT_STRESS_SEED", time.time_ns() % 2**32))
    rng = random.Random(seed)
    rounds = stress_rounds(int(os.environ.get("ICEMAINT_STRESS_ROUNDS", STRESS_ROUNDS)), rng)
    for state_url in new_state_url("postgresql", tmp_path):
        config, config_path = write_config(home, tmp_path, state_url, ttl=STRESS_TTL_S)
        store = open_state(config)
        ref = fleet_table(config)
        table = load_table(config, ref)
        root = local(table.location())
        schema = schema_to_pyarrow(table.schema(), include_field_ids=False)
        rows_before = len(table_rows(config, ref))

        def parquet(ids: list[int]) -> bytes:
            buffer = BytesIO()
            pq.write_table(importable_rows(schema, ids), buffer)
            return buffer.getvalue()

        template = tmp_path / "template.parquet"
        template.write_bytes(parquet([0]))
        age(template, days=3)
        imported_all: list[Path] = []
        orphans: list[Path] = []  # planted and not imported: what is left of them after each round
        report: list[dict[str, object]] = []
        late: list[dict[str, object]] = []  # stopped too late to import 40 files it had not reached: run again
        spinners = Spinners(int(os.environ.get("ICEMAINT_STRESS_SPINNERS", SPINNERS)))
        started = time.monotonic()
        try:
            attempt = 0
            while len(report) < len(rounds):
                attempt += 1
                assert attempt <= len(rounds) + 5, f"too many rounds stopped too late (seed {seed}): {late}"
                number = len(report)
                mode, forced = rounds[number]
                folder = root / "data" / "region=0" / f"imp-a{attempt:02d}"
                planted = plant_round(folder, STRESS_PLANTED, IMPORTED, template,
                                      lambda n, a=attempt: parquet([20_000_000 + a * 100_000 + n * 10 + i for i in range(10)]))
                done = {"round": number, "attempt": attempt, "mode": mode, "forced": forced, "seed": seed}
                orphans = [p for p in orphans if p.exists()] + planted  # what a fenced round left comes first in the deletion order
                versions, launched = metadata_versions(root), time.monotonic()
                paused = PausedJob(config_path, home, "orphans", str(ref), ["--older-than", "1d"], stop_at=None if mode == "delay" else mode,
                                   log=tmp_path / f"orphans-{attempt:02d}.log")
                try:
                    while metadata_versions(root) == versions and not paused.stopped() and paused.proc.poll() is None:
                        time.sleep(0.002)  # until it claims the table, right before it deletes
                    spinners.run()
                    claimed = time.monotonic()
                    if mode == "delay":
                        delay = rng.uniform(0.0, 0.030)
                        while planted[0].exists() and paused.proc.poll() is None:  # one stat a poll: the folder shrinks from its first name on
                            time.sleep(0.0005)
                        time.sleep(delay)
                        if paused.proc.poll() is None:
                            os.killpg(paused.proc.pid, signal.SIGSTOP)
                        done["delay_ms"] = round(delay * 1000, 1)
                    paused.wait_until_stopped(or_ended=True)
                    spinners.pause()
                    stopped_at = time.monotonic()
                    remaining = sorted(p for p in planted if p.exists())
                    done["deleted_before_the_pause"] = STRESS_PLANTED - len(remaining)
                    left_at_stop = sum(p.exists() for p in orphans)
                    if paused.proc.poll() is not None or len(remaining) <= IMPORTED:  # stopped too late to import 40 it has not reached
                        spinners.run()
                        ending = paused.resume() if paused.proc.poll() is None else paused.result()
                        spinners.pause()
                        done.update({"status": ending["status"], "error": str(ending.get("error") or "")[:300], "spinners": spinners.active})
                        late.append(done)
                        assert missing_referenced_files(load_table(config, ref)) == [], done
                        if ending["status"] == FAILED:  # only as its batches' looks outlasted their windows under this load, here
                            assert "stalled" in done["error"] and done["deleted_before_the_pause"] == 0, done
                            spinners.lighten()
                        continue
                    if forced:
                        store.leases.force_release(str(ref))
                    imported = remaining[-IMPORTED:]
                    assert imported == planted[-IMPORTED:], done
                    import_files(config, ref, imported)
                    imported_all.extend(imported)
                    chosen = set(imported)
                    orphans = [p for p in orphans if p not in chosen]
                    left_at_stop -= len(imported)
                    time.sleep(max(0.0, stopped_at + WINDOW_S + 0.5 - time.monotonic()))  # past the window of the batch it was stopped in
                    spinners.run()
                    resumed = time.monotonic()
                    os.killpg(paused.proc.pid, signal.SIGCONT)
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        paused.proc.wait(LOADED_AFTER_RESUME_S)  # its next batch (the look at the references, the lease row) under load
                    spinners.pause()
                    result = paused.result()
                    ended = time.monotonic()
                finally:
                    paused.kill()
                    spinners.pause()
                done.update({k: result.get(k) for k in ("status", "files_deleted", "files_referenced_since_planning", "error")})
                # seconds: to the claim (no load), to the stop (loaded), paused, from the resume to the run's end (loaded at first)
                done["spinners"] = spinners.active
                done["seconds"] = tuple(round(b - a, 1) for a, b in ((launched, claimed), (claimed, stopped_at), (stopped_at, resumed), (resumed, ended)))
                report.append(done)
                lost = [p.name for p in imported_all if not p.exists()]
                assert lost == [], f"imported files deleted: {lost} in {done} (seed {seed})"
                assert missing_referenced_files(load_table(config, ref)) == [], done
                left = [p for p in orphans if p.exists()]
                if forced:
                    assert result["status"] == FENCED, done
                    assert left_at_stop - len(left) in (0, 1), done  # after the resume, at most the one deletion it had begun
                    expire_lease_now(store, ref)
                else:
                    assert result["status"] == COMMITTED and result["files_referenced_since_planning"] == IMPORTED, done
                    assert left == [], done
        finally:
            spinners.close()
        elapsed = time.monotonic() - started

    assert len(table_rows(config, ref)) == rows_before + 10 * len(imported_all), report  # every imported row reads back
    assert len(imported_all) == IMPORTED * len(rounds) and all(p.exists() for p in imported_all)
    print(f"\n{len(rounds)} rounds in {elapsed:.0f} s (seed {seed}; {len(late)} stopped too late, run again):")
    for done in report + late:
        print("  ", {k: v for k, v in done.items() if k not in ("seed", "error")})
