"""Which listed files are orphans: under the table location, named by no snapshot of any
metadata version, not hidden, and older than the safety margin.

A file whose path matches a referenced file's but whose scheme or authority differs is an
ambiguity (two spellings of one store, or two stores): the plan refuses rather than guess
(apache/iceberg #4194 deleted live files that way). So does a table location that holds
another table's metadata: its files would all look orphaned.

Memory is bounded whatever the number of files under the location: the listing streams
folder by folder (`walk_location`), each file is sorted out as it comes and forgotten, and
the orphans found spool to a temporary file past a quarter of the memory budget
(`jobs/file_removal/candidates.py`). The referenced paths (about 150 bytes each as Python strings) move to a
temporary SQLite file past half the budget (`table/key_set.py`); a folder's files are
looked up together. What stays in memory is one folder's listing and the budget.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import structlog
from pyiceberg.table import Table

from maintenance.durations import format_duration
from maintenance.errors import IcemaintError
from maintenance.jobs.file_removal.candidates import Candidates, named
from maintenance.jobs.orphans.options import OrphansOptions
from maintenance.jobs.spec import PlanInput
from maintenance.run.output_folder import in_output_folder
from maintenance.table.inventory import InventoryReport, find_report, read_report, walk_inventory
from maintenance.table.key_set import KeySet
from maintenance.table.listing import ListedFile, walk_location
from maintenance.table.paths import authority_of, is_local, normalise, without_authority
from maintenance.table.references import ReferencedFiles

log = structlog.get_logger(__name__)
METADATA_DIR = "metadata"


class OrphanSafetyError(IcemaintError):
    """Orphan cleanup found something it cannot decide safely; it deleted nothing."""


REFILTER_BATCH = 10_000  # candidates looked up together when the references grew
LISTING_REPORT_S = 2.0  # the listing's progress, at most this often


@dataclass
class OrphanPlan:
    candidates: Candidates
    listed: int
    referenced_listed: int
    hidden: int
    too_new: int
    snapshot_id: int | None = None  # current when the references were read
    metadata_location: str = ""  # the newest metadata whose references were subtracted
    referenced: ReferencedFiles = field(default_factory=ReferencedFiles, repr=False)
    older_than_ms: int = 0
    listing_seconds: float = 0.0
    output_folders: list[str] = field(default_factory=list)  # relative; empty once the candidates are gone
    inventory_created_ms: int | None = None  # listed from an S3 Inventory report made then

    @property
    def bytes(self) -> int:
        return self.candidates.bytes

    @property
    def empty(self) -> bool:
        return not self.candidates.count and not self.output_folders

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
            "orphan_files_found": self.candidates.count,
            "orphan_bytes_found": self.bytes,
            "staging_folders_found": len(self.output_folders),
            "metadata_versions_read": self.referenced.metadata_versions_read,
            "references_on_disk": int(self.referenced.keys.spilled),
            "listing_seconds": round(self.listing_seconds, 3),
            "files_listed_per_second": round(self.listed / self.listing_seconds) if self.listing_seconds else 0,
        }
        if self.inventory_created_ms is not None:
            found["inventory_age_seconds"] = round(time.time() - self.inventory_created_ms / 1000)
        if not detail:
            return found
        return {**found, **named(self.candidates, self.candidates.count)}


def plan(inputs: PlanInput, options: OrphansOptions) -> OrphanPlan:
    """References first (every version in the metadata log), then the listing, streamed and
    sorted out folder by folder, then the references of the newest metadata if a commit
    landed meanwhile (a fresh file is protected by the age margin anyway)."""
    from maintenance.catalogs import load_table

    table = inputs.table
    referenced = ReferencedFiles(keys=KeySet(options.memory_budget // 2))
    referenced.add_table(table)
    inputs.report("references read", files_referenced=len(referenced.keys), metadata_versions_read=referenced.metadata_versions_read)
    started = reported = time.monotonic()
    folders: list[str] = []
    finder = OrphanFinder(referenced, older_than_ms=int((time.time() - options.older_than) * 1000), metadata_dir=metadata_dir(table),
                          candidates=Candidates(options.memory_budget // 4))
    listing, report = _listing(table, options, folders)
    for batch in listing:
        finder.add(batch)
        if time.monotonic() - reported >= LISTING_REPORT_S:  # millions of files take minutes: say how far
            inputs.report("listing", files_listed=finder.listed, orphan_files_found=finder.candidates.count)
            reported = time.monotonic()
    inputs.report("listed", files_listed=finder.listed, orphan_files_found=finder.candidates.count)
    listing_seconds = time.monotonic() - started
    newest = load_table(inputs.config, inputs.ref)
    outputs = [f for f in folders if in_output_folder(f + "/")] if is_local(table.location()) else []  # object stores have no folders to leave
    found = finder.plan(newest, outputs)
    if normalise(newest.metadata_location) != normalise(table.metadata_location):
        referenced.add_table(newest)
        found = finder.without_referenced(found)
    found.listing_seconds = listing_seconds
    found.inventory_created_ms = report.created_ms if report is not None else None
    return found


def _listing(table: Table, options: OrphansOptions, folders: list[str]) -> tuple[Iterator[list[ListedFile]], InventoryReport | None]:
    """The table location's files: LIST requests (`walk_location`), or an S3 Inventory report."""
    if options.inventory is None:
        return walk_location(table.io, table.location(), folders), None
    report = read_report(table.io, find_report(table.io, options.inventory))
    log.info("listing from an S3 Inventory report", manifest=report.manifest, created_ms=report.created_ms, data_files=len(report.files))
    return walk_inventory(table.io, report, table.location()), report


