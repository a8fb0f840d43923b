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

A second SIGINT or SIGTERM stops the process at once, whatever it is doing: the cleanup the
first one started (recording the run, releasing the lease, a daemon's drain) is given up,
the processes this one started are killed, and it exits 130. Python runs a signal's handler
only in the main thread and only between two bytecodes, so a main thread inside a call
that does not return (SQLite waiting out another writer's lock, a socket to a stalled
server) would never see it: the signals are counted by a thread of their own instead, woken
through `signal.set_wakeup_fd` as each arrives (`_watch`). What stopping at once leaves is
what a killed process leaves, and recovering from that is the lease's job: the run stays
`running` until the next holder of its lease, after the lease's TTL, records it `abandoned`.
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

_requested = threading.Event()
_reported = threading.Event()  # the one line about the interrupt is out (`cli/exits.py`)
_installed = False
_STOPS = (signal.SIGINT, signal.SIGTERM)
SECOND_INTERRUPT = "icemaint: error: interrupted twice: stopped at once, without cleaning up (leases it held expire by themselves)\n"


def install() -> None:
    global _installed
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    if not _installed:
        _watch()
    _installed = True


def _watch() -> None:
    """Count SIGINT and SIGTERM as they arrive, in a thread of its own: the second stops the
    process at once (`stop_now`), even while the main thread is stuck in a call."""
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)  # the C-level handler writes each signal's number

    def count() -> None:
        seen = 0
        while True:
            try:
                numbers = os.read(read_fd, 64)
            except InterruptedError:
                continue
            except OSError:
                return
            seen += sum(1 for number in numbers if number in _STOPS)
            if seen >= 2:
                stop_now()

    threading.Thread(target=count, name="icemaint-interrupts", daemon=True).start()


def stop_now() -> None:
    """The second interrupt: one line (unless the first one's is out already), every process
    this one started killed, exit 130 without running any cleanup."""
    if not _reported.is_set():
        try:
            os.write(2, SECOND_INTERRUPT.encode())
        except OSError:
            pass
    end_children(signal.SIGKILL)
    os._exit(130)


def reported() -> None:
    """The line about the interrupt is on stderr: a second one adds none."""
    _reported.set()


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


def end_children(signum: int = signal.SIGTERM) -> None:
    """`signum` to every process this one started that is still running: SIGTERM, and the
    Spark JVM runs its shutdown hooks and exits; SIGKILL, at once."""
    for children in Path(f"/proc/{os.getpid()}/task").glob("*/children"):
        try:
            pids = children.read_text().split()
        except OSError:
            continue
        for pid in pids:
            try:
                os.kill(int(pid), signum)
            except (OSError, ValueError):
                continue
