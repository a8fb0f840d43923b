"""The daemon as a process the tests start and stop, its config, and its HTTP endpoint read back."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from maintenance.catalogs import get_catalog
from maintenance.config import Config
from tests.services.process import free_port

POLICY = """\
name: daemon-test
select:
  namespaces: "{namespace}"
jobs:
  merge:
    when:
      equality_delete_files: 1
    every: 1h
  orphans:
    every: 1d
"""



def daemon_config(tmp_path: Path, config: Config, state_url: str, namespace: str, name: str, *, policy: str | None = None,
                  max_concurrent_jobs: int = 2, daemon_settings: str = "") -> tuple[Path, int]:
    """A daemon's config on `config`'s home, whose catalog is made here if the test made no
    table yet (icemaint never creates the catalog it maintains); `policy` (a policy file's
    text) instead of `POLICY` on `namespace`; `daemon_settings`: more lines of its `daemon:`
    (each indented by two spaces, ending in a newline)."""
    get_catalog(config, config.default_catalog)
    policies = tmp_path / "policies"
    policies.mkdir(exist_ok=True)
    (policies / "test.yaml").write_text(policy if policy is not None else POLICY.format(namespace=namespace))
    port = free_port()
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        f"home: {config.home}\nstate:\n  url: {state_url}\npolicies: {policies}\n"
        f"daemon:\n  interval: 2s\n  spark_idle: 5s\n  shutdown_grace: 60s\n  metrics_port: {port}\n  max_concurrent_jobs: {max_concurrent_jobs}\n{daemon_settings}"
        "spark:\n  master: local[1]\n  conf:\n    spark.sql.shuffle.partitions: '2'\n    spark.ui.enabled: 'false'\n"
    )
    return path, port


def start_daemon(config_path: Path, log: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "ICEMAINT_CONFIG"}
    return subprocess.Popen([sys.executable, "-m", "maintenance", "--config", str(config_path), "daemon"], stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env)


def stop_daemon(process: subprocess.Popen[bytes], log: Path) -> int:
    process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout=120)
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail(f"daemon did not stop on SIGTERM:\n{log.read_text()[-3000:]}")


def signal_and_wait(process: subprocess.Popen[bytes], signum: int, timeout_s: float) -> tuple[int, float]:
    """Send the signal; the process's exit code and the seconds it took to exit after it."""
    process.send_signal(signum)
    sent = time.monotonic()
    code = process.wait(timeout=timeout_s)
    return code, time.monotonic() - sent


def wait_for(condition, timeout_s: float, what: str, logs: list[Path]):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}:\n" + "\n".join(p.read_text()[-3000:] for p in logs))


def http_get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def metric(port: int, sample: str) -> float:
    """One sample of /metrics as exposed, e.g. `icemaint_evaluations_total{outcome="ok"}`
    (0 while it has no value yet)."""
    for line in http_get(port, "/metrics")[1].splitlines():
        name, _, value = line.rpartition(" ")
        if name == sample:
            return float(value)
    return 0.0


EVALUATIONS_OK = 'icemaint_evaluations_total{outcome="ok"}'


def healthz(port: int) -> tuple[int | None, str]:
    """/healthz, or (None, why) while nothing listens yet."""
    try:
        return http_get(port, "/healthz")
    except OSError as exc:
        return None, str(exc)