class OrphanFinder:
    """Sorts a listing out as it streams in (`walk_location`'s batches): referenced, hidden,
    too new, or an orphan (into `candidates`). Holds only counts, the candidates (which
    spool to disk past their budget) and the output folders that keep a file."""

    def __init__(self, referenced: ReferencedFiles, *, older_than_ms: int, metadata_dir: str = METADATA_DIR, candidates: Candidates | None = None) -> None:
        self.referenced = referenced
        self.older_than_ms = older_than_ms
        self.metadata_dir = metadata_dir
        self.candidates = candidates if candidates is not None else Candidates(64 * 1024 * 1024)
        self.listed = self.referenced_listed = self.hidden = self.too_new = 0
        self.occupied: set[str] = set()  # output folders (and their parents) holding a file that stays
        self._spellings: _OtherSpellings | None = None

    def add(self, files: list[ListedFile]) -> None:
        """Listed files, in any order and grouping (each is sorted out on its own; the batch's
        keys are looked up in the references together)."""
        for file in files:
            _refuse_nested_table(file, self.metadata_dir)
        keys = [normalise(file.location) for file in files]
        referenced = self.referenced.keys.present(keys)
        spellings = self._other_spellings(keys[0]) if keys else None
        for file, key in zip(files, keys):
            self.listed += 1
            if self._is_orphan(file, key, key in referenced, spellings):
                self.candidates.add(file)
            elif in_output_folder(file.relative):
                self.occupied.update(_parents(file.relative))

    def _is_orphan(self, file: ListedFile, key: str, referenced: bool, spellings: _OtherSpellings | None) -> bool:
        if referenced:
            self.referenced_listed += 1
            return False
        _refuse_other_spelling(spellings, file.location, key)
        if _hidden(file.relative) and not _checksum_of_orphan(file, self.referenced):
            self.hidden += 1
            return False
        if file.mtime_ms >= self.older_than_ms:
            self.too_new += 1
            return False
        return True

    def _other_spellings(self, key: str) -> _OtherSpellings:
        """The referenced keys of other stores than `key`'s, recomputed when the references grew."""
        size = len(self.referenced.keys)
        if self._spellings is None or self._spellings.size != size:
            self._spellings = _OtherSpellings(self.referenced.keys, authority_of(key))
        return self._spellings

    def plan(self, newest: Table, output_folders: list[str]) -> OrphanPlan:
        """What was found, as of the `newest` metadata (whose references are in `referenced`)."""
        found = OrphanPlan(candidates=self.candidates, listed=self.listed, referenced_listed=self.referenced_listed, hidden=self.hidden,
                           too_new=self.too_new, snapshot_id=newest.metadata.current_snapshot_id, metadata_location=newest.metadata_location,
                           referenced=self.referenced, older_than_ms=self.older_than_ms)
        found.output_folders = [folder for folder in output_folders if folder not in self.occupied]
        return found

    def without_referenced(self, found: OrphanPlan) -> OrphanPlan:
        """`found` once the references grew (a commit landed): candidates they now name stay."""
        kept = Candidates(found.candidates.budget_bytes)
        for batch in _batches(found.candidates.files(), REFILTER_BATCH):
            keys = [normalise(file.location) for file in batch]
            referenced = self.referenced.keys.present(keys)
            spellings = self._other_spellings(keys[0])
            for file, key in zip(batch, keys):
                if key in referenced:
                    found.referenced_listed += 1
                    continue
                _refuse_other_spelling(spellings, file.location, key)
                kept.add(file)
        found.candidates.close()
        found.candidates = kept
        return found


