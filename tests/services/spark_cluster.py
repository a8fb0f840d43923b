"""A Spark standalone cluster for the tests, from pyspark's own `spark-class`: one master and
N workers, each a JVM of its own with its own work folder, as a cluster runs them.

Jobs reach it as users' do: `spark.master: spark://127.0.0.1:<port>` in icemaint.yaml, with the
driver in the icemaint process and executors in the workers' JVMs (client mode). Executors
run in their worker's process group, so `kill_worker` (SIGKILL to the group) loses a worker
and its executors at once, as a lost machine does. Every process logs under `folder`
(`spark-master.log`, `spark-worker-<n>.log`, and each executor's stdout/stderr under the
worker's `work/`), kept when a test fails.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.services.process import ServiceError, ServiceProcess

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"


def spark_class() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent / "bin" / "spark-class"


def _environment() -> dict[str, str]:
    """Every JVM binds to the loopback address; executors' Python is this interpreter."""
    return {"SPARK_LOCAL_IP": "127.0.0.1", "SPARK_NO_DAEMONIZE": "1", "PYSPARK_PYTHON": sys.executable,
            "SPARK_DAEMON_MEMORY": "256m"}


@dataclass
class SparkCluster:
    folder: Path
    master: ServiceProcess
    workers: list[ServiceProcess]
    url: str  # spark://127.0.0.1:<port>
    web_port: int
    startup_s: float

    def state(self) -> dict[str, Any]:
        """The master's own view (its web UI's `/json/`): workers, running and completed apps."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.web_port}/json/", timeout=5) as response:
            return json.loads(response.read())

    def alive_workers(self) -> int:
        return sum(1 for w in self.state().get("workers", []) if w.get("state") == "ALIVE")

    def completed_apps(self) -> list[dict[str, Any]]:
        return list(self.state().get("completedapps", []))

    def executor_logs(self) -> list[Path]:
        """Every executor's stderr under the workers' work folders (one per executor a job had)."""
        return sorted(self.folder.glob("worker-*/work/app-*/*/stderr"))

    def kill_worker(self, index: int) -> None:
        """SIGKILL to the worker's process group: the worker and the executors it launched."""
        process = self.workers[index]
        os.killpg(process.proc.pid, signal.SIGKILL)
        process.proc.wait(timeout=30)

    def spark_conf(self, cores: int = 1, memory: str = "768m") -> dict[str, str]:
        """What icemaint.yaml's `spark.conf` needs to run on this cluster from this machine."""
        return {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1", "spark.executor.cores": str(cores),
                "spark.executor.memory": memory, "spark.cores.max": str(cores * len(self.workers))}

    def logs(self) -> list[Path]:
        return [self.master.log, *(w.log for w in self.workers), *self.executor_logs()]

    def stop(self) -> None:
        for process in (*self.workers, self.master):
            process.stop(grace=10.0)


def start_cluster(folder: Path, *, workers: int = 2, cores: int = 1, memory: str = "1g", timeout: float = 120.0) -> SparkCluster:
    """A master and `workers` workers on ports the kernel gives them, waiting until the master lists them all alive."""
    started = time.monotonic()
    folder.mkdir(parents=True, exist_ok=True)
    env = _environment()
    # Port 0: the master binds what the kernel gives it and logs it. A port picked beforehand
    # races every other server on the machine: in CI (stop 73) the polled web UI port answered
    # 404 to `/json/`, someone else's server, and both cluster tests errored at setup.
    master = ServiceProcess("spark-master", [spark_class(), MASTER_CLASS, "--host", "127.0.0.1", "--port", "0", "--webui-port", "0"],
                            folder, env=env)
    cluster = SparkCluster(folder, master, [], "", 0, 0.0)
    try:
        cluster.url = master.wait_for_match(r"Starting Spark master at (spark://\S+)", timeout).group(1)
        cluster.web_port = int(master.wait_for_match(r"Successfully started service 'MasterUI' on port (\d+)", timeout).group(1))
        master.wait_for_port(cluster.web_port, timeout)
        for n in range(workers):
            work = folder / f"worker-{n}"
            work.mkdir(exist_ok=True)
            cluster.workers.append(ServiceProcess(
                f"spark-worker-{n}",
                [spark_class(), WORKER_CLASS, cluster.url, "--host", "127.0.0.1", "--cores", str(cores), "--memory", memory,
                 "--work-dir", str(work / "work"), "--webui-port", "0"],
                work, env=env))
        master.wait_until(lambda: cluster.alive_workers() == workers, timeout, f"listing {workers} alive workers")
    except (ServiceError, OSError):
        cluster.stop()
        raise
    cluster.startup_s = time.monotonic() - started
    return cluster
