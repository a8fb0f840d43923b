"""A fencing holder process paused and resumed, read line by line."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path


def read_line(proc: subprocess.Popen[str], prefix: str, timeout: float) -> str:
    deadline, seen = time.time() + timeout, []
    while time.time() < deadline:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        if line.startswith(prefix):
            return line.strip()
        seen.append(line)
        if not line and proc.poll() is not None:
            break
    raise AssertionError(f"worker never printed {prefix}; stdout: {''.join(seen)[-2000:]}")


def resume_paused_holder(holder: subprocess.Popen[str], flag: Path) -> tuple[str, str]:
    """Let the SIGSTOPped holder go on (the flag tells it the other holder has committed);
    return what it was refused and how its run ended, from its REFUSED and STATUS lines."""
    flag.touch()
    os.kill(holder.pid, signal.SIGCONT)
    refused = read_line(holder, "REFUSED", timeout=120)
    status = read_line(holder, "STATUS", timeout=60)
    assert holder.wait(timeout=60) == 0
    return refused, status
