"""The command line as tests drive it: in its own process, in this one, and its output read back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from maintenance.cli.main import main


def run_cli(*args: str, home: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI in its own process, as cron or a shell would run it."""
    full_env = {**os.environ, "ICEMAINT_HOME": str(home), **(env or {})}
    full_env.pop("ICEMAINT_CONFIG", None)
    return subprocess.run([sys.executable, "-m", "maintenance", *args], capture_output=True, text=True, env=full_env, timeout=300)


def json_lines(out: str) -> list[dict]:  # type: ignore[type-arg]
    """`icemaint run --json`: one JSON object per line (JSON Lines)."""
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def assert_one_line_error(proc: subprocess.CompletedProcess[str], code: int, *needles: str) -> None:
    assert proc.returncode == code, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("icemaint: error: ")
    for needle in needles:
        assert needle in lines[0]
    assert "Traceback" not in proc.stderr and "at org.apache" not in proc.stderr


def in_process(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The CLI in this process, sharing the test run's Spark session."""
    capsys.readouterr()  # drop what fixtures printed before
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exit_info.value.code or 0), out, err