def _batches(files: Iterator[ListedFile], size: int) -> Iterator[list[ListedFile]]:
    while batch := list(islice(files, size)):
        yield batch


def _refuse_other_spelling(spellings: _OtherSpellings | None, location: str, key: str) -> None:
    other = spellings.get(key) if spellings is not None else None
    if other is not None:
        raise OrphanSafetyError(f"{location} is referenced as {other}: scheme or authority mismatch; nothing deleted")


class _OtherSpellings:
    """Referenced keys under another scheme or authority than the listing's, by their path
    part: a listed file whose path part is one of them is an ambiguity, never an orphan.
    Usually empty (a table's files share one store), so it costs nothing per listed file."""

    def __init__(self, keys: KeySet, listing_authority: str) -> None:
        self.size = len(keys)
        self._by_path = {without_authority(key): key for key in keys.outside(listing_authority + "/")}

    def get(self, key: str) -> str | None:
        return self._by_path.get(without_authority(key)) if self._by_path else None


def _parents(relative: str) -> list[str]:
    parts = relative.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def metadata_dir(table: Table) -> str:
    """The metadata folder relative to the location (`write.metadata.path` may move it)."""
    location = normalise(table.location())
    folder = normalise(table.metadata_location.rsplit("/", 1)[0])
    return folder[len(location) + 1 :] if folder.startswith(location + "/") else "metadata"


def plan_orphans(listing: list[ListedFile], referenced: ReferencedFiles, *, older_than_ms: int, metadata_dir: str = METADATA_DIR) -> OrphanFinder:
    """The orphans of a whole listing (tests, small tables); `older_than_ms`: only files last
    modified before this instant are candidates."""
    finder = OrphanFinder(referenced, older_than_ms=older_than_ms, metadata_dir=metadata_dir)
    finder.add(listing)
    return finder


def _hidden(relative: str) -> bool:
    """Hidden like Iceberg's own cleanup sees it: a name starting with '.' or '_' (checksums,
    `_SUCCESS`, `_temporary`), except a partition folder such as `_key=1`, and except
    anything in icemaint's own output folders (`run/output_folder.py`)."""
    if in_output_folder(relative):
        return False
    return any(part.startswith((".", "_")) and "=" not in part for part in relative.split("/"))


def _checksum_of_orphan(file: ListedFile, referenced: ReferencedFiles) -> bool:
    """A Hadoop checksum `.NAME.crc` belongs to NAME beside it: it goes when NAME is neither
    referenced nor hidden by its name (NAME is an orphan, or already gone). Decided from
    names and references alone, so a file is sorted out without the rest of its folder
    (a listing may come in any order: an inventory report)."""
    folder, _, name = file.relative.rpartition("/")
    if not (name.startswith(".") and name.endswith(".crc")):
        return False
    if folder and _hidden(folder):
        return False  # inside another writer's hidden folder: stays hidden with it
    companion = f"{folder}/{name[1:-4]}" if folder else name[1:-4]
    companion_location = file.location[: len(file.location) - len(file.relative)] + companion
    return normalise(companion_location) not in referenced.keys and not _hidden(companion)


def _refuse_nested_table(file: ListedFile, metadata_dir: str) -> None:
    name = file.relative.rsplit("/", 1)[-1]
    if name.endswith(".metadata.json") and not _hidden(file.relative) and file.relative != f"{metadata_dir}/{name}":
        raise OrphanSafetyError(f"{file.location} is table metadata of another table inside this table's location; nothing deleted")
