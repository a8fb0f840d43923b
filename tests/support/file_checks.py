"""Checks on files behind real tables: what exists on disk, how old it looks."""

from __future__ import annotations

import os
import time
from pathlib import Path

from pyiceberg.table import Table


def local(path: str) -> Path:
    """The local path of a file URI as Iceberg wrote it: the scheme goes, the rest stays as
    is (Iceberg escapes partition values in names, `p=%C3%A9`, and those are the file's
    real name on disk, so nothing is unquoted)."""
    for prefix in ("file://", "file:"):
        if path.startswith(prefix):
            return Path("/" + path[len(prefix):].lstrip("/"))
    return Path(path)


def missing_referenced_files(table: Table) -> list[str]:
    """Every file a retained snapshot needs that is not on disk (should be none)."""
    missing = []
    for snapshot in table.snapshots():
        needed = [snapshot.manifest_list]
        for manifest in snapshot.manifests(table.io):
            needed.append(manifest.manifest_path)
            needed.extend(e.data_file.file_path for e in manifest.fetch_manifest_entry(table.io, discard_deleted=True))
        missing.extend(p for p in needed if not local(p).exists())
    return missing


def age(path: Path, days: float) -> Path:
    """Make a file look last modified `days` ago."""
    then = time.time() - days * 86400
    os.utime(path, (then, then))
    return path


def plant(path: Path, days_old: float, content: bytes = b"not referenced by any snapshot") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return age(path, days_old) if days_old else path
