"""A snapshot's live files, read once from its manifests and shared by health and planning.

Every job plans from a `SnapshotFiles`: the data files, position deletes (v2 files and v3
deletion vectors) and equality deletes that are live in one snapshot, each with its data
sequence number (inherited as the spec says), partition and column statistics. Reading
manifests is the expensive part of looking at a table, so a process keeps the newest
snapshots it read (keyed by table uuid and snapshot id: a snapshot's files never change)
and the daemon's evaluation and the job that follows under the lease share one read. A
newer snapshot of a table whose older one is kept reads only the manifests the older one
did not list (a streaming table's commit adds one or two to hundreds): a manifest never
changes once written, and a manifest list carries each manifest it keeps with the sequence
number and first row id it was first listed with, so its live entries read the same.

Manifests are read with the format-3 entry schema whatever the table's version, so the
fields v3 added (`referenced_data_file`, `content_offset`, `first_row_id`) are there when a
writer set them; older entries simply have none. Manifest lists are read with the format-3
schema too, so a data file's `first_row_id` is inherited from its manifest's as Iceberg's
`ManifestReader` does: the same entry then reads the same whether it is the ADDED entry of
its first manifest (null, inherited) or an EXISTING entry of a rewritten one (written out).
"""

from __future__ import annotations

import math
import struct
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import IntEnum
from functools import cached_property
from typing import Any

from pyiceberg.avro.file import AvroFile
from pyiceberg.io import FileIO
from pyiceberg.manifest import (
    MANIFEST_ENTRY_SCHEMAS,
    MANIFEST_LIST_FILE_SCHEMAS,
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
    PartitionFieldSummary,
    _inherit_from_manifest,
)
from pyiceberg.partitioning import PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot
from pyiceberg.transforms import VoidTransform

from maintenance.errors import UnknownSnapshotError, UnreadableMetadataError
from maintenance.table.pool import parallel_map
from maintenance.table.position_deletes import DELETE_FILE_PATH_ID
from maintenance.table.stats import ColumnStats

PartitionKey = tuple[int, tuple[Any, ...]]  # (spec id, partition values)
_V3_FIELDS = 16  # first_row_id, referenced_data_file, content_offset, content_size_in_bytes follow
_MANIFEST_FIRST_ROW_ID = 15  # position of first_row_id in the format-3 manifest list record


class Content(IntEnum):
    DATA = 0
    POSITION_DELETES = 1
    EQUALITY_DELETES = 2


@dataclass(frozen=True, eq=False)
class TableFile:
    """One live file of a snapshot, with what planning needs to know about it."""

    path: str
    content: Content
    file_format: str
    spec_id: int
    partition: tuple[Any, ...]
    partition_path: str  # '' when its spec is unpartitioned
    seq: int  # data sequence number
    file_seq: int | None
    records: int
    size: int
    stats: ColumnStats = field(default_factory=ColumnStats, repr=False)
    equality_ids: tuple[int, ...] = ()
    referenced_data_file: str | None = None  # set for v3 DVs and file-scoped v2 position deletes
    first_row_id: int | None = None
    content_offset: int | None = None
    content_size: int | None = None
    manifest: str = ""  # the manifest that lists it

    @cached_property
    def partition_key(self) -> PartitionKey:
        """Spec id and partition values, equal exactly when Iceberg's partition comparison
        (`StructLikeWrapper`) says so; see `partition_value_key`."""
        return (self.spec_id, tuple(partition_value_key(v) for v in self.partition))

    @property
    def is_dv(self) -> bool:
        """A v3 deletion vector: a Puffin blob of positions for one data file."""
        return self.content == Content.POSITION_DELETES and self.file_format == FileFormat.PUFFIN.name

    @property
    def key(self) -> str:
        """What tells this file's record from every other's: its path, and for a deletion
        vector (many share one Puffin file) the offset of its blob (`record_key`)."""
        return record_key(self.path, self.content_offset if self.is_dv else None)


def record_key(path: str, content_offset: int | None = None) -> str:
    """One content file record's identity: the path, plus the blob offset of a deletion vector."""
    return path if content_offset is None else f"{path}#{content_offset}"


