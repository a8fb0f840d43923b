"""What the benchmarks share: a fresh embedded default per run, timing, I/O counters,
resetting a table to a snapshot between contenders, the floor copy of a table, and the
latency proxy as a process that counts requests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any


def fresh_embedded(prefix: str, spark_master: str | None = None, home: str | None = None) -> tuple[Any, Any]:
    """(config, spark) on a new, empty `$ICEMAINT_HOME` (or `home`), so every contender starts equal."""
    os.environ["ICEMAINT_HOME"] = home or str(Path(tempfile.mkdtemp(prefix=f"icemaint-bench-{prefix}-")))
    from maintenance.config import load_config
    from maintenance.spark.session import get_spark

    config = load_config(None)
    if spark_master is not None:
        import dataclasses

        config = dataclasses.replace(config, spark=dataclasses.replace(config.spark, master=spark_master))
    return config, get_spark(config)


def generate_cdc(spark, config, name: str, *, rows: int, commits: int, partitions: int, seed: int, updates: float = 0.05,  # type: ignore[no-untyped-def]
                 deletes: float = 0.01) -> tuple[Any, float]:
    """A generated CDC table of `partitions` identity partitions (5% updates, 1% deletes by
    default): its ref, and how long generating it took."""
    import time

    from maintenance.catalogs import parse_table_ref
    from maintenance.workload.cdc import CdcOptions, run_cdc_workload
    from maintenance.workload.shape import TableShape

    ref = parse_table_ref(name, config)
    started = time.perf_counter()
    run_cdc_workload(spark, config, ref, CdcOptions(rows=rows, commits=commits, update_ratio=updates, delete_ratio=deletes,
                                                    shape=TableShape("identity", partitions, "single"), seed=seed))
    return ref, time.perf_counter() - started


def write_json(path: str | None, value: Any) -> None:
    """The measurements for `benchmarks/report.py`, when it asked for them."""
    if path:
        import json

        Path(path).write_text(json.dumps(value, indent=2, default=str))


def median_seconds(action, repeat: int) -> float:  # type: ignore[no-untyped-def]
    import statistics
    import time

    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def io_counters(spark) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """Bytes read and written: through Hadoop file systems in the Spark JVM (driver and local
    executors), plus every read and write of this Python process as the kernel counts them
    (`/proc/self/io` rchar and wchar: what pyiceberg and pyarrow read and write, CONVERT's
    driver engine included; also the state database's and the Py4J socket's few bytes, so it
    overcounts a little, never under)."""
    read = written = 0
    for stats in spark._jvm.org.apache.hadoop.fs.FileSystem.getAllStatistics():  # type: ignore[attr-defined]
        read += int(stats.getBytesRead())
        written += int(stats.getBytesWritten())
    own = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    return read + int(own["rchar"]), written + int(own["wchar"])


def reset_to(spark, ref, snapshot_id: int) -> None:  # type: ignore[no-untyped-def]
    """Put the table back at `snapshot_id` (its files are all still there), so the next
    contender starts from exactly the same table as the last one did."""
    spark.sql(f"CALL local.system.set_current_snapshot('{ref.identifier}', {int(snapshot_id)})").collect()
    spark.sql(f"REFRESH TABLE {ref.spark_name}")


def partition_clause(config, ref) -> str:  # type: ignore[no-untyped-def]
    """`PARTITIONED BY (...)` for a table of the same current spec as `ref`'s ('' when unpartitioned)."""
    from maintenance.catalogs import load_table

    table = load_table(config, ref)
    schema = table.schema()
    parts = []
    for f in table.spec().fields:
        column, transform = schema.find_column_name(f.source_id), str(f.transform)
        if transform == "identity":
            parts.append(column)
        elif transform.startswith(("bucket[", "truncate[")):
            name, width = transform[:-1].split("[")
            parts.append(f"{name}({width}, {column})")
        elif transform in ("year", "month", "day", "hour"):
            parts.append(f"{transform}s({column})")
    return f"PARTITIONED BY ({', '.join(parts)})" if parts else ""


def floor_copy(config, spark, source, floor, target_bytes: int | None = None) -> None:  # type: ignore[no-untyped-def]
    """The floor a maintained table is measured against: the same rows, no delete files, the
    same partitioning, files at the target size (one per partition where the data is
    smaller), written the way COMPACT writes them: a plain copy, then COMPACT of every
    partition with more than one file."""
    from maintenance.run.runner import run_job

    target = f", 'write.target-file-size-bytes'='{target_bytes}'" if target_bytes else ""
    spark.sql(f"CREATE TABLE {floor.spark_name} USING iceberg {partition_clause(config, source)} "
              f"TBLPROPERTIES ('format-version'='2'{target}) AS SELECT * FROM {source.spark_name}")
    result = run_job(config, floor, "compact", {"min_input_files": 2, "min_file_size_ratio": 0.9})
    assert result.status in ("committed", "noop"), result.error


def evaluated_cycles(log: Path) -> list[dict]:
    """The daemon's "evaluated" log lines (one per cycle) found so far in its JSON log."""
    found = []
    for line in log.read_text(errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") == "evaluated":
            found.append(event)
    return found


def wait_for_cycles(log: Path, count: int, where: str, timeout_s: float = 1800) -> list[dict]:
    """The daemon's cycles once it has logged `count` of them; the bench ends if it does not in time."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        cycles = evaluated_cycles(log)
        if len(cycles) >= count:
            return cycles
        time.sleep(0.5)
    raise SystemExit(f"{where}: fewer than {count} daemon cycles within {timeout_s:.0f} s (log: {log})")


class Proxy:
    """`latency_proxy.py` in front of `target`, counting into a file of its own."""

    def __init__(self, target: str, delay_ms: float, counts: Path, port: int = 0) -> None:
        self.counts = counts
        counts.unlink(missing_ok=True)  # an earlier proxy's totals are not this one's
        self.process = subprocess.Popen([sys.executable, str(Path(__file__).with_name("latency_proxy.py")), "--target", target,
                                         "--delay-ms", str(delay_ms), "--counts", str(counts), "--port", str(port)], stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.port = int(self.process.stdout.readline().split()[1])

    def totals(self) -> Counter[str]:
        time.sleep(0.3)  # the proxy writes its counts every 0.1 s
        try:
            return Counter(json.loads(self.counts.read_text()))
        except FileNotFoundError:
            return Counter()

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)


def compile_package() -> None:
    """Compile icemaint's bytecode, as an installed icemaint's is: where Python writes none
    (PYTHONDONTWRITEBYTECODE, a read-only checkout), every CLI process would compile its
    ~200 modules again, and that is not what users' processes pay."""
    import subprocess
    import sys

    repo = Path(__file__).resolve().parent.parent
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(repo / "maintenance")], check=True, capture_output=True)


def commit() -> str:
    """The checked-out commit, `-dirty` when the work tree differs from it (what a result was measured on)."""
    repo = Path(__file__).resolve().parent.parent
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=repo).stdout.strip() or "?"
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, cwd=repo).stdout.strip()
    return f"{head}-dirty" if dirty else head
