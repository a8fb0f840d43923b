"""What the file-count benchmarks (`orphans_scale.py`, `expire_scale.py`) share: cheap inputs
(empty files, hard links to a few empty files), and the check that every file a retained
snapshot references is still there."""

from __future__ import annotations

import os
import time
from pathlib import Path

OLD = time.time() - 10 * 86400  # every file made looks 10 days old
LINKS_PER_TEMPLATE = 60_000  # ext4 allows 65,000 links to one file


def touch(paths: list[Path]) -> None:
    """Empty old files (their folders made as needed)."""
    made: set[Path] = set()
    for path in paths:
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
        os.utime(fd, (OLD, OLD))
        os.close(fd)


def link_all(paths: list[Path], templates: Path, start: int = 0) -> None:
    """Each path a hard link to one of a few empty old files in `templates` (keep it outside
    the table location): a sixth of the time distinct files take, deleted like files. `start`:
    how many links earlier calls made with these templates (a caller making millions of
    links a folder at a time)."""
    templates.mkdir(parents=True, exist_ok=True)
    made: set[Path] = set()
    for i, path in enumerate(paths, start):
        template = templates / str(i // LINKS_PER_TEMPLATE)
        if i % LINKS_PER_TEMPLATE == 0:
            touch([template])
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        os.link(template, path)


def referenced_missing(table) -> int:  # type: ignore[no-untyped-def]
    """Files some snapshot of `table` references (manifest lists, manifests, live entries)
    that are gone, read with pyiceberg's full manifest reader (not the job's own)."""
    missing = 0
    for snapshot in table.snapshots():
        needed = [snapshot.manifest_list]
        for manifest in snapshot.manifests(table.io):
            needed.append(manifest.manifest_path)
            needed.extend(e.data_file.file_path for e in manifest.fetch_manifest_entry(table.io, discard_deleted=True))
        missing += sum(1 for p in needed if not Path(p.removeprefix("file://").removeprefix("file:")).exists())
    return missing
