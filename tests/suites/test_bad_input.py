"""Bad input ends in one line on stderr and the contract's exit code (2: usage or config; 1: a
table or job failure naming the table and file), never a traceback: each case a user met."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from maintenance.catalogs import load_table, parse_table_ref
from maintenance.config import Config
from maintenance.run.runner import run_job
from maintenance.state.store import open_state
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory
from tests.support.cli import assert_one_line_error, run_cli
from tests.support.file_checks import local
from tests.support.paths import REPO


@pytest.mark.process
def test_a_config_file_that_is_not_utf8(tmp_path: Path) -> None:
    config = tmp_path / "icemaint.yaml"
    config.write_bytes(b"catalogs:\n  x:\n    type: sql\n    uri: sqlite:///c\xff\xfe.db\n")
    assert_one_line_error(run_cli("--config", str(config), "plan", home=tmp_path), 2, "not UTF-8 text")


@pytest.mark.process
@pytest.mark.parametrize(("text", "key"), [
    ("catalogs: [\n", "icemaint.yaml:2"),
    ("catalogs:\n  x:\n    type: oracle\n", "type must be one of"),
    ("spark:\n  mastr: local\n", "unknown key 'mastr'"),
    ("catalogs:\n  x:\n    type: rest\n    uri: ${ICEMAINT_TEST_UNSET_VARIABLE}\n", "ICEMAINT_TEST_UNSET_VARIABLE is not set"),
    ("- just\n- a list\n", "must be a mapping"),
    ("home: [/var/lib/icemaint]\n", "home must be a string, not a list"),
    ("state:\n  url: postgresql://icemaint:pw@db:port/icemaint\n", "state.url is not a valid URL: its port is not a number"),
    ("catalogs:\n  lake:\n    type: rest\n    uri: https://catalog.example.com:8x81/api\n", "catalogs.lake.uri is not a valid URL"),
])
def test_a_broken_or_wrongly_typed_config_exits_2_naming_what_is_wrong(tmp_path: Path, text: str, key: str) -> None:
    config = tmp_path / "icemaint.yaml"
    config.write_text(text)
    assert_one_line_error(run_cli("--config", str(config), "plan", home=tmp_path), 2, key)


@pytest.mark.process
def test_an_impossible_workload_size_is_refused_at_once(tmp_path: Path) -> None:
    started = time.monotonic()
    assert_one_line_error(run_cli("workload", "cdc", "demo.t", "--rows", "1000000000000", home=tmp_path), 2, "--rows", "20000000")
    assert time.monotonic() - started < 30


@pytest.mark.process
def test_a_corrupt_current_metadata_file_names_the_table_and_the_file(spark, config: Config, cdc_table: CdcFactory, home: Path) -> None:
    ref, _, _ = cdc_table(rows=200, commits=1)
    metadata = local(load_table(config, ref).metadata_location)
    metadata.write_text('{"format-version": 2, "table-uuid": "not a uuid"')
    for command in (["health", str(ref)], ["merge", str(ref)], ["plan", str(ref)]):
        proc = run_cli(*command, home=home)
        assert_one_line_error(proc, 1, f"table '{ref}'", "metadata file cannot be read", str(metadata))


def test_merge_refuses_equality_deletes_on_a_dropped_column_as_convert_does(spark, config: Config, cdc_table: CdcFactory) -> None:
    """The generated table's equality deletes are on `id`; once `id` is dropped, nothing can
    apply them by the current schema. Both jobs refuse in one line naming the table and file."""
    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=300, commits=2)
    spark.sql(f"ALTER TABLE {ref.spark_name} DROP IDENTIFIER FIELDS id")
    spark.sql(f"ALTER TABLE {ref.spark_name} DROP COLUMN id")
    for job in ("merge", "convert", "compact"):
        result = run_job(config, ref, job, {"min_input_files": 1} if job == "compact" else {})
        assert result.status == "failed", (job, result)
        assert result.error is not None and "names field id 1, which is not in the table's current schema" in result.error and str(ref) in result.error
        assert ".parquet" in result.error


def _ended_with_a_result(stdout: str) -> bool:
    """The command printed its whole result (`--json`): the job had ended when the signal came."""
    try:
        return "status" in json.loads(stdout)
    except ValueError:
        return False


def _interrupt_after(seconds: float, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ICEMAINT_HOME": str(home)}
    proc = subprocess.Popen([sys.executable, "-m", "maintenance", *args], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    time.sleep(seconds)
    os.kill(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C reaches the foreground process
    out, err = proc.communicate(timeout=180)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.process
@pytest.mark.slow
def test_ctrl_c_at_any_moment_is_one_line_and_an_interrupted_run(tmp_path: Path) -> None:
    """While Python imports, while Spark starts, while the job works: one line, exit 130; a
    run that had started is recorded `interrupted` and its lease is free again."""
    made = run_cli("workload", "cdc", "demo.orders", "--rows", "20000", "--commits", "8", "--json", home=tmp_path)
    assert made.returncode == 0, made.stderr
    for seconds in (0.3, 1.5, 4.0, 8.0, 12.0):
        proc = _interrupt_after(seconds, tmp_path, "merge", "demo.orders", "--json")
        if proc.returncode == 0 or (proc.returncode == -signal.SIGINT and _ended_with_a_result(proc.stdout)):
            continue  # the job ended before the signal came (or as the interpreter exited, a shell's 130 too): nothing to check at this moment
        assert proc.returncode == 130, (seconds, proc.stderr[-3000:])
        assert proc.stderr.strip().splitlines() == ["icemaint: error: interrupted"], (seconds, proc.stderr[-3000:])
    from maintenance.config import parse_config

    state = open_state(parse_config({"home": str(tmp_path)}, source="test", base_dir=tmp_path))
    runs = state.runs.list(table="local.demo.orders")
    assert runs and all(r.status in ("interrupted", "committed", "noop") for r in runs), [(r.status, r.error) for r in runs]
    assert any(r.status == "interrupted" and r.error and "interrupted" in r.error for r in runs)
    lease = state.leases.get("local.demo.orders")
    assert lease is not None and not lease.held
    assert json.loads(run_cli("leases", "--json", home=tmp_path).stdout)[0]["held"] is False


@pytest.mark.process
def test_an_impossible_fleet_size_is_refused_at_once(tmp_path: Path) -> None:
    """`--rows` is per append, built in memory: 10**12 was a MemoryError (exit 1)."""
    started = time.monotonic()
    assert_one_line_error(run_cli("workload", "fleet", "--tables", "1", "--rows", "1000000000000", home=tmp_path), 2, "--rows", "1000000")
    assert time.monotonic() - started < 30


@pytest.mark.process
def test_a_policy_file_that_is_not_utf8_names_the_file(tmp_path: Path) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "good.yaml").write_text("name: good\njobs:\n  orphans:\n    every: 1d\n")
    (policies / "latin1.yaml").write_bytes("name: caf\u00e9\njobs:\n  orphans:\n    every: 1d\n".encode("latin-1"))
    config = tmp_path / "icemaint.yaml"
    config.write_text(f"policies: {policies}\n")
    for command in ("plan", "run"):
        assert_one_line_error(run_cli("--config", str(config), command, home=tmp_path), 2, f"{policies / 'latin1.yaml'}:1: not UTF-8 text")


def _fleet_home(tmp_path: Path, *args: str) -> Config:
    made = run_cli("workload", "fleet", "--tables", "1", *args, home=tmp_path)
    assert made.returncode == 0, made.stderr
    from maintenance.config import parse_config

    return parse_config({"home": str(tmp_path)}, source="test", base_dir=tmp_path)


@pytest.mark.process
def test_a_where_that_does_not_parse_is_one_short_line_naming_where(tmp_path: Path) -> None:
    """pyparsing's message spells out the whole grammar (2,000 characters on one line)."""
    _fleet_home(tmp_path)
    for job in ("merge", "compact"):
        for predicate, at in (("region = = 3", "at column 1"), ("region = 3 AND", "at column 15 (the end)")):
            proc = run_cli(job, "fleet.t00000", "--where", predicate, home=tmp_path)
            assert_one_line_error(proc, 2, "--where", f"'{predicate}' does not parse {at}", "region = 3")
            assert len(proc.stderr) < 300 and "W:(" not in proc.stderr, proc.stderr


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "empty":
        path.write_bytes(b"")
    elif how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    else:  # its last data block overwritten
        path.write_bytes(data[:-200] + b"\xff" * 100 + data[-100:])


