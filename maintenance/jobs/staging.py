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

import re

_STAGING = re.compile(r"(?:^|/)data/icemaint-[a-z]+-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/")


def staging_folder(location: str, job: str, run_id: str) -> str:
    return f"{location.rstrip('/')}/data/icemaint-{job}-{run_id}"


def is_staged(relative: str) -> bool:
    """Whether a path below the table location lies in one of icemaint's staging folders."""
    return _STAGING.search(relative) is not None
