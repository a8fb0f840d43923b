"""Where a run's time goes: `phase_seconds` in every job result.

Six phases, each second of a run's wall time in exactly one of them:
- `start`: what comes before the job's own work: for the first run of a process, the
  process's own start (the interpreter, imports, configuration) up to the run; then the
  lease, the run record, loading the table, and starting Spark when the run starts it;
- `plan`: planning (metadata only; nothing when an evaluation's plan is reused);
- `read`: the job's own work until it writes (finding positions, reading what it rewrites,
  listing files);
- `write`: writing what it publishes (new data and delete files, manifests, statistics) and
  deleting files (EXPIRE, ORPHANS): a job that reads and writes in one pass (a Spark job
  that rewrites a file group) counts the pass as writing;
- `verify`: comparing staged changes with their parents;
- `commit`: staging and publishing changes, and recording the run's end.

Why a clock of exclusive phases and not timers around calls: runs nest (Spark starts inside
the job's first read, a commit inside a group loop), and a sum of nested timers says where
time went twice. Only the thread that made the clock moves it: a run's other threads (a
group's writer, a read ahead) work while the run's own thread is in some phase, which the
time counts toward.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

PHASES = ("start", "plan", "read", "write", "verify", "commit")
_first_run = threading.Lock()
_process_counted = False


def process_age_s() -> float:
    """Seconds since this process started (Linux's /proc), once per process: the first run
    counts the interpreter's start and its imports in its `start`; later runs of a daemon do
    not. 0.0 where /proc cannot say."""
    global _process_counted
    with _first_run:
        if _process_counted:
            return 0.0
        _process_counted = True
    try:
        with open("/proc/self/stat") as stat:
            started_ticks = int(stat.read().rsplit(")", 1)[1].split()[19])  # field 22, after the command's parentheses
        with open("/proc/uptime") as uptime:
            up_s = float(uptime.read().split()[0])
        return max(0.0, up_s - started_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


class PhaseClock:
    """A run's wall time by phase (module docstring); starts in `start`."""

    def __init__(self, before_s: float = 0.0) -> None:
        """`before_s`: time already spent in `start` before the clock was made."""
        self._seconds = dict.fromkeys(PHASES, 0.0)
        self._seconds["start"] = before_s
        self._current = "start"
        self._since = time.monotonic()
        self._owner = threading.get_ident()
        self._lock = threading.Lock()

    @property
    def current(self) -> str:
        return self._current

    def enter(self, phase: str) -> str:
        """Count from now toward `phase`; returns the phase left. Other threads than the
        owner's change nothing."""
        if phase not in self._seconds:
            raise ValueError(f"no phase {phase!r}")
        if threading.get_ident() != self._owner:
            return self._current
        with self._lock:
            now = time.monotonic()
            self._seconds[self._current] += now - self._since
            left, self._current, self._since = self._current, phase, now
            return left

    @contextmanager
    def within(self, phase: str) -> Iterator[None]:
        """`phase` while inside, then back to the phase it left."""
        left = self.enter(phase)
        try:
            yield
        finally:
            self.enter(left)

    def seconds(self) -> dict[str, float]:
        """Each phase's seconds so far (the current one up to now), to the millisecond."""
        with self._lock:
            seconds = dict(self._seconds)
            seconds[self._current] += time.monotonic() - self._since
        return {phase: round(value, 3) for phase, value in seconds.items()}
