"""Which listed files are orphans: under the table location, named by no snapshot of any
metadata version, not hidden, and older than the safety margin.

A file whose path matches a referenced file's but whose scheme or authority differs is an
ambiguity (two spellings of one store, or two stores): the plan refuses rather than guess
(apache/iceberg #4194 deleted live files that way). So does a table location that holds
another table's metadata: its files would all look orphaned.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from pyiceberg.table import Table

from maintenance.durations import format_duration
from maintenance.errors import IcemaintError
from maintenance.jobs.orphans.options import OrphansOptions
from maintenance.jobs.spec import PlanInput
from maintenance.jobs.staging import is_staged
from maintenance.table.listing import ListedFile, list_location
from maintenance.table.paths import is_local, normalise, without_authority
from maintenance.table.references import ReferencedFiles

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
    snapshot_id: int | None = None  # current when the references were read
    metadata_location: str = ""  # the newest metadata whose references were subtracted
    referenced: ReferencedFiles = field(default_factory=ReferencedFiles, repr=False)
    listing: list[ListedFile] = field(default_factory=list, repr=False)
    older_than_ms: int = 0
    listing_seconds: float = 0.0
    staging_folders: list[str] = field(default_factory=list)  # relative; empty once the candidates are gone

    @property
    def bytes(self) -> int:
        return sum(f.size for f in self.candidates)

    @property
    def empty(self) -> bool:
        return not self.candidates and not self.staging_folders

    def nothing_to_do(self) -> str:
        recent = f", {self.too_new:,} unreferenced but newer than {format_duration(self.older_than_ms / 1000)} (kept)" if self.too_new else ""
        hidden = f", {self.hidden:,} hidden files skipped" if self.hidden else ""
        return f"of {self.listed:,} files listed, {self.referenced_listed:,} are referenced{recent}{hidden}: no orphan to delete"

    def counters(self, detail: bool = False) -> dict[str, Any]:
        found = {
            "files_listed": self.listed,
            "files_referenced": self.referenced_listed,
            "hidden_files_skipped": self.hidden,
            "recent_files_kept": self.too_new,
            "orphan_files_found": len(self.candidates),
            "orphan_bytes_found": self.bytes,
            "staging_folders_found": len(self.staging_folders),
            "metadata_versions_read": self.referenced.metadata_versions_read,
            "listing_seconds": round(self.listing_seconds, 3),
        }
        return {**found, "would_delete": [f.location for f in self.candidates]} if detail else found


def plan(inputs: PlanInput, options: OrphansOptions) -> OrphanPlan:
    """References first (every version in the metadata log), then the listing, then the
    references of the newest metadata if a commit landed meanwhile (a fresh file is
    protected by the age margin anyway)."""
    from maintenance.catalogs import load_table

    table = inputs.table
    referenced = ReferencedFiles()
    referenced.add_table(table)
    started = time.monotonic()
    folders: list[str] = []
    listing = list_location(table.io, table.location(), folders)
    listing_seconds = time.monotonic() - started
    newest = load_table(inputs.config, inputs.ref)
    if normalise(newest.metadata_location) != normalise(table.metadata_location):
        referenced.add_table(newest)
    staging = [f for f in folders if is_staged(f + "/")] if is_local(table.location()) else []  # object stores have no folders to leave
    found = subtract(listing, referenced, newest, int((time.time() - options.older_than) * 1000), staging)
    found.listing_seconds = listing_seconds
    return found


def subtract(listing: list[ListedFile], referenced: ReferencedFiles, newest: Table, older_than_ms: int, staging_folders: list[str]) -> OrphanPlan:
    """The orphans of a listing, given the references read so far and the newest metadata;
    and the folders in our staging folders (`staging_folders`) that hold no file but orphans."""
    found = plan_orphans(listing, referenced, older_than_ms=older_than_ms, metadata_dir=metadata_dir(newest))
    found.snapshot_id, found.metadata_location = newest.metadata.current_snapshot_id, newest.metadata_location
    found.referenced, found.listing, found.older_than_ms = referenced, listing, older_than_ms
    going = {f.relative for f in found.candidates}
    occupied = {parent for f in listing if f.relative not in going and is_staged(f.relative) for parent in _parents(f.relative)}
    found.staging_folders = [folder for folder in staging_folders if folder not in occupied]
    return found


def _parents(relative: str) -> list[str]:
    parts = relative.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def metadata_dir(table: Table) -> str:
    """The metadata folder relative to the location (`write.metadata.path` may move it)."""
    location = normalise(table.location())
    folder = normalise(table.metadata_location.rsplit("/", 1)[0])
    return folder[len(location) + 1 :] if folder.startswith(location + "/") else "metadata"


def plan_orphans(listing: list[ListedFile], referenced: ReferencedFiles, *, older_than_ms: int, metadata_dir: str = METADATA_DIR) -> OrphanPlan:
    """`older_than_ms`: only files last modified before this instant are candidates."""
    _refuse_nested_tables(listing, metadata_dir)
    by_path = {without_authority(key): key for key in referenced.keys}
    kept_hidden = {file.relative for file in listing if _hidden(file.relative)}
    candidates, hidden, too_new, referenced_listed = [], 0, 0, 0
    for file in listing:
        key = normalise(file.location)
        if key in referenced.keys:
            referenced_listed += 1
            continue
        other = by_path.get(without_authority(key))
        if other is not None:
            raise OrphanSafetyError(f"{file.location} is referenced as {other}: scheme or authority mismatch; nothing deleted")
        if _hidden(file.relative) and not _checksum_of_orphan(file, referenced, kept_hidden):
            hidden += 1
        elif file.mtime_ms >= older_than_ms:
            too_new += 1
        else:
            candidates.append(file)
    return OrphanPlan(candidates=candidates, listed=len(listing), referenced_listed=referenced_listed, hidden=hidden, too_new=too_new)


def _hidden(relative: str) -> bool:
    """Hidden like Iceberg's own cleanup sees it: a name starting with '.' or '_' (checksums,
    `_SUCCESS`, `_temporary`), except a partition folder such as `_key=1`, and except
    anything in icemaint's own staging folders (`jobs/staging.py`)."""
    if is_staged(relative):
        return False
    return any(part.startswith((".", "_")) and "=" not in part for part in relative.split("/"))


def _checksum_of_orphan(file: ListedFile, referenced: ReferencedFiles, kept_hidden: set[str]) -> bool:
    """A Hadoop checksum `.NAME.crc` belongs to NAME beside it: it goes when NAME is neither
    referenced nor kept hidden (NAME is an orphan, or already gone)."""
    folder, _, name = file.relative.rpartition("/")
    if not (name.startswith(".") and name.endswith(".crc")):
        return False
    if folder and _hidden(folder):
        return False  # inside another writer's hidden folder: stays hidden with it
    companion = f"{folder}/{name[1:-4]}" if folder else name[1:-4]
    companion_location = file.location[: len(file.location) - len(file.relative)] + companion
    return normalise(companion_location) not in referenced.keys and companion not in kept_hidden


def _refuse_nested_tables(listing: list[ListedFile], metadata_dir: str) -> None:
    for file in listing:
        name = file.relative.rsplit("/", 1)[-1]
        if name.endswith(".metadata.json") and not _hidden(file.relative) and file.relative != f"{metadata_dir}/{name}":
            raise OrphanSafetyError(f"{file.location} is table metadata of another table inside this table's location; nothing deleted")
