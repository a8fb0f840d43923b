"""Where a run's own Spark output waits before it is published, and how orphan cleanup
recognises it.

Jobs that write files with Spark's own writers (CONVERT's and REWRITE's position deletes)
write them under `data/icemaint-<job>-<run id>/` in the table location. Spark's committer
keeps `_temporary/` attempt folders and `.crc` checksums there while it writes; a process
killed meanwhile leaves them behind. Everything below such a folder is icemaint's own and
no reader ever looks there, so orphan cleanup treats it like any other unreferenced file
(same age margin) instead of hiding it the way it hides other writers' `_temporary`.
"""

from __future__ import annotations

import errno
import os
import re
from urllib.parse import unquote, urlsplit

from maintenance.lease.fence import Fence, FencedError

_OUTPUT_FOLDER = re.compile(r"(?:^|/)data/icemaint-[a-z]+-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/")


def output_folder(location: str, job: str, run_id: str) -> str:
    return f"{location.rstrip('/')}/data/icemaint-{job}-{run_id}"


def in_output_folder(relative: str) -> bool:
    """Whether a path below the table location lies in one of icemaint's output folders."""
    return _OUTPUT_FOLDER.search(relative) is not None


def remove_empty_folders(location: str, folders: list[str], fence: Fence) -> int:
    """Remove the given output folders (relative to the table `location`), deepest first,
    where they are empty now: what a killed run of ours left once orphan cleanup deleted the
    files in them (Spark's `_temporary/0/...` attempt folders). Local disks only: an object
    store has no folders to leave behind. `os.rmdir` removes only an empty folder, atomically,
    so a file written into one meanwhile keeps it. Each folder only while the lease is proven
    (nothing is lost by removing an empty folder; the lease still owns every effect)."""
    parts = urlsplit(location)
    if parts.scheme not in ("", "file"):
        return 0
    root = unquote(parts.path if parts.scheme else location).rstrip("/")
    removed = 0
    for folder in sorted(folders, key=lambda f: f.count("/"), reverse=True):
        if fence.time_left() <= 0:
            raise FencedError(f"removing empty output folders refused: the lease on {fence.keeper.lease.table} is no longer proven")
        try:
            os.rmdir(f"{root}/{folder}")
            removed += 1
        except FileNotFoundError:
            continue
        except OSError as exc:
            if exc.errno != errno.ENOTEMPTY:
                raise
    return removed
