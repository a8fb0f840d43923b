"""The progress step a running run reports, kept in its record for the status page.

The job's threads report steps as they work (`JobContext.progress`); the page shows the
newest one while the run is running, and the last one after (where a failed run was). The
writes are the page's, never the job's: they happen in a thread of their own, so a slow or
cut state database never holds up the work (only the newest step waits to be written, the
ones it supersedes are dropped), and after a failed write none is tried for a while (the
lease keeper is what notices an outage and fences the run). The record's column is named
`stage` (`state/runs.py`), from before the word meant only a run's stage.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import structlog

from maintenance.state import background_writes
from maintenance.state.runs import RunStore

log = structlog.get_logger(__name__)

STEP_RECORD_INTERVAL_S = 2.0  # new counts of one step reach the record at most this often
STEP_RECORD_BACKOFF_S = 30.0  # after a failed write, none is tried for this long
CLOSE_WAIT_S = 2.0  # how long a run's end waits for its last step to be written


class StepRecorder:
    """A new step is recorded at once, new counts of the same step at most every
    `STEP_RECORD_INTERVAL_S`, by one writer thread started with the first step."""

    def __init__(self, runs: RunStore, run_id: str) -> None:
        self.runs, self.run_id = runs, run_id
        self._cond = threading.Condition()
        self._pending: tuple[str, dict[str, Any]] | None = None
        self._step: str | None = None
        self._next_at = 0.0
        self._quiet_until = 0.0
        self._closed = False
        self._thread: threading.Thread | None = None

    def __call__(self, step: str, counts: dict[str, Any]) -> None:
        now = time.monotonic()
        with self._cond:
            if self._closed or (step == self._step and now < self._next_at):
                return
            self._step, self._next_at, self._pending = step, now + STEP_RECORD_INTERVAL_S, (step, dict(counts))
            if self._thread is None:
                self._thread = threading.Thread(target=self._write_loop, name=f"icemaint-step-{self.run_id[:8]}", daemon=True)
                self._thread.start()
            self._cond.notify()

    def close(self) -> None:
        """The run is ending: the pending step is written (waited for `CLOSE_WAIT_S` at most),
        later ones are ignored, and the writer thread ends."""
        with self._cond:
            self._closed = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join(CLOSE_WAIT_S)

    @property
    def quiet(self) -> bool:
        """Backing off after a failed write."""
        return time.monotonic() < self._quiet_until

    def _write_loop(self) -> None:
        while True:
            with self._cond:
                while self._pending is None and not self._closed:
                    self._cond.wait()
                if self._pending is None:
                    return
                (step, counts), self._pending = self._pending, None
            if self.quiet:
                continue  # dropped: a newer step, or the run's end, supersedes it
            try:
                with background_writes.write():
                    self.runs.set_step(self.run_id, step, counts)
            except Exception as exc:  # noqa: BLE001 (the record is for the page; the run goes on)
                self._quiet_until = time.monotonic() + STEP_RECORD_BACKOFF_S
                log.debug("run step not recorded", step=step, error=str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
