"""Which listed files are orphans: under the table location, named by no snapshot of any
metadata version, not hidden, and older than the safety margin.

A file whose path matches a referenced file's but whose scheme or authority differs is an
ambiguity (two spellings of one store, or two stores): the plan refuses rather than guess
(apache/iceberg #4194 deleted live files that way). So does a table location that holds
another table's metadata: its files would all look orphaned.
"""

from __future__ import annotations

from dataclasses import dataclass

from maintenance.errors import IcemaintError
from maintenance.listing import ListedFile
from maintenance.paths import normalise, without_authority
from maintenance.reachable import ReferencedFiles

METADATA_DIR = "metadata"


class OrphanSafetyError(IcemaintError):
    """Orphan cleanup found something it cannot decide safely; it deleted nothing."""


@dataclass
class OrphanPlan:
    candidates: list[ListedFile]
    listed: int
    referenced_listed: int
    hidden: int
    too_new: int

    @property
    def bytes(self) -> int:
        return sum(f.size for f in self.candidates)


def plan_orphans(listing: list[ListedFile], referenced: ReferencedFiles, *, older_than_ms: int, metadata_dir: str = METADATA_DIR) -> OrphanPlan:
    """`older_than_ms`: only files last modified before this instant are candidates."""
    _refuse_nested_tables(listing, metadata_dir)
    by_path = {without_authority(key): key for key in referenced.keys}
    candidates, hidden, too_new, referenced_listed = [], 0, 0, 0
    for file in listing:
        key = normalise(file.location)
        if key in referenced.keys:
            referenced_listed += 1
            continue
        other = by_path.get(without_authority(key))
        if other is not None:
            raise OrphanSafetyError(f"{file.location} is referenced as {other}: scheme or authority mismatch; nothing deleted")
        if _hidden(file.relative):
            hidden += 1
        elif file.mtime_ms >= older_than_ms:
            too_new += 1
        else:
            candidates.append(file)
    return OrphanPlan(candidates=candidates, listed=len(listing), referenced_listed=referenced_listed, hidden=hidden, too_new=too_new)


def _hidden(relative: str) -> bool:
    """Hidden like Iceberg's own cleanup sees it: a name starting with '.' or '_' (checksums,
    `_SUCCESS`, `_temporary`), except a partition folder such as `_key=1`."""
    return any(part.startswith((".", "_")) and "=" not in part for part in relative.split("/"))


def _refuse_nested_tables(listing: list[ListedFile], metadata_dir: str) -> None:
    for file in listing:
        name = file.relative.rsplit("/", 1)[-1]
        if name.endswith(".metadata.json") and not _hidden(file.relative) and file.relative != f"{metadata_dir}/{name}":
            raise OrphanSafetyError(f"{file.location} is table metadata of another table inside this table's location; nothing deleted")
