"""Named points where the fault-injection tests kill or pause icemaint, the way a container
kill or a stalled host does.

Inert unless the environment variable `ICEMAINT_KILL_AT` names a point: then, on reaching
it, the process kills its whole process group (Python and its Spark JVM) with SIGKILL. With
`ICEMAINT_STOP_AT` it stops the group with SIGSTOP instead (the stale-holder tests resume
it with SIGCONT once another holder has taken over). A value `NAME@N` fires on the Nth time
the process reaches the point (`references-read@2`: the second look at the newest metadata);
`NAME` alone on the first.
`tests/suites/test_faults.py` runs a job at each point and checks what such a kill leaves: the
content unchanged, no referenced file missing, the lease recoverable, the run record
settled, and every file the killed run wrote gone after orphan cleanup.

Points: `lease-acquired` (the run is recorded, nothing else done), `claimed` (the table
carries this run's epoch), `spark-write` (files appear in the folder a job writes to),
`staged` (a change is staged, not yet verified or published), `published` (a change is
current, the run not yet recorded), `groups-committed` (a rewrite's first batch of file
groups is committed, the others not), `deleting` (the first file of a deletion is deleted),
`references-read` (a deletion's look at the newest references has loaded the table's
metadata and not yet added what it names, `table.references.NewestReferences.refresh`:
ORPHANS reaches it once before deleting and again before each batch). Which job reaches
which point: `POINTS` in the test, which fails when an armed point is never reached (the
job then ends by itself, not by SIGKILL). `watch` points (`spark-write`) take no `@N`.
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


_hits: dict[str, int] = {}
_hits_lock = threading.Lock()


def armed(name: str) -> bool:
    return os.environ.get(_KILL) == name


def point(name: str) -> None:
    kill, stop = _target(_KILL), _target(_STOP)
    if (kill is None or kill[0] != name) and (stop is None or stop[0] != name):
        return
    with _hits_lock:
        hit = _hits[name] = _hits.get(name, 0) + 1
    if kill == (name, hit):
        _kill()
    if stop == (name, hit):
        from maintenance.state import background_writes

        with background_writes.paused():  # never stopped inside a state database write: others could take nothing over
            os.killpg(os.getpgrp(), signal.SIGSTOP)


def _target(variable: str) -> tuple[str, int] | None:
    """The point a variable arms and on which hit: `NAME` (the first) or `NAME@N`."""
    value = os.environ.get(variable)
    if not value:
        return None
    name, _, nth = value.partition("@")
    return name, int(nth) if nth else 1


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