@dataclass(frozen=True)
class ManifestInfo:
    """One manifest a snapshot lists, as its manifest list describes it (no manifest read)."""

    path: str
    length: int
    content: Content  # DATA (data files) or POSITION_DELETES standing for "delete files"
    spec_id: int
    live_files: int  # added + existing entries
    added_snapshot_id: int | None = None  # the snapshot that wrote it

    @property
    def holds_deletes(self) -> bool:
        return self.content != Content.DATA


@dataclass
class SnapshotFiles:
    """The live files of one snapshot of one table."""

    table_uuid: str
    snapshot_id: int
    sequence_number: int
    format_version: int
    schema: Schema  # the table's current schema: the one Iceberg binds specs and stats to
    specs: dict[int, PartitionSpec]
    files: list[TableFile]
    manifests: list[ManifestInfo] = field(default_factory=list)  # what the snapshot's manifest list names

    @cached_property
    def data(self) -> list[TableFile]:
        return [f for f in self.files if f.content == Content.DATA]

    @cached_property
    def equality_deletes(self) -> list[TableFile]:
        return [f for f in self.files if f.content == Content.EQUALITY_DELETES]

    @cached_property
    def position_deletes(self) -> list[TableFile]:
        """v2 position delete files (deletion vectors are in `deletion_vectors`)."""
        return [f for f in self.files if f.content == Content.POSITION_DELETES and not f.is_dv]

    @cached_property
    def deletion_vectors(self) -> list[TableFile]:
        return [f for f in self.files if f.is_dv]

    @cached_property
    def deletes(self) -> list[TableFile]:
        return [f for f in self.files if f.content != Content.DATA]

    @cached_property
    def dangling_deletion_vectors(self) -> list[TableFile]:
        """Format 3: DVs whose data file is not live (a rewrite that removed it left them:
        apache/iceberg#13245); they delete nothing, yet every reader plans them."""
        live = {f.path for f in self.data}
        return [dv for dv in self.deletion_vectors if dv.referenced_data_file not in live]

    @cached_property
    def duplicated_deletion_vectors(self) -> dict[str, list[TableFile]]:
        """Format 3: data file path -> its live DVs, where it has more than the one the spec
        allows (two writers' concurrent commits: apache/iceberg#15006); Iceberg's readers
        refuse such a file ("Can't index multiple DVs")."""
        by_file: dict[str, list[TableFile]] = {}
        for dv in self.deletion_vectors:
            by_file.setdefault(dv.referenced_data_file or "", []).append(dv)
        return {path: dvs for path, dvs in by_file.items() if len(dvs) > 1}

    def is_global(self, spec_id: int) -> bool:
        """An unpartitioned spec (no fields, or only void ones): its equality deletes apply everywhere."""
        return is_unpartitioned(self.specs[spec_id])


def partition_value_key(value: Any) -> Any:
    """A partition value as a dict key that matches Java's equality, not Python's.

    Iceberg compares floating-point partition values with `Double.compare`: -0.0 and 0.0
    are two partitions, and NaN is one partition (every NaN equal). Python has 0.0 == -0.0
    and NaN != NaN (and pyiceberg decodes each manifest's NaN as a new object), so floats
    are keyed by their bit pattern, with one pattern for every NaN."""
    if isinstance(value, float):
        return ("float", b"NaN" if math.isnan(value) else struct.pack(">d", value))
    return value


def is_unpartitioned(spec: PartitionSpec) -> bool:
    return all(isinstance(f.transform, VoidTransform) for f in spec.fields)


class _Cache:
    """The newest snapshots read in this process, bounded by their total file count."""

    def __init__(self, max_files: int = 2_000_000, max_snapshots: int = 256) -> None:
        self.max_files, self.max_snapshots = max_files, max_snapshots
        self._items: OrderedDict[tuple[str, int], SnapshotFiles] = OrderedDict()
        self._lock = threading.Lock()
        self.manifests_read = 0  # for measurements: how often a manifest was actually read

    def get(self, key: tuple[str, int]) -> SnapshotFiles | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def newest_of(self, table_uuid: str) -> SnapshotFiles | None:
        """The table's snapshot put or used last, if one is kept."""
        with self._lock:
            return next((self._items[key] for key in reversed(self._items) if key[0] == table_uuid), None)

    def put(self, key: tuple[str, int], value: SnapshotFiles) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.max_snapshots or (len(self._items) > 1 and sum(len(v.files) for v in self._items.values()) > self.max_files):
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def snapshots(self) -> list[tuple[tuple[str, int], SnapshotFiles]]:
        """What is kept, oldest first (a measurement puts it back after a check: `restore`)."""
        with self._lock:
            return list(self._items.items())

    def restore(self, items: list[tuple[tuple[str, int], SnapshotFiles]]) -> None:
        with self._lock:
            self._items = OrderedDict(items)