COMMANDS_READING_MANIFESTS = (["health", "fleet.t00000"], ["merge", "fleet.t00000", "--dry-run"], ["plan", "fleet.t00000"], ["run", "--dry-run"])


@pytest.mark.process
@pytest.mark.parametrize("how", ["empty", "truncated", "overwritten"])
def test_a_damaged_manifest_list_or_manifest_is_exit_1_naming_the_file(tmp_path: Path, how: str) -> None:
    """A read failure, not a usage error: exit 1, one line naming the table and the file
    (an empty manifest list was EOFError, which click took for "aborted")."""
    config = _fleet_home(tmp_path)
    table = load_table(config, parse_table_ref("fleet.t00000", config))
    manifest_list = local(table.current_snapshot().manifest_list)
    manifest = local(table.current_snapshot().manifests(table.io)[0].manifest_path)
    for damaged in (manifest_list, manifest):
        kept = damaged.read_bytes()
        _damage(damaged, how)
        try:
            # every command that reads manifests, once; the other damages through one of them
            commands = COMMANDS_READING_MANIFESTS if how == "empty" else COMMANDS_READING_MANIFESTS[:1]
            for command in commands:
                proc = run_cli(*command, home=tmp_path)
                assert_one_line_error(proc, 1, "local.fleet.t00000", damaged.name, "is damaged")
        finally:
            damaged.write_bytes(kept)
    assert run_cli("health", "fleet.t00000", home=tmp_path).returncode == 0


