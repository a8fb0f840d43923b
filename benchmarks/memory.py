"""Resident memory of a process tree (Linux `/proc`): what the memory goals are measured by,
the Python process together with any JVM or worker below it."""

from __future__ import annotations

import os
from pathlib import Path


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (children, their children, ...)."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        try:
            for task in Path(f"/proc/{current}/task").iterdir():
                children = [int(child) for child in (task / "children").read_text().split()]
                found.extend(children)
                pending.extend(children)
        except OSError:
            continue
    return found


def status_kib(pid: int, field: str) -> int:
    """One `kB` field of /proc/PID/status (`VmRSS`, `VmHWM`); 0 for a process gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in status.splitlines() if line.startswith(f"{field}:")), 0)


def tree_rss_mib(pid: int) -> float:
    """Resident memory now of a process and all its descendants."""
    return sum(status_kib(p, "VmRSS") for p in [pid, *descendants(pid)]) / 1024


def peak_tree_mib(pid: int | None = None) -> float:
    """The sum of the peak resident memory (`VmHWM`) of a process (default: this one) and of
    every process below it that is still there."""
    pid = os.getpid() if pid is None else pid
    return sum(status_kib(p, "VmHWM") for p in [pid, *descendants(pid)]) / 1024