CACHE = _Cache()


def snapshot_files(table: Table, snapshot_id: int | None = None, *, reuse: SnapshotFiles | None = None, cached: bool = True) -> SnapshotFiles:
    """The live files of a snapshot (default: the current one); read once per process.
    With `reuse` (another snapshot of the table, read before), the manifests both list are
    not read again: manifests are immutable, so their live entries are the same (a child
    snapshot usually shares all but the few manifests its commit wrote). `cached=False`
    reads it from storage even if this process read it before (proving it is readable)."""
    metadata = table.metadata
    snapshot_id = metadata.current_snapshot_id if snapshot_id is None else snapshot_id
    specs = table.specs()
    if snapshot_id is None:
        return SnapshotFiles(str(metadata.table_uuid), -1, 0, metadata.format_version, table.schema(), specs, [])
    snapshot = table.snapshot_by_id(snapshot_id)
    if snapshot is None:
        raise UnknownSnapshotError(f"table has no snapshot {snapshot_id}")
    key = (str(metadata.table_uuid), snapshot_id)
    kept = CACHE.get(key) if cached else None
    if kept is not None and kept.specs.keys() == specs.keys():
        return kept
    schema = table.schema()
    if reuse is None and cached:
        newest = CACHE.newest_of(key[0])
        if newest is not None and newest.schema.schema_id == schema.schema_id and newest.specs.keys() == specs.keys():
            reuse = newest  # read with the same schema and specs: its files read the same
    known = _files_by_manifest(reuse) if reuse is not None and reuse.table_uuid == key[0] else {}
    try:
        manifests = snapshot_manifests(table.io, snapshot)
        files = [f for m in manifests if m.manifest_path in known for f in known[m.manifest_path]]
        files += [_table_file(entry, specs, schema, manifest.manifest_path)
                  for manifest, entries in live_entries(table.io, [m for m in manifests if m.manifest_path not in known]) for entry in entries]
    except OSError as exc:
        raise UnreadableMetadataError(f"snapshot {snapshot_id} cannot be read: {_one_line(exc)}") from exc
    except CorruptMetadataError as exc:
        raise UnreadableMetadataError(f"snapshot {snapshot_id} cannot be read: {exc}") from exc
    result = SnapshotFiles(key[0], snapshot_id, snapshot.sequence_number or 0, metadata.format_version, schema, specs, files,
                           [_manifest_info(m) for m in manifests])
    CACHE.put(key, result)
    return result


def added_files(table: Table, snapshot_id: int) -> list[TableFile]:
    """The entries a snapshot ADDED (only the manifests it wrote that add files are read)."""
    snapshot = table.snapshot_by_id(snapshot_id)
    if snapshot is None:
        raise UnknownSnapshotError(f"table has no snapshot {snapshot_id}")
    specs, schema = table.specs(), table.schema()
    adding = [m for m in snapshot_manifests(table.io, snapshot) if m.added_snapshot_id == snapshot_id and m.has_added_files()]
    return [_table_file(e, specs, schema, m.manifest_path) for m in adding for e in read_manifest(table.io, m, discard_deleted=True)
            if e.status == ManifestEntryStatus.ADDED]


