"""Which files a table's metadata references: what expiry may not delete and what orphan
cleanup must subtract from a listing.

All paths are compared as `paths.normalise` keys. Reads are metadata only (manifest lists
and manifests through pyiceberg, in parallel), never the data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import structlog
from pyiceberg.io import FileIO
from pyiceberg.manifest import ManifestFile
from pyiceberg.serializers import FromInputFile
from pyiceberg.table import Table
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.snapshots import Snapshot

from maintenance import faults
from maintenance.table.key_set import KeySet
from maintenance.table.manifest_paths import manifest_paths
from maintenance.table.paths import normalise
from maintenance.table.pool import parallel_iter, parallel_map

log = structlog.get_logger(__name__)
VERSION_HINT = "version-hint.text"


def manifests_of(io: FileIO, snapshots: Iterable[Snapshot], missing: list[str] | None = None) -> dict[str, ManifestFile]:
    """The manifests the snapshots' manifest lists name, by normalised path. A missing
    manifest list is an error unless `missing` collects it (an already expired snapshot)."""
    found: dict[str, ManifestFile] = {}
    read = _tolerant(lambda s: s.manifests(io), lambda s: s.manifest_list, missing)
    for manifests in parallel_map(read, [s for s in snapshots if s.manifest_list], lambda s: s.manifest_list):
        for manifest in manifests:
            found.setdefault(normalise(manifest.manifest_path), manifest)
    return found


def content_paths(io: FileIO, manifests: Iterable[ManifestFile], *, live_only: bool, missing: list[str] | None = None) -> Iterator[list[str]]:
    """Data and delete files the manifests name (only ADDED/EXISTING entries if `live_only`),
    as the metadata spells them, one manifest's at a time (a few manifests are read ahead)."""
    read = _tolerant(lambda m: manifest_paths(io, m.manifest_path, live_only=live_only), lambda m: m.manifest_path, missing)
    return parallel_iter(read, list(manifests), lambda m: m.manifest_path)


def _tolerant(read: Callable, name: Callable, missing: list[str] | None) -> Callable:  # type: ignore[type-arg]
    if missing is None:
        return read

    def guarded(item):  # type: ignore[no-untyped-def]
        try:
            return read(item)
        except FileNotFoundError:
            missing.append(name(item))
            return []

    return guarded


def statistics_paths(metadata: TableMetadata, snapshot_ids: set[int] | None = None) -> set[str]:
    """Statistics and partition-statistics files (of the given snapshots, or all)."""
    files = [*metadata.statistics, *metadata.partition_statistics]
    return {normalise(f.statistics_path) for f in files if snapshot_ids is None or f.snapshot_id in snapshot_ids}


@dataclass
class ReferencedFiles:
    """Every file the metadata read so far names, as normalised keys.

    Orphan cleanup reads every snapshot of every metadata version its log still lists, and
    every manifest entry, deleted ones included (a file any snapshot names is never an
    orphan). Expiry needs what the retained snapshots still use: the current metadata only
    (`log_versions=False`) and live entries only (`live_only=True`). Reading is incremental:
    a manifest list or manifest read once (they are immutable) is never read again, so
    adding the newest metadata of a table that moved reads only its new manifests."""

    keys: KeySet = field(default_factory=KeySet)  # spills to disk past its budget
    live_only: bool = False
    log_versions: bool = True
    metadata_versions_read: int = 0
    metadata_versions_missing: int = 0
    missing_in_older_versions: list[str] = field(default_factory=list)  # files of expired snapshots
    _manifest_lists: set[str] = field(default_factory=set)
    _manifests: set[str] = field(default_factory=set)

    def __contains__(self, path: str) -> bool:
        return normalise(path) in self.keys

    def unreferenced(self, paths: list[str]) -> list[str]:
        """Those of `paths` the metadata read so far does not name (one lookup per few
        hundred once the keys spilled to disk)."""
        keys = [normalise(path) for path in paths]
        named = self.keys.present(keys)
        return [path for path, key in zip(paths, keys) if key not in named]

    def add_table(self, table: Table) -> None:
        """The current metadata and (with `log_versions`) every metadata version its log still lists."""
        self.add_metadata(table.io, table.metadata, table.metadata_location)
        if not self.log_versions:
            return
        for entry in table.metadata.metadata_log:
            key = normalise(entry.metadata_file)
            if key in self.keys:
                continue
            self.keys.add(key)
            try:
                older = FromInputFile.table_metadata(table.io.new_input(entry.metadata_file))
            except FileNotFoundError:
                self.metadata_versions_missing += 1  # already cleaned up: names nothing more
                continue
            self.add_metadata(table.io, older, entry.metadata_file, current=False)

    def add_metadata(self, io: FileIO, metadata: TableMetadata, metadata_location: str, current: bool = True) -> None:
        """A metadata version's files. In the current version a missing manifest list or
        manifest is an error (its references would be unknown); in older versions it belongs
        to a snapshot expiry already cleaned up."""
        self.metadata_versions_read += 1
        self.keys.add(normalise(metadata_location))
        self.keys.add(normalise(f"{metadata_location.rsplit('/', 1)[0]}/{VERSION_HINT}"))
        self.keys.update(statistics_paths(metadata))
        self.add_snapshots(io, metadata.snapshots, missing=None if current else self.missing_in_older_versions)

    def add_snapshots(self, io: FileIO, snapshots: Iterable[Snapshot], missing: list[str] | None = None) -> None:
        """The snapshots' manifest lists, manifests and content files (those not read before)."""
        new = [s for s in snapshots if s.manifest_list and normalise(s.manifest_list) not in self._manifest_lists]
        self._manifest_lists.update(normalise(s.manifest_list) for s in new)
        self.keys.update(normalise(s.manifest_list) for s in new)
        manifests = {key: m for key, m in manifests_of(io, new, missing).items() if key not in self._manifests}
        self._manifests.update(manifests)
        self.keys.update(manifests)
        for paths in content_paths(io, manifests.values(), live_only=self.live_only, missing=missing):
            self.keys.update(normalise(p) for p in paths)


