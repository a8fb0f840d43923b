"""Reading a snapshot's live manifest entries through pyiceberg (no JVM)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor

from pyiceberg.manifest import ManifestEntry, ManifestFile
from pyiceberg.table import Table

_MANIFEST_READERS = 8


def live_entries(table: Table, manifests: Iterable[ManifestFile]) -> Iterator[ManifestEntry]:
    """Every live entry (data or delete file) of the manifests, sequence numbers inherited."""
    manifests = list(manifests)
    with ThreadPoolExecutor(max_workers=min(_MANIFEST_READERS, max(1, len(manifests)))) as pool:
        for entries in pool.map(lambda m: m.fetch_manifest_entry(table.io, discard_deleted=True), manifests):
            yield from entries
