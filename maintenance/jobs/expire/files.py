"""The files expiry may delete: those only expired snapshots referenced, and metadata.json
versions older than every version the table still lists.

Mirrors Iceberg's ReachableFileCleanup: manifest lists of expired snapshots; manifests no
retained snapshot lists; data and delete files live in those manifests and live in no
retained manifest; statistics files of expired snapshots no retained snapshot shares.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pyiceberg.io import FileIO
from pyiceberg.table import Table
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.snapshots import Snapshot

from maintenance.table.files import read_manifest
from maintenance.table.listing import ListedFile, list_location
from maintenance.table.paths import normalise
from maintenance.table.references import content_paths, manifests_of

_METADATA_VERSION = re.compile(r"^(?:(?P<n>\d+)-[^/]+|v(?P<v>\d+))(?:\.gz)?\.metadata\.json(?:\.gz)?$")


@dataclass
class ExpiredFiles:
    manifest_lists: list[str]
    manifests: list[str]
    content_files: list[str]
    statistics_files: list[str]

    @property
    def all(self) -> list[str]:
        return [*self.content_files, *self.manifests, *self.manifest_lists, *self.statistics_files]


def files_of_expired(io: FileIO, before: TableMetadata, expired: list[Snapshot], retained: list[Snapshot], retained_statistics: set[str]) -> ExpiredFiles:
    """Locations (as the metadata spells them) that only the expired snapshots referenced."""
    retained_lists = {normalise(s.manifest_list) for s in retained if s.manifest_list}
    lists = [s.manifest_list for s in expired if s.manifest_list and normalise(s.manifest_list) not in retained_lists]
    expired_manifests = manifests_of(io, expired)
    retained_manifests = manifests_of(io, retained)
    gone = {key: m for key, m in expired_manifests.items() if key not in retained_manifests}
    content: list[str] = []
    if gone:
        spelled = {}
        for manifest in gone.values():
            for entry in read_manifest(io, manifest, discard_deleted=True):
                spelled.setdefault(normalise(entry.data_file.file_path), entry.data_file.file_path)
        still_live = content_paths(io, retained_manifests.values(), live_only=True)
        content = sorted(path for key, path in spelled.items() if key not in still_live)
    expired_ids = {s.snapshot_id for s in expired}
    statistics = [
        f.statistics_path
        for f in [*before.statistics, *before.partition_statistics]
        if f.snapshot_id in expired_ids and normalise(f.statistics_path) not in retained_statistics
    ]
    return ExpiredFiles(
        manifest_lists=sorted(lists),
        manifests=sorted(m.manifest_path for m in gone.values()),
        content_files=content,
        statistics_files=sorted(set(statistics)),
    )


def old_metadata_versions(table: Table) -> list[str]:
    """metadata.json files of the table older than every version its metadata still lists."""
    folder = table.metadata_location.rsplit("/", 1)[0]
    return [f.location for f in old_metadata_files(list_location(table.io, folder), table.metadata, table.metadata_location)]


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
