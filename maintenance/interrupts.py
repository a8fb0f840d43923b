"""Ctrl-C and SIGTERM on the command line: one line, an `interrupted` run, no process left.

The CLI installs `on_signal` for SIGINT and SIGTERM. It only records that an interrupt was
asked for and raises KeyboardInterrupt in the main thread, where a command's job runs: the
runner records the run `interrupted` (whatever error the interrupt surfaced as: a Py4J call
cut in the middle fails in its own way) and releases the lease; `end_children` then takes
down the processes this one started (the Spark JVM), which would otherwise outlive it when
the interrupt came while the JVM was still starting, holding the terminal's pipes.

PySpark installs its own SIGINT handler when Spark starts, which calls the JVM from inside
the handler; when the main thread is itself in a Py4J call, that second call on the same
connection breaks both. `spark.session` puts ours back (`reinstall`). The daemon installs
its own handlers: it drains instead.
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

_requested = threading.Event()
_installed = False


def install() -> None:
    global _installed
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    _installed = True


def reinstall() -> None:
    """Ours again after a library replaced it (PySpark, on starting Spark), if we had installed it."""
    if _installed and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, on_signal)


def on_signal(signum: int, frame: object) -> None:
    _requested.set()
    raise KeyboardInterrupt(signal.Signals(signum).name)


def requested() -> bool:
    """Whether SIGINT or SIGTERM came: an error seen since is the interrupt's doing."""
    return _requested.is_set()


def end_children() -> None:
    """SIGTERM to every process this one started that is still running (the Spark JVM runs
    its shutdown hooks and exits)."""
    for children in Path(f"/proc/{os.getpid()}/task").glob("*/children"):
        try:
            pids = children.read_text().split()
        except OSError:
            continue
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGTERM)
            except (OSError, ValueError):
                continue
