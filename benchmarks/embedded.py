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
