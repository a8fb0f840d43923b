"""Daemons over a fleet of 10,000 tables: one daemon's resident memory, and a killed daemon's
share taken over by the other (issue: the fleet).

    .venv/bin/python benchmarks/daemon_fleet.py [--tables 10000] [--home DIR] [--json-out F]

The fleet is `icemaint workload fleet`'s (made in `--home` when missing, kept for the next
call). The daemons run as `icemaint daemon` processes with a policy whose triggers never
fire on these tables (COMPACT at a million data files), so they evaluate every interval and
never start Spark: what is measured is the evaluation loop and what it keeps.

- memory: one daemon (SQLite state) through a cold and a warm cycle; the resident memory of
  its whole process tree (`memory.tree_rss_mib`) after the warm cycle, and the Python
  process's peak (`VmHWM`). Then it is stopped and started again on the same state: its
  first cycle after the restart (from the evaluations it shared, `schedule/stored.py`).
- takeover: two daemons on PostgreSQL state (a database of its own, made afresh) share the
  fleet (`maintenance/schedule/membership.py`); once both have evaluated their shares, one is
  killed with SIGKILL (its whole process group), and the time until the survivor's cycle
  covers every table is measured, against the lease TTL (a membership lives half of it).
Each daemon's cycles are read from its JSON log ("evaluated" lines: tables, share, seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import evaluated_cycles, wait_for_cycles, write_json
from memory import status_kib, tree_rss_mib

INTERVAL_S = 30
LEASE_TTL_S = 60


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=10_000)
    parser.add_argument("--home", help="where the fleet is (made when missing)")
    parser.add_argument("--postgres", default="postgresql+psycopg://postgres@127.0.0.1:5432/icemaint_bench_daemons")
    parser.add_argument("--json-out")
    args = parser.parse_args()
    home = Path(args.home or tempfile.mkdtemp(prefix="icemaint-bench-daemons-"))
    os.environ["ICEMAINT_HOME"] = str(home)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from maintenance.catalogs import get_catalog
    from maintenance.config import load_config
    from maintenance.workload.fleet import FleetOptions, make_fleet

    config = load_config(None)
    made = make_fleet(get_catalog(config, config.default_catalog), config.default_catalog, FleetOptions(tables=args.tables))
    policies = home / "bench-policies"
    policies.mkdir(exist_ok=True)
    (policies / "never.yaml").write_text("name: never\njobs:\n  compact:\n    when: {data_files: 1000000}\n")
    result = {"tables": args.tables, "generate_s": made.seconds, "tables_created": made.tables_created, "interval_s": INTERVAL_S,
              "lease_ttl_s": LEASE_TTL_S, "membership_ttl_s": LEASE_TTL_S / 2}
    result.update(memory(home, policies, args.tables))
    result.update(takeover(home, policies, args.tables, args.postgres))
    print(json.dumps(result, indent=2))
    write_json(args.json_out, result)


def _config(home: Path, policies: Path, name: str, state_url: str | None) -> Path:
    path = home / f"{name}.yaml"
    state = f"state:\n  url: {state_url}\n" if state_url else ""
    path.write_text(f"home: {home}\npolicies: {policies}\n{state}leases:\n  ttl_seconds: {LEASE_TTL_S}\n"
                    f"daemon:\n  interval: {INTERVAL_S}s\n  metrics_port: 0\n")
    return path


def _start(config: Path, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "ICEMAINT_CONFIG": str(config)}
    return subprocess.Popen([sys.executable, "-m", "maintenance", "daemon"], env=env, stdout=subprocess.DEVNULL, stderr=log.open("wb"),
                            start_new_session=True)


def _stop(daemon: subprocess.Popen[bytes]) -> None:
    if daemon.poll() is None:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=120)


def memory(home: Path, policies: Path, tables: int) -> dict:
    log = home / "memory-daemon.log"
    for stale in [log, home / "restarted-daemon.log", *home.glob("memory-state.db*")]:  # a cold start: no shared evaluation yet
        stale.unlink(missing_ok=True)
    daemon = _start(_config(home, policies, "memory", f"sqlite:///{home / 'memory-state.db'}"), log)
    try:
        cycles = wait_for_cycles(log, 2, "memory")
        rss = tree_rss_mib(daemon.pid)
        peak = status_kib(daemon.pid, "VmHWM") / 1024
        java = subprocess.run(["pgrep", "-f", "-s", str(os.getpgid(daemon.pid)), "java"], capture_output=True).returncode == 0
    finally:
        _stop(daemon)
    restart_log = home / "restarted-daemon.log"
    restarted = _start(_config(home, policies, "memory", f"sqlite:///{home / 'memory-state.db'}"), restart_log)
    try:
        first_after_restart = wait_for_cycles(restart_log, 1, "restart")[0]
    finally:
        _stop(restarted)
    return {"memory_cycles": cycles[:2], "daemon_rss_mib": rss, "daemon_peak_mib": peak, "jvm_running": java,
            "memory_tables_evaluated": cycles[0].get("tables"), "restart_cycle": first_after_restart}


def takeover(home: Path, policies: Path, tables: int, url: str) -> dict:
    from sqlalchemy import create_engine, make_url, text

    server = create_engine(make_url(url).set(database="postgres"), isolation_level="AUTOCOMMIT")
    with server.connect() as conn:
        conn.execute(text(f"DROP DATABASE IF EXISTS {make_url(url).database}"))
        conn.execute(text(f"CREATE DATABASE {make_url(url).database}"))
    server.dispose()
    config = _config(home, policies, "shared", url)
    logs = [home / "daemon-a.log", home / "daemon-b.log"]
    for log in logs:
        log.unlink(missing_ok=True)
    daemons = [_start(config, log) for log in logs]
    try:
        deadline = time.monotonic() + 1800
        while time.monotonic() < deadline:  # both members, each through a cycle of its share
            shares = [[c for c in evaluated_cycles(log) if c.get("tables", 0) < tables] for log in logs]
            if all(shares):
                break
            time.sleep(0.5)
        else:
            raise SystemExit(f"takeover: the daemons did not share the fleet (logs: {logs})")
        shared = [s[-1] for s in shares]
        os.killpg(daemons[1].pid, signal.SIGKILL)
        killed_at = time.monotonic()
        daemons[1].wait()
        seen = len(evaluated_cycles(logs[0]))
        while time.monotonic() < killed_at + 1800:
            later = evaluated_cycles(logs[0])[seen:]
            whole = [c for c in later if c.get("tables") == tables]
            if whole:
                return {"shared_cycles": shared, "takeover_s": time.monotonic() - killed_at, "takeover_cycle": whole[0],
                        "cycles_between": len(later) - 1}
            time.sleep(0.5)
        raise SystemExit(f"takeover: the survivor never evaluated all {tables} tables (log: {logs[0]})")
    finally:
        for daemon in daemons:
            _stop(daemon)


if __name__ == "__main__":
    main()
