"""CONVERT planning, from metadata alone: which equality deletes, which data files to scan.

An equality delete E with data sequence number s applies to the live data files with data
sequence number < s in E's partition (same spec and values), or in every partition when
E's spec is unpartitioned. Column bounds prune files no key of E can match; a NULL in a
key column matches NULL, so null counts keep such files in.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pyiceberg.conversions import from_bytes
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.types import IcebergType

from maintenance.errors import UsageError
from maintenance.jobs.files import FileRef, PartitionKey, live_file_refs

@dataclass(frozen=True)
class EqualityDelete(FileRef):
    equality_ids: tuple[int, ...] = ()
    is_global: bool = False


@dataclass
class ConvertPlan:
    snapshot_id: int
    deletes: list[EqualityDelete]
    targets: list[FileRef]  # data files some planned delete may match
    candidates: dict[str, list[str]] = field(default_factory=dict)  # delete path -> target paths

    @property
    def empty(self) -> bool:
        return not self.deletes


class _Bounds:
    """Decoded bounds and null counts of one file, for the key fields we need."""

    def __init__(self, data_file: DataFile, types: dict[int, IcebergType]) -> None:
        self.lower: dict[int, Any] = {}
        self.upper: dict[int, Any] = {}
        self.nulls = dict(data_file.null_value_counts or {})
        for fid, ftype in types.items():
            for source, target in ((data_file.lower_bounds, self.lower), (data_file.upper_bounds, self.upper)):
                raw = (source or {}).get(fid)
                if raw is not None:
                    try:
                        target[fid] = from_bytes(ftype, raw)
                    except Exception:  # an undecodable bound only means no pruning
                        pass


def _may_match(delete: _Bounds, data: _Bounds, field_ids: Sequence[int]) -> bool:
    """Whether any key of the delete file can equal a key of the data file (conservative)."""
    for fid in field_ids:
        delete_nulls, data_nulls = delete.nulls.get(fid), data.nulls.get(fid)
        if (delete_nulls is None or delete_nulls > 0) and (data_nulls is None or data_nulls > 0):
            continue  # NULL may meet NULL
        lo_d, hi_d, lo_f, hi_f = delete.lower.get(fid), delete.upper.get(fid), data.lower.get(fid), data.upper.get(fid)
        if None in (lo_d, hi_d, lo_f, hi_f):
            if lo_d is None and hi_d is None and delete_nulls is not None and delete_nulls > 0 and data_nulls == 0:
                return False  # the delete holds only NULLs here, the data none
            continue
        try:
            if hi_d < lo_f or hi_f < lo_d:
                return False
        except TypeError:
            continue
    return True


def plan_convert(table: Table, snapshot_id: int, *, partitions: Sequence[str] = ()) -> ConvertPlan:
    """Plan CONVERT at a snapshot, for the whole table or the given partition paths."""
    snapshot = table.snapshot_by_id(snapshot_id)
    if snapshot is None:
        raise UsageError(f"no snapshot {snapshot_id}")
    schema: Schema = table.schemas()[snapshot.schema_id] if snapshot.schema_id is not None else table.schema()
    wanted = set(partitions)

    deletes: list[tuple[EqualityDelete, DataFile]] = []
    data: list[tuple[FileRef, DataFile, str]] = []
    for ref, f in live_file_refs(table, snapshot):
        if f.content == DataFileContent.EQUALITY_DELETES:
            is_global = not table.specs()[f.spec_id].fields
            if wanted and (is_global or ref.partition_path not in wanted):
                continue  # a global delete can only be converted with the whole table
            _require_parquet(f, "equality delete")
            deletes.append((EqualityDelete(**vars(ref), equality_ids=tuple(f.equality_ids or ()), is_global=is_global), f))
        elif f.content == DataFileContent.DATA:
            data.append((ref, f, f.file_format.name))

    key_types = {fid: schema.find_field(fid).field_type for d, _ in deletes for fid in d.equality_ids}
    delete_bounds = {d.path: _Bounds(f, {fid: key_types[fid] for fid in d.equality_ids}) for d, f in deletes}
    by_partition: dict[PartitionKey, list[EqualityDelete]] = defaultdict(list)
    global_deletes: list[EqualityDelete] = []
    for d, _ in deletes:
        (global_deletes if d.is_global else by_partition[d.partition_key]).append(d)

    candidates: dict[str, list[str]] = {d.path: [] for d, _ in deletes}
    targets: list[FileRef] = []
    for ref, data_file, file_format in data:
        applicable = [d for d in (*by_partition.get(ref.partition_key, ()), *global_deletes) if d.seq > ref.seq]
        if not applicable:
            continue
        bounds = _Bounds(data_file, key_types)
        matching = [d for d in applicable if _may_match(delete_bounds[d.path], bounds, d.equality_ids)]
        if not matching:
            continue
        if file_format != FileFormat.PARQUET.name:
            raise UsageError(f"CONVERT reads Parquet data files only; {ref.path} is {file_format}")
        targets.append(ref)
        for d in matching:
            candidates[d.path].append(ref.path)
    return ConvertPlan(snapshot_id=snapshot_id, deletes=[d for d, _ in deletes], targets=targets, candidates=candidates)


def _require_parquet(data_file: DataFile, what: str) -> None:
    if data_file.file_format != FileFormat.PARQUET:
        raise UsageError(f"CONVERT reads Parquet files only; {what} {data_file.file_path} is {data_file.file_format.name}")
