"""Resident memory of a process tree (Linux `/proc`): what the memory goals are measured by,
the Python process together with any JVM or worker below it."""

from __future__ import annotations

import os
import subprocess
import threading
import time
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


def run_sampled(command: list[str], env: dict[str, str], stdin_text: str | None = None, cwd: str | None = None) -> dict:  # type: ignore[type-arg]
    """Run `command` to its end (`stdin_text` its input), sampling every 0.2 s the resident
    memory of its process tree and its own peak (`VmHWM`): its time, stdout, exit code, the
    tree's sampled peak (or the process's own peak, if larger), its own peak and the most
    processes below it."""
    started = time.monotonic()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=cwd,
                            stdin=subprocess.DEVNULL if stdin_text is None else subprocess.PIPE)
    if stdin_text is not None and proc.stdin is not None:
        proc.stdin.write(stdin_text)
        proc.stdin.close()
    sampled = {"tree_mib": 0.0, "own_mib": 0.0, "below": 0}
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            sampled["below"] = max(sampled["below"], len(descendants(proc.pid)))
            sampled["tree_mib"] = max(sampled["tree_mib"], tree_rss_mib(proc.pid))
            sampled["own_mib"] = max(sampled["own_mib"], status_kib(proc.pid, "VmHWM") / 1024)
            stop.wait(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out = proc.stdout.read() if proc.stdout else ""
    _, status = os.waitpid(proc.pid, 0)
    seconds = time.monotonic() - started
    stop.set()
    sampler.join()
    # Not wait4's `ru_maxrss`: Linux carries a process's peak across fork and exec (the forked
    # copy of this process counts as the child's), so a child of a large benchmark process
    # reported that process's size (the native peer's runs showed the benchmark's 1,776 MiB).
    # `VmHWM` belongs to the memory the command itself mapped and is reset at exec.
    return {"seconds": seconds, "out": out, "returncode": os.waitstatus_to_exitcode(status),
            "peak_tree_mib": max(sampled["tree_mib"], sampled["own_mib"]), "own_peak_mib": sampled["own_mib"],
            "processes_below": sampled["below"], "sampled_tree_mib": sampled["tree_mib"]}
