"""A one-line progress display for long jobs on a terminal: elapsed time and the job's
latest progress event, redrawn in place on stderr, erased at the end. Off when stderr is
not a terminal or the output is JSON, so scripts and logs never see it."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from maintenance.progress import Progress, describe_progress, no_progress

REDRAW_S = 0.5


def wanted(as_json: bool, stream: TextIO | None = None) -> bool:
    stream = stream or sys.stderr
    return not as_json and hasattr(stream, "isatty") and stream.isatty()


@contextmanager
def progress_display(label: str, *, enabled: bool, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic,
                     redraw_s: float = REDRAW_S) -> Iterator[Progress]:
    """Yields the callback a job reports its progress steps to (`JobContext.progress`); redrawn every
    `redraw_s` with the time `clock` says has passed."""
    if not enabled:
        yield no_progress
        return
    out = stream or sys.stderr
    latest = {"text": "starting"}
    started = clock()
    done = threading.Event()

    def draw() -> None:
        out.write(f"\r\033[K{label}: {clock() - started:.0f}s  {latest['text']}")
        out.flush()

    def redraw() -> None:
        while not done.wait(redraw_s):
            draw()

    thread = threading.Thread(target=redraw, name="icemaint-progress", daemon=True)
    thread.start()
    try:
        yield lambda step, **counts: latest.update(text=describe_progress(step, counts))
    finally:
        done.set()
        thread.join()
        out.write("\r\033[K")
        out.flush()


