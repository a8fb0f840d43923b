"""The command line as users and scripts see it: JSON fields, one-line errors, exit codes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pyiceberg.catalog.sql import SqlCatalog

from tests.support.cli import assert_one_line_error, in_process, run_cli
from tests.support.daemon import EVALUATIONS_OK, free_port, healthz, http_get, metric, stop_daemon, wait_for
from tests.support.paths import REPO

# What `--help` and `--version` must not import: together they took 3 s to import here
# (pyiceberg's catalogs alone 0.8 s), and a user reading the help needs none of them. PyYAML
# (30 ms) may come: `daemon --help` reads its defaults from `config.DaemonConfig`.
HEAVY = {"pyspark", "py4j", "pyiceberg", "pyarrow", "sqlalchemy", "alembic", "structlog", "strictyaml", "pydantic", "boto3",
         "botocore", "pandas", "numpy", "apscheduler", "prometheus_client", "psycopg", "pymysql", "fsspec"}


@pytest.mark.process
def test_unknown_table_exits_2(tmp_path: Path) -> None:
    SqlCatalog("local", uri=f"sqlite:///{tmp_path / 'catalog.db'}", warehouse=(tmp_path / "warehouse").as_uri())  # the embedded default's catalog, empty
    for command in ("health", "verify"):
        assert_one_line_error(run_cli(command, "demo.missing", home=tmp_path), 2, "unknown table", "local.demo.missing")


@pytest.mark.process
def test_unknown_catalog_exits_2(tmp_path: Path) -> None:
    assert_one_line_error(run_cli("health", "nowhere.demo.orders", home=tmp_path), 2, "unknown catalog 'nowhere'")


@pytest.mark.process
def test_missing_config_file_exits_2(tmp_path: Path) -> None:
    assert_one_line_error(run_cli("--config", str(tmp_path / "nope.yaml"), "health", "a.b", home=tmp_path), 2, "cannot read config")


@pytest.mark.process
def test_bad_usage_exits_2(tmp_path: Path) -> None:
    assert_one_line_error(run_cli("workload", "cdc", "demo.t", "--rows", "0", home=tmp_path), 2, "--rows")
    assert_one_line_error(run_cli("health", home=tmp_path), 2, "TABLE")
    assert_one_line_error(run_cli("health", "justonepart", home=tmp_path), 2, "namespace.table")
    assert_one_line_error(run_cli("nosuchcommand", home=tmp_path), 2, "nosuchcommand")


@pytest.mark.process
def test_unreachable_catalog_keeps_its_secret(tmp_path: Path) -> None:
    """A failing REST catalog: exit 1, one line, and its credential nowhere in output or logs."""
    secret = "s3cr3t-Token-Value-123"
    config = tmp_path / "icemaint.yaml"
    config.write_text("catalogs:\n  lake:\n    type: rest\n    uri: http://127.0.0.1:9/catalog\n    credential: ${LAKE_CREDENTIAL}\n")
    proc = run_cli("--config", str(config), "--log-level", "debug", "health", "lake.ns.t", home=tmp_path, env={"LAKE_CREDENTIAL": secret})
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1].startswith("icemaint: error: catalog 'lake' is unavailable")
    logs = "".join(p.read_text() for p in (tmp_path / "logs").glob("*.log"))
    assert secret not in proc.stdout + proc.stderr + logs


def test_workload_health_verify_as_in_the_issue(home: Path, spark, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = in_process(capsys, "workload", "cdc", "cli.orders", "--rows", "20000", "--commits", "10", "--update-ratio", "0.1", "--delete-ratio", "0.02", "--json")
    assert code == 0
    workload = json.loads(out)

    code, out, _ = in_process(capsys, "health", "cli.orders", "--json")
    health = json.loads(out)
    assert code == 0
    assert health["equality_delete_files"] >= 10 and health["position_delete_files"] >= 1
    expected_fields = {
        "table", "format_version", "current_snapshot_id", "sequence_number", "data_files", "data_bytes", "data_records",
        "small_data_files", "position_delete_files", "position_delete_records", "equality_delete_files",
        "equality_delete_records", "deletion_vectors", "deletion_vector_records", "manifests", "snapshots", "oldest_snapshot_age_s",
        "metadata_files", "partitions",
    }
    assert expected_fields <= set(health)
    assert health["partitions"] and {"partition", "data_files", "equality_delete_files"} <= set(health["partitions"][0])

    code, out, _ = in_process(capsys, "verify", "cli.orders", "--json")
    verify = json.loads(out)
    assert code == 0
    assert set(verify) == {"table", "snapshot_id", "rows", "fingerprint"}
    assert verify["rows"] == workload["expected_rows"]
    assert verify["snapshot_id"] == workload["snapshot_id"] == health["current_snapshot_id"]

    code, _, err = in_process(capsys, "verify", "cli.orders", "--snapshot", "12345")
    assert code == 2 and "no snapshot 12345" in err


def test_demo_runs_start_to_finish(home: Path, spark, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = in_process(capsys, "demo", "--table", "cli.demo_orders", "--rows", "2000", "--commits", "4")
    assert code == 0, out
    assert "rows matches the workload model" in out
    assert "content_verified: True" in out
    assert "due: merge (default policy)" in out  # one cycle, as the shipped default policy decides
    after = out.split("5. health after:")[1]
    assert re.search(r"^\s*equality_delete_files\s+0$", after, re.M) and re.search(r"^\s*position_delete_files\s+0$", after, re.M), after
    code, out, _ = in_process(capsys, "demo", "--table", "cli.demo_orders", "--rows", "1000", "--commits", "2")
    assert code == 0 and "dropping the previous demo table" in out  # re-runnable


@pytest.mark.process
def test_a_wrong_database_is_a_configuration_error_and_an_unreachable_one_a_failure(tmp_path: Path) -> None:
    """A catalog file that is not SQLite, or a PostgreSQL role that does not exist, will not
    fix itself: exit 2. A server that does not answer may come back: exit 1."""
    not_sqlite = tmp_path / "catalog.db"
    not_sqlite.write_text("this is not a database\n")
    config = tmp_path / "icemaint.yaml"
    config.write_text(f"catalogs:\n  lake:\n    type: sql\n    uri: sqlite:///{not_sqlite}\n    warehouse: {tmp_path / 'wh'}\n")
    assert_one_line_error(run_cli("--config", str(config), "health", "ns.t", home=tmp_path), 2, "catalog 'lake'", "not a database")
    config.write_text("state:\n  url: postgresql://no_such_role_here@127.0.0.1:5432/test\n")
    assert_one_line_error(run_cli("--config", str(config), "runs", home=tmp_path), 2, 'role "no_such_role_here" does not exist')
    config.write_text("state:\n  url: postgresql://icemaint@127.0.0.1:9/state\n")
    assert_one_line_error(run_cli("--config", str(config), "runs", home=tmp_path), 1, "state database unreachable")


def _imported_by(*args: str) -> set[str]:
    """The top-level packages `python -X importtime -m maintenance ARGS` imported, from its
    own report on stderr."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "maintenance", *args], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Usage: icemaint" in proc.stdout or "version" in proc.stdout, proc.stdout
    return {line.rsplit("|", 1)[1].strip().split(".")[0] for line in proc.stderr.splitlines() if line.startswith("import time:") and "|" in line}


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["merge", "--help"], ["plan", "--config", "x.yaml", "--help"]])
def test_help_and_version_import_no_heavy_module(args: list[str]) -> None:
    imported = _imported_by(*args)
    assert "click" in imported  # the report is read right
    assert imported & HEAVY == set()


