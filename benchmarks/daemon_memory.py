"""The daemon's resident memory, idle with Spark stopped and after a job with Spark started.

    .venv/bin/python benchmarks/daemon_memory.py [--samples 5] [--json-out F]

Starts `icemaint daemon` on a fresh embedded default and sums the resident memory of its
whole process tree (Python and, once started, Spark's JVM): first with no table to work
on, then after it has merged one generated CDC table (Spark kept up by a long idle time).
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import write_json
from memory import tree_rss_mib


def sample(pid: int, samples: int) -> float:
    values = []
    for _ in range(samples):
        values.append(tree_rss_mib(pid))
        time.sleep(1)
    return statistics.median(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--json-out")
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="icemaint-bench-daemon-"))
    config = home / "icemaint.yaml"
    config.write_text(f"home: {home}\ndaemon:\n  interval: 2s\n  spark_idle: 10m\n  metrics_port: 0\n")
    env = {**os.environ, "ICEMAINT_HOME": str(home), "ICEMAINT_CONFIG": str(config)}
    daemon = subprocess.Popen([sys.executable, "-m", "maintenance", "daemon"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(8)
        idle = sample(daemon.pid, args.samples)
        subprocess.run([sys.executable, "-m", "maintenance", "workload", "cdc", "mem.orders", "--rows", "20000", "--commits", "5"], env=env, check=True, capture_output=True)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            runs = subprocess.run([sys.executable, "-m", "maintenance", "runs", "--table", "local.mem.orders", "--json"], env=env, capture_output=True, text=True).stdout
            if '"committed"' in runs:
                break
            time.sleep(2)
        else:
            raise SystemExit("the daemon did not merge the table within 5 minutes")
        time.sleep(3)
        busy = sample(daemon.pid, args.samples)
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=120)
    result = {"idle_spark_stopped_mib": idle, "spark_started_mib": busy, "samples": args.samples}
    print(f"daemon resident memory: {idle:.0f} MiB idle with Spark stopped, {busy:.0f} MiB with Spark started (median of {args.samples} samples)")
    write_json(args.json_out, result)


if __name__ == "__main__":
    main()
