"""Named points where the fault-injection tests kill or pause icemaint, the way a container
kill or a stalled host does.

Inert unless the environment variable `ICEMAINT_KILL_AT` names a point: then, on reaching
it, the process kills its whole process group (Python and its Spark JVM) with SIGKILL. With
`ICEMAINT_STOP_AT` it stops the group with SIGSTOP instead (the stale-holder tests resume
it with SIGCONT once another holder has taken over).
`tests/jobs/test_faults.py` runs a job at each point and checks what such a kill leaves: the
content unchanged, no referenced file missing, the lease recoverable, the run record
settled, and every file the killed run wrote gone after orphan cleanup.

Points: `lease-acquired` (the run is recorded, nothing else done), `claimed` (the table
carries this run's epoch), `spark-write` (files appear in the folder a job writes to),
`staged` (a change is staged, not yet verified or published), `published` (a change is
current, the run not yet recorded), `groups-committed` (a rewrite's first batch of file
groups is committed, the others not), `deleting` (the first file of a deletion is deleted). Which job reaches which point: `POINTS` in the test, which fails when an
armed point is never reached (the job then ends by itself, not by SIGKILL).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

_KILL = "ICEMAINT_KILL_AT"
_STOP = "ICEMAINT_STOP_AT"


def armed(name: str) -> bool:
    return os.environ.get(_KILL) == name


def point(name: str) -> None:
    if armed(name):
        _kill()
    if os.environ.get(_STOP) == name:
        os.killpg(os.getpgrp(), signal.SIGSTOP)


def watch(name: str, folder: str) -> None:
    """Kill as soon as a file appears below `folder` that was not there now (a local path or
    `file:` URI; other stores are not watched)."""
    if not armed(name):
        return
    parts = urlsplit(folder)
    if parts.scheme not in ("", "file"):
        return
    root = Path(unquote(parts.path))
    before = {p for p in root.rglob("*") if p.is_file()} if root.exists() else set()

    def poll() -> None:
        while True:
            if root.exists() and any(p.is_file() and p not in before for p in root.rglob("*")):
                _kill()
            time.sleep(0.02)

    threading.Thread(target=poll, name="icemaint-fault", daemon=True).start()


def _kill() -> None:
    os.killpg(os.getpgrp(), signal.SIGKILL)
