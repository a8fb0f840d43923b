"""The state database writes a process makes on threads of its own (lease renewals, a run's
progress steps), and a way to stop the process outside all of them.

Why: a process stopped (SIGSTOP) inside a write keeps that write's lock (SQLite's, of the
whole file; a server's, of the row) for as long as it stays stopped, and no other holder can
take anything over meanwhile. `faults.py` stops a process on purpose, at a point the main
thread or a deletion thread reaches, while these threads go on: `paused()` waits until none
of them is inside a write, and holds new ones back until the process runs again. Writers do
not wait for each other, only for a pause.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

_state = threading.Condition()
_writing = 0
_paused = False


@contextmanager
def write() -> Iterator[None]:
    """One background write (waits while the process is being paused)."""
    global _writing
    with _state:
        while _paused:
            _state.wait()
        _writing += 1
    try:
        yield
    finally:
        with _state:
            _writing -= 1
            _state.notify_all()


@contextmanager
def paused() -> Iterator[None]:
    """No background write is under way inside, and none starts."""
    global _paused
    with _state:
        _paused = True
        while _writing:
            _state.wait()
    try:
        yield
    finally:
        with _state:
            _paused = False
            _state.notify_all()