def _opened(pid: int, path: Path, timeout_s: float = 60) -> None:
    """Wait until process `pid` has `path` open (it has got as far as its database)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if any(os.path.realpath(fd) == str(path) for fd in Path(f"/proc/{pid}/fd").iterdir()):
                return
        except OSError:
            pass
        time.sleep(0.1)
    pytest.fail(f"process {pid} never opened {path}")


@pytest.mark.process
def test_a_second_ctrl_c_stops_at_once_even_inside_a_call_that_does_not_return(tmp_path: Path) -> None:
    """Another process holds the SQLite state database's write lock: `leases release` waits
    in SQLite's busy handler (60 s), C code where Python runs no signal handler, so the first
    Ctrl-C cannot act. The second stops it at once: exit 130, one line."""
    assert run_cli("db", "upgrade", home=tmp_path).returncode == 0
    database = (tmp_path / "state.db").resolve()
    writer = sqlite3.connect(database, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # a long write transaction elsewhere
    writer.execute("CREATE TABLE a_long_write (x int)")
    env = {**os.environ, "ICEMAINT_HOME": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "maintenance", "leases", "release", "demo.orders", "--force"], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _opened(proc.pid, database)
        time.sleep(1.0)
        os.kill(proc.pid, signal.SIGINT)
        time.sleep(1.5)
        assert proc.poll() is None  # the first one waits for the call to return
        os.kill(proc.pid, signal.SIGINT)
        second = time.monotonic()
        _, err = proc.communicate(timeout=30)
        stopped_after_s = time.monotonic() - second
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        writer.execute("ROLLBACK")
        writer.close()
    assert proc.returncode == 130 and stopped_after_s < 5, (proc.returncode, stopped_after_s, err)
    assert err.strip().splitlines() == ["icemaint: error: interrupted twice: stopped at once, without cleaning up (leases it held expire by themselves)"]