_EVERY_HELP = """
import json, sys
import click
from maintenance.cli.main import cli, main

def paths(group, prefix):
    for name, command in group.commands.items():
        yield [*prefix, name]
        if isinstance(command, click.Group):
            yield from paths(command, [*prefix, name])

shown = []
for path in paths(cli, []):
    try:
        main([*path, "--help"])
    except SystemExit as exc:
        assert exc.code in (0, None), (path, exc.code)
    shown.append(" ".join(path))
print(json.dumps({"commands": shown, "modules": sorted({m.split(".")[0] for m in sys.modules})}))
"""


@pytest.mark.process
def test_every_commands_help_imports_no_heavy_module() -> None:
    """`icemaint <command> --help` for every command and subcommand, in one process: the
    modules loaded at the end are what all of them imported together."""
    proc = subprocess.run([sys.executable, "-c", _EVERY_HELP], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert {"merge", "plan", "run", "daemon", "workload cdc", "workload fleet", "leases release", "db upgrade"} <= set(report["commands"])
    assert set(report["modules"]) & HEAVY == set()


@pytest.mark.process
def test_global_options_after_the_command(tmp_path: Path) -> None:
    """`--config`, `--log-format` and `--log-level` work after the command (and its
    subcommand, and its arguments) as before it."""
    missing = str(tmp_path / "nope.yaml")
    for args in (["plan", "--config", missing], [f"--config={missing}", "plan"], ["plan", f"--config={missing}"],
                 ["workload", "fleet", "--tables", "1", "--config", missing], ["health", "a.b", "--config", missing]):
        assert_one_line_error(run_cli(*args, home=tmp_path), 2, "cannot read config", "nope.yaml")
    config = tmp_path / "icemaint.yaml"
    config.write_text(f"home: {tmp_path / 'elsewhere'}\n")
    for args in (["--config", str(config), "db", "upgrade"], ["db", "upgrade", "--config", str(config), "--log-level", "info", "--log-format", "json"]):
        proc = run_cli(*args, home=tmp_path)
        assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "elsewhere" / "state.db").exists() and not (tmp_path / "state.db").exists()
    assert_one_line_error(run_cli("db", "upgrade", "--log-level", "nonsense", home=tmp_path), 2, "--log-level", "nonsense")
    assert_one_line_error(run_cli("plan", "--config", home=tmp_path), 2, "'--config' requires an argument")


