"""`icemaint db upgrade`, `leases`, `leases release --force` and `runs` as a user runs them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from maintenance.state.database import make_engine
from maintenance.state.leases import LeaseStore
from maintenance.state.runs import RunStore
from tests.support.cli import assert_one_line_error, run_cli
from tests.support.paths import REPO

pytestmark = pytest.mark.process  # every test here starts processes (the CLI, a daemon, workers)


def test_db_upgrade_is_idempotent(tmp_path: Path) -> None:
    for _ in range(2):
        proc = run_cli("db", "upgrade", home=tmp_path)
        assert proc.returncode == 0, proc.stderr
        head = sorted(p.name[:4] for p in (REPO / "migrations" / "versions").glob("[0-9]*.py"))[-1]
        assert f"revision {head} (head {head})" in proc.stdout
    assert (tmp_path / "state.db").exists()


def test_leases_listing_and_forced_release(tmp_path: Path) -> None:
    assert run_cli("leases", home=tmp_path).stdout.strip() == f"no leases in sqlite:///{tmp_path / 'state.db'}"
    store = LeaseStore(make_engine(f"sqlite:///{tmp_path / 'state.db'}"))
    lease = store.acquire("local.demo.orders", "daemon-1", ttl_s=600)
    assert lease is not None

    listed = json.loads(run_cli("leases", "--json", home=tmp_path).stdout)
    assert listed == [
        {**listed[0], "table": "local.demo.orders", "holder": "daemon-1", "epoch": lease.epoch, "held": True}
    ]
    assert 590 < listed[0]["expires_in_s"] <= 600

    assert_one_line_error(run_cli("leases", "release", "demo.orders", home=tmp_path), 2, "--force")
    released = run_cli("leases", "release", "demo.orders", "--force", home=tmp_path)
    assert released.returncode == 0 and f"epoch is now {lease.epoch + 1}" in released.stdout
    assert "free for another holder in 5" in released.stdout  # at the old expiry, about 600 s away
    after = json.loads(run_cli("leases", "--json", home=tmp_path).stdout)[0]
    assert after["held"] is False and after["holder"] is None and after["epoch"] == lease.epoch + 1
    assert 500 < after["expires_in_s"] <= 600  # nobody takes it before then
    assert not store.is_held(lease)
    assert store.acquire("local.demo.orders", "daemon-2", ttl_s=600) is None


def test_releasing_a_free_lease_says_so(tmp_path: Path) -> None:
    assert run_cli("db", "upgrade", home=tmp_path).returncode == 0
    store = LeaseStore(make_engine(f"sqlite:///{tmp_path / 'state.db'}"))
    lease = store.acquire("local.demo.orders", "daemon-1", ttl_s=600)
    assert lease is not None and store.release(lease)
    released = run_cli("leases", "release", "demo.orders", home=tmp_path)
    assert released.returncode == 0 and released.stdout.strip() == "the lease on local.demo.orders is not held; nothing to release"


def test_runs_history(tmp_path: Path) -> None:
    assert run_cli("db", "upgrade", home=tmp_path).returncode == 0
    runs = RunStore(make_engine(f"sqlite:///{tmp_path / 'state.db'}"))
    runs.start("run-1", "local.demo.orders", "convert", holder_id="h", lease_epoch=1)
    runs.finish("run-1", "committed", snapshot_id=42, counters={"equality_delete_files_removed": 3})
    runs.start("run-2", "local.demo.other", "merge", holder_id="h", lease_epoch=1)
    runs.finish("run-2", "fenced", error="lease lost")

    mine = json.loads(run_cli("runs", "--table", "demo.orders", "--json", home=tmp_path).stdout)
    assert [(r["run_id"], r["status"], r["snapshot_id"]) for r in mine] == [("run-1", "committed", 42)]
    assert mine[0]["counters"] == {"equality_delete_files_removed": 3} and mine[0]["ended_at"]
    everything = run_cli("runs", home=tmp_path)
    assert everything.returncode == 0 and "fenced" in everything.stdout and "run-2" in everything.stdout


def test_runs_show_how_long_each_run_took(tmp_path: Path) -> None:
    assert run_cli("db", "upgrade", home=tmp_path).returncode == 0
    runs = RunStore(make_engine(f"sqlite:///{tmp_path / 'state.db'}"))
    runs.start("run-slow", "local.demo.orders", "merge", holder_id="h", lease_epoch=1)
    time.sleep(1.3)
    runs.finish("run-slow", "committed", snapshot_id=7)
    runs.start("run-now", "local.demo.orders", "convert", holder_id="h", lease_epoch=2)  # still running

    records = {r["run_id"]: r for r in json.loads(run_cli("runs", "--json", home=tmp_path).stdout)}
    assert 1.3 <= records["run-slow"]["duration_s"] < 10 and records["run-now"]["duration_s"] is None

    text = run_cli("runs", home=tmp_path).stdout.splitlines()
    assert text[0].split()[:2] == ["started_at", "duration"], text
    rows = {line.split()[-2]: line.split() for line in text[1:]}  # by run id (the error column is `-`)
    assert re.fullmatch(r"1\.\ds", rows["run-slow"][1]) and rows["run-now"][1] == "-", text


def test_the_state_database_is_the_configs_wherever_the_shell_stands_and_is_said(tmp_path: Path) -> None:
    """A cron job in another folder shares the daemon's leases only if both open one state
    database: with `--config`, it is beside the config file whatever the current folder, and
    `--json` and `-v` say which one was used."""
    conf, cron_folder, shell_folder = (tmp_path / name for name in ("conf", "cron", "shell"))
    for folder in (conf, cron_folder, shell_folder):
        folder.mkdir()
    (conf / "icemaint.yaml").write_text("daemon:\n  interval: 1m\n")
    env = {k: v for k, v in os.environ.items() if k not in ("ICEMAINT_HOME", "ICEMAINT_CONFIG")}

    def icemaint(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "maintenance", "--config", str(conf / "icemaint.yaml"), *args], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=300, check=False)

    made = icemaint(cron_folder, "workload", "fleet", "--tables", "1")
    planned = icemaint(shell_folder, "plan", "--json", "-v")
    runs = icemaint(cron_folder, "runs", "--verbose")
    no_runs = icemaint(cron_folder, "runs", "--json", "-v")
    ran = icemaint(shell_folder, "orphans", "local.fleet.t00000", "--json")  # no Spark: a noop, recorded
    runs_json = icemaint(cron_folder, "runs", "--json")
    leases_json = icemaint(shell_folder, "leases", "--json", "-v")

    assert made.returncode == 0 and planned.returncode == 0 and ran.returncode == 0, made.stderr + planned.stderr + ran.stderr
    expected = f"sqlite:///{conf / '.icemaint' / 'state.db'}"  # README: .icemaint beside the file
    assert json.loads(planned.stdout)["state_database"] == expected
    assert json.loads(ran.stdout)["state_database"] == expected
    assert expected in planned.stderr and "state database" in planned.stderr  # -v: the log line on stderr
    assert runs.stdout.strip() == f"no runs in {expected}" and expected in runs.stderr
    assert json.loads(no_runs.stdout) == [] and expected in no_runs.stderr  # an empty array names none: -v does
    # lists stay lists (scripts index them); each entry names its state database
    [run] = json.loads(runs_json.stdout)
    [lease] = json.loads(leases_json.stdout)
    assert (run["run_id"], run["state_database"]) == (json.loads(ran.stdout)["run_id"], expected)
    assert (lease["table"], lease["state_database"]) == ("local.fleet.t00000", expected) and expected in leases_json.stderr
    assert (conf / ".icemaint" / "state.db").exists()
    assert not any(folder.joinpath(".icemaint").exists() or any(folder.iterdir()) for folder in (cron_folder, shell_folder))