class NewestReferences:
    """What a deletion must not touch, as of the newest metadata: re-read before each batch
    of deletions (`jobs/file_removal/fenced.py`), reading only what changed since the last look."""

    def __init__(self, load: Callable[[], Table], referenced: ReferencedFiles, metadata_location: str) -> None:
        self.load = load
        self.referenced = referenced
        self.metadata_location = normalise(metadata_location)

    def refresh(self) -> Table:
        """Load the newest metadata and add its references if it moved; returns it. It names
        the table as the load found it: a deletion batch takes its time before calling this
        (`jobs/file_removal/fenced.py`), so time spent in here, a pause included, shortens its window."""
        newest = self.load()
        faults.point("references-read")
        location = normalise(newest.metadata_location)
        if location != self.metadata_location:
            self.referenced.add_table(newest)
            self.metadata_location = location
        return newest

    def unreferenced(self, paths: list[str]) -> list[str]:
        return self.referenced.unreferenced(paths)


def missing_files(table: Table, budget_bytes: int = 128 * 1024**2) -> list[str]:
    """Files that some snapshot of the table still needs (manifest lists, manifests, live data
    and delete files) and that are not there. Should always be empty: EXPIRE and ORPHANS
    check it after deleting, as part of their verification. The needed files are a `KeySet`
    (`budget_bytes`) and the listing streams: a table of tens of millions of files is checked
    in bounded memory."""
    from maintenance.table.listing import walk_location
    from maintenance.table.paths import is_under

    snapshots = [s for s in table.metadata.snapshots if s.manifest_list]
    needed = KeySet(budget_bytes)
    try:
        needed.update(normalise(s.manifest_list) for s in snapshots)
        unreadable: list[str] = []  # a missing manifest list or manifest is reported, not raised
        manifests = manifests_of(table.io, snapshots, unreadable)
        needed.update(manifests)
        for paths in content_paths(table.io, manifests.values(), live_only=True, missing=unreadable):
            needed.update(normalise(p) for p in paths)
        location = table.location()
        elsewhere = list(needed.outside(normalise(location).rstrip("/") + "/"))  # usually none: checked one by one
        for batch in walk_location(table.io, location):
            needed.discard_present([normalise(f.location) for f in batch])
        gone = {key for key in needed if is_under(key, location)}
        gone.update(key for key in elsewhere if not table.io.new_input(key).exists())
        return sorted(gone | {normalise(p) for p in unreadable})
    finally:
        needed.close()


def manifest_list_digest(table: Table, snapshot_id: int) -> str:
    """A digest of what a snapshot's manifest list names: each manifest's path, length,
    content, spec, sequence numbers and file counts (one small file read).

    What it proves, with `missing_files`, for a job that only deletes files (EXPIRE,
    ORPHANS): a snapshot's live entries are the live entries of the manifests its list
    names; manifests and manifest lists are written once, under names never reused, and a
    deletion can only remove files. So the same snapshot with the same list digest after
    deleting, and every manifest it names still present, reads the same live entries as
    before, without decoding one manifest entry (on a table of millions of files that
    decoding is most of the verification's time and memory)."""
    import hashlib

    snapshot = table.snapshot_by_id(snapshot_id)
    if snapshot is None or not snapshot.manifest_list:
        return "manifests:none"
    rows = sorted(repr((normalise(m.manifest_path), m.manifest_length, int(m.content), m.partition_spec_id, m.sequence_number, m.min_sequence_number,
                        m.added_files_count, m.existing_files_count, m.deleted_files_count, m.added_snapshot_id)) for m in snapshot.manifests(table.io))
    return "manifests:" + hashlib.sha256("\n".join(rows).encode()).hexdigest()
