"""A fresh embedded default for one benchmark run: its own home, config and Spark session."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any


def fresh_embedded(prefix: str) -> tuple[Any, Any]:
    """(config, spark) on a new, empty `$ICEMAINT_HOME`, so every contender starts equal."""
    os.environ["ICEMAINT_HOME"] = str(Path(tempfile.mkdtemp(prefix=f"icemaint-bench-{prefix}-")))
    from maintenance.config import load_config
    from maintenance.spark.session import get_spark

    config = load_config(None)
    return config, get_spark(config)


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
