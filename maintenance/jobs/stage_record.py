"""The stage a running run reports, kept in its record for the status page.

The job's threads report stages as they work (`JobContext.progress`); the page shows the
newest one while the run is running, and the last one after (where a failed run was). The
writes are the page's, never the job's: they happen in a thread of their own, so a slow or
cut state database never holds up the work (only the newest stage waits to be written, the
ones it supersedes are dropped), and after a failed write none is tried for a while (the
lease keeper is what notices an outage and fences the run).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import structlog

from maintenance.state.runs import RunStore

log = structlog.get_logger(__name__)

STAGE_RECORD_INTERVAL_S = 2.0  # new counts of one stage reach the record at most this often
STAGE_RECORD_BACKOFF_S = 30.0  # after a failed write, none is tried for this long
CLOSE_WAIT_S = 2.0  # how long a run's end waits for its last stage to be written


class StageRecorder:
    """A new stage is recorded at once, new counts of the same stage at most every
    `STAGE_RECORD_INTERVAL_S`, by one writer thread started with the first stage."""

    def __init__(self, runs: RunStore, run_id: str) -> None:
        self.runs, self.run_id = runs, run_id
        self._cond = threading.Condition()
        self._pending: tuple[str, dict[str, Any]] | None = None
        self._stage: str | None = None
        self._next_at = 0.0
        self._quiet_until = 0.0
        self._closed = False
        self._thread: threading.Thread | None = None

    def __call__(self, stage: str, counts: dict[str, Any]) -> None:
        now = time.monotonic()
        with self._cond:
            if self._closed or (stage == self._stage and now < self._next_at):
                return
            self._stage, self._next_at, self._pending = stage, now + STAGE_RECORD_INTERVAL_S, (stage, dict(counts))
            if self._thread is None:
                self._thread = threading.Thread(target=self._write_loop, name=f"icemaint-stage-{self.run_id[:8]}", daemon=True)
                self._thread.start()
            self._cond.notify()

    def close(self) -> None:
        """The run is ending: the pending stage is written (waited for `CLOSE_WAIT_S` at most),
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
                (stage, counts), self._pending = self._pending, None
            if self.quiet:
                continue  # dropped: a newer stage, or the run's end, supersedes it
            try:
                self.runs.set_stage(self.run_id, stage, counts)
            except Exception as exc:  # noqa: BLE001 (the record is for the page; the run goes on)
                self._quiet_until = time.monotonic() + STAGE_RECORD_BACKOFF_S
                log.debug("run stage not recorded", stage=stage, error=str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