def child_snapshot_files(table: Table, parent: SnapshotFiles, snapshot_id: int, removed: set[str],
                         added: list[TableFile] | None = None) -> SnapshotFiles | None:
    """The live files of `snapshot_id`, a child of `parent`, without reading the manifests it
    rewrote: the parent's files but those `removed` (record keys: Iceberg's diff of the
    child), plus the entries the child ADDED (`added`, read here when not given). Checked
    against the child's manifest list, whose live-file counts must add up to the result;
    None when they do not (the caller reads the child in full)."""
    snapshot = table.snapshot_by_id(snapshot_id)
    if snapshot is None or snapshot.parent_snapshot_id != parent.snapshot_id:
        return None
    specs, schema = table.specs(), table.schema()
    manifests = snapshot_manifests(table.io, snapshot)
    added = added_files(table, snapshot_id) if added is None else added
    kept = [f for f in parent.files if f.key not in removed]
    files = [*kept, *added]
    live = sum((m.added_files_count or 0) + (m.existing_files_count or 0) for m in manifests)
    if live != len(files) or len(parent.files) - len(kept) != len(removed):
        return None
    child = SnapshotFiles(parent.table_uuid, snapshot_id, snapshot.sequence_number or 0, parent.format_version, schema, specs, files,
                          [_manifest_info(m) for m in manifests])
    CACHE.put((parent.table_uuid, snapshot_id), child)
    return child


class CorruptMetadataError(UnreadableMetadataError):
    """A manifest list or manifest that was read but does not decode (truncated, overwritten):
    the table is damaged. The message names the file; the decoder's words are its detail."""

    def __init__(self, kind: str, path: str, cause: Exception) -> None:
        detail = str(cause).splitlines()[0][:160] if str(cause) else ""
        kind_of = type(cause).__qualname__ if type(cause).__module__ == "builtins" else f"{type(cause).__module__}.{type(cause).__qualname__}"
        super().__init__(f"{kind} {path} is damaged: it does not decode as Avro ({kind_of}{': ' + detail if detail else ''})")


def _one_line(exc: OSError) -> str:
    """pyarrow's message, without its multi-line detail ("Failed to open local file 'x'")."""
    return str(exc).split(". Detail:")[0].splitlines()[0] if str(exc) else type(exc).__name__


def live_entries(io: FileIO, manifests: Iterable[ManifestFile]) -> Iterator[tuple[ManifestFile, list[ManifestEntry]]]:
    """Every live entry (data or delete file) of the manifests, sequence numbers inherited,
    by manifest. A manifest whose counts in the manifest list say it holds only deleted
    entries is not read (as Iceberg's planner skips it): a rewrite leaves one behind for
    every manifest it removed files from."""
    holding = [m for m in manifests if m.has_added_files() or m.has_existing_files()]
    yield from zip(holding, parallel_map(lambda m: read_manifest(io, m, discard_deleted=True), holding, lambda m: m.manifest_path))


def _files_by_manifest(files: SnapshotFiles) -> dict[str, list[TableFile]]:
    """The live files of each manifest the snapshot lists, for the manifests whose files are
    all known here: as many as the manifest list counts live in it. A snapshot derived from
    its parent (`child_snapshot_files`) names, for a file its commit moved into a rewritten
    manifest, the manifest it was read from: that rewritten manifest then counts files it is
    not given here, and is read again rather than taken as empty."""
    by_manifest: dict[str, list[TableFile]] = {m.path: [] for m in files.manifests}
    for f in files.files:
        if f.manifest in by_manifest:
            by_manifest[f.manifest].append(f)
    return {m.path: by_manifest[m.path] for m in files.manifests if m.live_files == len(by_manifest[m.path])}


def snapshot_manifests(io: FileIO, snapshot: Snapshot) -> list[ManifestFile]:
    """A snapshot's manifest list, read with the format-3 schema (a superset of v1 and v2),
    so each manifest's `first_row_id` is there when the writer set it."""
    if not snapshot.manifest_list:
        return []
    try:
        with AvroFile[ManifestFile](
            io.new_input(snapshot.manifest_list),
            MANIFEST_LIST_FILE_SCHEMAS[3],
            read_types={-1: ManifestFile, 508: PartitionFieldSummary},
            read_enums={517: ManifestContent},
        ) as reader:
            return list(reader)
    except OSError:
        raise  # storage: the callers say what could not be read
    except Exception as exc:  # noqa: BLE001 - whatever a damaged file makes the Avro decoder raise (EOFError, UnicodeDecodeError, ...)
        raise CorruptMetadataError("manifest list", snapshot.manifest_list, exc) from exc