@pytest.mark.process
def test_daemon_help_lists_its_settings(tmp_path: Path) -> None:
    proc = run_cli("daemon", "--help", home=tmp_path)
    shown = " ".join(proc.stdout.split())  # click wraps the help to the terminal
    assert proc.returncode == 0, proc.stderr
    for flag, default in (("--interval DURATION", "daemon.interval of the config, else 1m"), ("--max-concurrent-jobs N", "else 2"),
                          ("--spark-idle DURATION", "daemon.spark_idle of the config, else 5m"), ("--shutdown-grace DURATION", "else 2m"),
                          ("--metrics-port PORT", "daemon.metrics_port of the config, else 9464"), ("--metrics-host HOST", "else 0.0.0.0"),
                          ("--metrics-tables N", "else 100")):
        assert flag in shown and default in shown, (flag, shown)
    assert_one_line_error(run_cli("daemon", "--interval", "5", home=tmp_path), 2, "--interval", "needs a unit")
    assert_one_line_error(run_cli("daemon", "--max-concurrent-jobs", "0", home=tmp_path), 2, "--max-concurrent-jobs")


@pytest.mark.process
def test_daemon_flags_override_the_configs_daemon_section(tmp_path: Path) -> None:
    """The config says an hour between evaluations and no HTTP port; the flags say a second
    and a port: the daemon serves on that port and evaluates every second."""
    config = tmp_path / "icemaint.yaml"
    config.write_text("daemon:\n  interval: 1h\n  metrics_port: 0\n  max_concurrent_jobs: 1\n")
    port = free_port()
    log = tmp_path / "daemon.log"
    env = {**os.environ, "ICEMAINT_HOME": str(tmp_path / "home")}
    env.pop("ICEMAINT_CONFIG", None)
    (tmp_path / "home").mkdir()
    SqlCatalog("local", uri=f"sqlite:///{tmp_path / 'home' / 'catalog.db'}", warehouse=(tmp_path / "home" / "warehouse").as_uri())  # empty: ready, nothing to do
    daemon = subprocess.Popen([sys.executable, "-m", "maintenance", "daemon", "--config", str(config), "--interval", "1s", "--metrics-port", str(port),
                               "--metrics-host", "127.0.0.1", "--max-concurrent-jobs", "3"], stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env)
    try:
        wait_for(lambda: healthz(port)[0] == 200, 60, "/healthz on the port of --metrics-port", [log])
        wait_for(lambda: metric(port, EVALUATIONS_OK) >= 3, 30, "an evaluation every second", [log])
        page = http_get(port, "/")[1]
        assert "Catalog local lists no table; check the catalog" in page, page  # an empty catalog is said while it lasts
    finally:
        code = stop_daemon(daemon, log)
    assert code == 0, log.read_text()[-3000:]
    assert log.read_text().count('"catalog lists no table"') == 1  # once, not every evaluation
    started = next(json.loads(line) for line in log.read_text().splitlines() if '"daemon started"' in line)
    assert (started["interval_s"], started["max_concurrent_jobs"], started["metrics_port"]) == (1.0, 3, port)


@pytest.mark.process
def test_health_text_shows_sizes_in_binary_units_and_each_partition_once(tmp_path: Path) -> None:
    made = run_cli("workload", "fleet", "--tables", "1", "--partitions", "3", "--rows", "2000", home=tmp_path)
    assert made.returncode == 0, made.stderr
    health = json.loads(run_cli("health", "fleet.t00000", "--json", home=tmp_path).stdout)
    assert isinstance(health["data_bytes"], int) and all(isinstance(p["data_bytes"], int) for p in health["partitions"])  # JSON: bytes

    proc = run_cli("health", "fleet.t00000", home=tmp_path)

    assert proc.returncode == 0, proc.stderr
    shown = re.search(r"^\s*data_bytes\s+(\S+) (\S+)$", proc.stdout, re.M)
    assert shown is not None and shown[2] == "KiB" and abs(float(shown[1]) - health["data_bytes"] / 1024) <= 0.05, proc.stdout
    lines = proc.stdout.splitlines()
    for partition in health["partitions"]:
        (line,) = [line for line in lines if partition["partition"] in line]  # once
        assert f"{partition['data_bytes'] / 1024:.1f} KiB" in line and f"  {partition['data_records']}  " in line, line
    assert "partitions (3):" in proc.stdout
