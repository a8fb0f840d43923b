"""A process's descendants, from /proc's parent links: what the tests that watch a job's
JVM (its command line, its environment, the files it maps) look at."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (its JVM, the JVM's children), from /proc's parent links."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, pending = [], [pid]
    while pending:
        for child in children.get(pending.pop(), []):
            found.append(child)
            pending.append(child)
    return found


def run_watching(command: list[str], env: dict[str, str], cwd: Path, watch: Callable[[int, list[int]], None]) -> tuple[int, str, str]:
    """Run `command` to its end, calling `watch(pid, descendants)` every 0.2 s while it runs:
    its exit code, stdout and stderr (killed if the caller's watch raises)."""
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        while proc.poll() is None:
            watch(proc.pid, descendants(proc.pid))
            time.sleep(0.2)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, out, err
