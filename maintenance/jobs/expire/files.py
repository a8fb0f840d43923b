"""The files expiry may delete: those only expired snapshots referenced, and metadata.json
versions older than every version the table still lists.

Mirrors Iceberg's ReachableFileCleanup: manifest lists of expired snapshots; manifests no
retained snapshot lists; data and delete files live in those manifests and live in no
retained manifest; statistics files of expired snapshots no retained snapshot shares.

Expiry deletes in that order, manifest lists last, so a run killed while deleting leaves a
manifest list for every snapshot whose files are not all gone. Such a snapshot is no longer
in the current metadata but still in an older version the metadata log lists: the next
expiry finds it there (`left_behind`) and deletes its files like those of a snapshot it
expires itself, so expiry is idempotent. (Orphan cleanup never would: it keeps whatever a
metadata version in the log names.)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import structlog
from pyiceberg.io import FileIO
from pyiceberg.serializers import FromInputFile
from pyiceberg.table import Table
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.snapshots import Snapshot
from pyiceberg.table.statistics import PartitionStatisticsFile, StatisticsFile

from maintenance.jobs.file_removal.candidates import Candidates
from maintenance.jobs.options import MEMORY_BUDGET
from maintenance.table.key_set import KeySet
from maintenance.table.listing import ListedFile, list_location
from maintenance.table.paths import is_under, normalise
from maintenance.table.references import ReferencedFiles, content_paths, manifests_of, statistics_paths

log = structlog.get_logger(__name__)
_METADATA_VERSION = re.compile(r"^(?:(?P<n>\d+)-[^/]+|v(?P<v>\d+))(?:\.gz)?\.metadata\.json(?:\.gz)?$")
_MANIFEST_LIST = re.compile(r"^snap-.*\.avro$")
Statistics = StatisticsFile | PartitionStatisticsFile


@dataclass
class ExpiredFiles:
    manifest_lists: list[str]
    manifests: list[str]
    content_files: Candidates  # may be millions: spooled past their share of the budget
    statistics_files: list[str]

    @property
    def phases(self) -> list[Iterable[str]]:
        """In deletion order: content, manifests, manifest lists, statistics."""
        return [self.content_files, self.manifests, self.manifest_lists, self.statistics_files]


@dataclass
class LeftBehind:
    """Snapshots an earlier expiry removed from the metadata without deleting all their files
    (it was killed), found in the metadata versions the log still lists."""

    snapshots: list[Snapshot] = field(default_factory=list)
    statistics: list[Statistics] = field(default_factory=list)
    metadata_versions_read: int = 0


def retained_references(table: Table, retained: Iterable[Snapshot], budget_bytes: int = MEMORY_BUDGET // 2) -> ReferencedFiles:
    """Everything the retained snapshots still use: their manifest lists, manifests, live
    content files and statistics files, in a `KeySet` of `budget_bytes`. (A deletion then adds
    what newer metadata names: `table.references.NewestReferences`.)"""
    retained = list(retained)
    references = ReferencedFiles(keys=KeySet(budget_bytes), live_only=True, log_versions=False)
    references.keys.update(statistics_paths(table.metadata, {s.snapshot_id for s in retained}))
    references.add_snapshots(table.io, retained)
    return references


def files_of_expired(io: FileIO, expired: Iterable[Snapshot], statistics: Iterable[Statistics], retained: ReferencedFiles, location: str,
                     budget_bytes: int = MEMORY_BUDGET // 4) -> tuple[ExpiredFiles, int]:
    """Locations (as the metadata spells them) under `location` that only the expired
    snapshots referenced: none that `retained` names; and how many such files lie outside
    `location` (kept). `statistics` are the statistics files of the expired snapshots. A
    manifest an interrupted expiry already deleted names nothing more.

    Memory: the expired manifests' paths are read one manifest at a time; the content files
    found so far (to name each once) are a `KeySet` of half of `budget_bytes`, the ones to
    delete a `Candidates` spool of the other half."""
    expired = list(expired)
    root = normalise(location).rstrip("/") + "/"
    lists = sorted({s.manifest_list for s in expired if s.manifest_list and s.manifest_list not in retained})
    gone = {key: m for key, m in manifests_of(io, expired, missing=[]).items() if key not in retained.keys}
    content = Candidates(budget_bytes // 2)
    seen = KeySet(budget_bytes // 2)
    outside = 0
    try:
        for paths in content_paths(io, gone.values(), live_only=True, missing=[]):
            keys = [normalise(path) for path in paths]
            known = seen.present(keys) | retained.keys.present(keys)
            for path, key in zip(paths, keys):
                if key in known:
                    continue
                known.add(key)
                if key.startswith(root):
                    content.add_path(path)
                else:
                    outside += 1
            seen.update(keys)
    finally:
        seen.close()
    statistics_files = sorted({f.statistics_path for f in statistics if f.statistics_path not in retained})
    within = [[p for p in phase if is_under(p, location)] for phase in (sorted(m.manifest_path for m in gone.values()), lists, statistics_files)]
    outside += len(gone) + len(lists) + len(statistics_files) - sum(map(len, within))
    return ExpiredFiles(manifest_lists=within[1], manifests=within[0], content_files=content, statistics_files=within[2]), outside


def statistics_of(metadata: TableMetadata, snapshot_ids: set[int]) -> list[Statistics]:
    return [f for f in [*metadata.statistics, *metadata.partition_statistics] if f.snapshot_id in snapshot_ids]


def left_behind(table: Table, metadata_listing: list[ListedFile]) -> LeftBehind:
    """Snapshots removed from the metadata whose manifest list is still in the metadata
    folder. Older metadata versions are read only when the folder holds a manifest list no
    current snapshot names; a manifest list of a commit in flight is named by no committed
    version, so it is never taken for one."""
    current = {normalise(s.manifest_list) for s in table.metadata.snapshots if s.manifest_list}
    strays = {normalise(f.location) for f in metadata_listing if _MANIFEST_LIST.match(f.relative.rsplit("/", 1)[-1]) and normalise(f.location) not in current}
    found = LeftBehind()
    if not strays:
        return found
    kept_ids = {s.snapshot_id for s in table.metadata.snapshots}
    seen: set[int] = set()
    for entry in reversed(table.metadata.metadata_log):  # newest first: the likeliest to hold them
        try:
            older = FromInputFile.table_metadata(table.io.new_input(entry.metadata_file))
        except FileNotFoundError:
            continue
        found.metadata_versions_read += 1
        removed = [s for s in older.snapshots if s.snapshot_id not in kept_ids and s.snapshot_id not in seen and s.manifest_list and normalise(s.manifest_list) in strays]
        seen.update(s.snapshot_id for s in removed)
        found.snapshots.extend(removed)
        found.statistics.extend(statistics_of(older, {s.snapshot_id for s in removed}))
        strays -= {normalise(s.manifest_list) for s in removed if s.manifest_list}
        if not strays:
            break
    if found.snapshots:
        log.info("snapshots an earlier expiry removed still have files", snapshots=len(found.snapshots))
    return found


@dataclass
class Deletable:
    """What expiry deletes (within the table location), and how many files it leaves because
    they lie outside it. `close()` drops the spooled content files."""

    files: ExpiredFiles
    old_metadata: list[str]
    outside: int

    @property
    def phases(self) -> list[Iterable[str]]:
        """In deletion order: content, manifests, manifest lists, statistics, old metadata."""
        return [*self.files.phases, self.old_metadata]

    @property
    def count(self) -> int:
        return sum(len(phase) for phase in (self.files.content_files, self.files.manifests, self.files.manifest_lists,
                                            self.files.statistics_files, self.old_metadata))

    def paths(self) -> Iterator[str]:
        return (path for phase in self.phases for path in phase)

    def counters(self) -> dict[str, int]:
        return {
            "content_files_unreferenced": len(self.files.content_files),
            "manifests_unreferenced": len(self.files.manifests),
            "manifest_lists_unreferenced": len(self.files.manifest_lists),
            "statistics_files_unreferenced": len(self.files.statistics_files),
            "metadata_files_unreferenced": len(self.old_metadata),
            "files_outside_location_kept": self.outside,
        }

    def close(self) -> None:
        self.files.content_files.close()


def files_to_delete(after: Table, expired: list[Snapshot], statistics: list[Statistics], retained: ReferencedFiles, old_metadata: list[str],
                    budget_bytes: int = MEMORY_BUDGET // 4) -> Deletable:
    """The files only `expired` referenced that no retained snapshot needs (`retained`, read
    from the metadata `after` the expiry), plus `old_metadata`, within the table location."""
    location = after.location()
    files, outside = files_of_expired(after.io, expired, statistics, retained, location, budget_bytes)
    old = [path for path in old_metadata if is_under(path, location)]
    outside += len(old_metadata) - len(old)
    if outside:
        log.warning("files of expired snapshots outside the table location are left alone", count=outside)
    return Deletable(files, old, outside)


def metadata_folder_listing(table: Table) -> list[ListedFile]:
    return list_location(table.io, table.metadata_location.rsplit("/", 1)[0])


def old_metadata_versions(table: Table, listing: list[ListedFile] | None = None) -> list[str]:
    """metadata.json files of the table older than every version its metadata still lists."""
    listing = metadata_folder_listing(table) if listing is None else listing
    return [f.location for f in old_metadata_files(listing, table.metadata, table.metadata_location)]


def old_metadata_files(listing: list[ListedFile], metadata: TableMetadata, metadata_location: str) -> list[ListedFile]:
    """metadata.json files older than the oldest version the current metadata still lists.

    The kept count is Iceberg's own `write.metadata.previous-versions-max` (the metadata log
    is trimmed to it on every commit). A version at or above the oldest listed one is never
    touched, whether listed or not: it may belong to a commit in flight."""
    listed = [metadata_location, *(entry.metadata_file for entry in metadata.metadata_log)]
    referenced = {normalise(path) for path in listed}
    versions = [v for v in (_version(path.rsplit("/", 1)[-1]) for path in listed) if v is not None]
    if not versions:
        return []
    oldest_kept = min(versions)
    old = []
    for file in listing:
        version = _version(file.relative)
        if version is not None and version < oldest_kept and normalise(file.location) not in referenced:
            old.append(file)
    return old


def _version(name: str) -> int | None:
    match = _METADATA_VERSION.match(name)
    if match is None:
        return None
    return int(match["n"] if match["n"] is not None else match["v"])