def read_manifest(io: FileIO, manifest: ManifestFile, *, discard_deleted: bool) -> list[ManifestEntry]:
    """One manifest's entries, read with the v3 entry schema (a superset of v1 and v2),
    sequence numbers and first row ids inherited."""
    CACHE.manifests_read += 1
    try:
        with AvroFile[ManifestEntry](
            io.new_input(manifest.manifest_path),
            MANIFEST_ENTRY_SCHEMAS[3],
            read_types={-1: ManifestEntry, 2: DataFile},
            read_enums={0: ManifestEntryStatus, 101: FileFormat, 134: DataFileContent},
        ) as reader:
            read = list(reader)
    except OSError:
        raise
    except Exception as exc:  # noqa: BLE001 - as in snapshot_manifests
        raise CorruptMetadataError("manifest", manifest.manifest_path, exc) from exc
    entries = [_inherit_from_manifest(e, manifest) for e in read]
    _inherit_first_row_ids(entries, manifest)
    return [e for e in entries if not discard_deleted or e.status != ManifestEntryStatus.DELETED]


def _inherit_first_row_ids(entries: list[ManifestEntry], manifest: ManifestFile) -> None:
    """Row lineage as Iceberg's `ManifestReader.idAssigner` gives it: in a data manifest with
    a first row id, each live data file without one gets the next ids, in manifest order; in
    a data manifest without one (written before an upgrade to v3), no file has any."""
    if manifest.content != ManifestContent.DATA:
        return
    next_row_id = manifest[_MANIFEST_FIRST_ROW_ID] if len(manifest) > _MANIFEST_FIRST_ROW_ID else None
    for entry in entries:
        f = entry.data_file
        if len(f) <= _V3_FIELDS:
            return
        if next_row_id is None:
            f[_V3_FIELDS] = None
        elif entry.status != ManifestEntryStatus.DELETED and f[_V3_FIELDS] is None:
            f[_V3_FIELDS] = next_row_id
            next_row_id += f.record_count


def _manifest_info(manifest: ManifestFile) -> ManifestInfo:
    return ManifestInfo(
        path=manifest.manifest_path,
        length=manifest.manifest_length,
        content=Content.DATA if manifest.content == ManifestContent.DATA else Content.POSITION_DELETES,
        spec_id=manifest.partition_spec_id,
        live_files=(manifest.added_files_count or 0) + (manifest.existing_files_count or 0),
        added_snapshot_id=manifest.added_snapshot_id,
    )


def _table_file(entry: ManifestEntry, specs: dict[int, PartitionSpec], schema: Schema, manifest: str) -> TableFile:
    f = entry.data_file
    spec = specs[f.spec_id]
    partitioned = bool(spec.fields)
    extra = [f[i] if len(f) > i else None for i in range(_V3_FIELDS, _V3_FIELDS + 4)]
    content = Content(int(f.content))
    referenced = extra[1]
    if referenced is None and content == Content.POSITION_DELETES:
        referenced = _single_referenced_path(f)
    return TableFile(
        path=f.file_path,
        content=content,
        file_format=f.file_format.name,
        spec_id=f.spec_id,
        partition=tuple(f.partition[i] for i in range(len(f.partition))) if partitioned else (),
        partition_path=spec.partition_to_path(f.partition, schema) if partitioned else "",
        seq=int(entry.sequence_number or 0),
        file_seq=entry.file_sequence_number,
        records=f.record_count,
        size=f.file_size_in_bytes,
        stats=ColumnStats(
            value_counts=f.value_counts or {},
            null_counts=f.null_value_counts or {},
            nan_counts=f.nan_value_counts or {},
            lower=f.lower_bounds or {},
            upper=f.upper_bounds or {},
            sizes=f.column_sizes or {},
        ),
        equality_ids=tuple(f.equality_ids or ()),
        referenced_data_file=referenced,
        first_row_id=extra[0],
        content_offset=extra[2],
        content_size=extra[3],
        manifest=manifest,
    )


def _single_referenced_path(f: DataFile) -> str | None:
    """A v2 position delete file whose `file_path` bounds are equal names one data file
    (Iceberg's ContentFileUtil.referencedDataFile treats it as file-scoped)."""
    lower, upper = (f.lower_bounds or {}).get(DELETE_FILE_PATH_ID), (f.upper_bounds or {}).get(DELETE_FILE_PATH_ID)
    if lower is None or lower != upper:
        return None
    try:
        return bytes(lower).decode("utf-8")
    except UnicodeDecodeError:
        return None
