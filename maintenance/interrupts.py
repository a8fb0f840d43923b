"""Ctrl-C and SIGTERM on the command line: one line, an `interrupted` run, no process left.

The CLI installs `on_signal` for SIGINT and SIGTERM. It only records that an interrupt was
asked for and raises KeyboardInterrupt in the main thread, where a command's job runs: the
runner records the run `interrupted` (whatever error the interrupt surfaced as: a Py4J call
cut in the middle fails in its own way) and releases the lease; `end_children` then takes
down the processes this one started (the Spark JVM), which would otherwise outlive it when
the interrupt came while the JVM was still starting, holding the terminal's pipes.

PySpark installs its own SIGINT handler when Spark starts, which calls the JVM from inside
the handler; when the main thread is itself in a Py4J call, that second call on the same
connection breaks both. `spark.session` puts ours back (`reinstall`); a signal that comes
while PySpark's is in place still counts (`requested` reads what the C-level handler wrote).
The daemon installs its own handlers (`hand_over`): it drains instead.

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
import select
import signal
import threading
from pathlib import Path

_requested = threading.Event()
_reported = threading.Event()  # the one line about the interrupt is out (`cli/exits.py`)
_installed = False
_counting = threading.Lock()  # held while signal numbers are read from the pipe and counted
_read_fd: int | None = None  # the pipe `signal.set_wakeup_fd` writes to, once `install` ran
_seen = 0  # SIGINT and SIGTERM counted so far
_interrupts_jobs = True  # a first signal interrupts the command's job; False once a command handles it (`hand_over`)
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
    global _read_fd
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    os.set_blocking(write_fd, False)
    signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)  # the C-level handler writes each signal's number
    _read_fd = read_fd

    def count() -> None:
        while True:
            try:
                select.select([read_fd], [], [])
            except InterruptedError:
                continue
            except (OSError, ValueError):
                return
            with _counting:
                if not _take_pending():
                    return

    threading.Thread(target=count, name="icemaint-interrupts", daemon=True).start()


def _take_pending() -> bool:
    """Count the signal numbers waiting in the pipe (the caller holds `_counting`); False once
    the pipe is closed. Whoever reads a number counts it before letting go of the lock, so a
    reader that finds the pipe empty after taking the lock sees every signal already counted."""
    global _seen
    assert _read_fd is not None
    try:
        numbers = os.read(_read_fd, 64)
    except BlockingIOError:
        return True
    except OSError:
        return False
    if not numbers:
        return False
    stops = sum(1 for number in numbers if number in _STOPS)
    if stops:
        if _interrupts_jobs:
            _requested.set()
        _seen += stops
    if _seen >= 2:
        stop_now()
    return True


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
    """Whether SIGINT or SIGTERM came: an error seen since is the interrupt's doing.

    Not only our handler counts: while PySpark's own SIGINT handler is installed (from inside
    SparkContext's start until `reinstall`), a Ctrl-C runs PySpark's, whose call into the JVM
    can fail the job with a Py4J error and never reach `on_signal`. The C-level handler wrote
    the signal's number to the pipe before any Python handler ran, so reading the pipe here
    (under the lock the counting thread holds while it counts) answers for every signal that
    came before this call."""
    if _read_fd is not None and _interrupts_jobs:
        with _counting:
            _take_pending()
    return _requested.is_set()


def hand_over() -> None:
    """A command that answers SIGINT and SIGTERM itself (the daemon drains, `ui` stops serving)
    installs its own handlers after this: a first signal is then its business and interrupts no
    job (a job the daemon cancels after its grace fails as cancelled); a second one still stops
    the process at once."""
    global _interrupts_jobs
    _interrupts_jobs = False


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
