"""Which snapshots expiry removes: Iceberg's retention rules, computed in Python, plus the
writers' checkpoints.

Iceberg's rules (RemoveSnapshots): a ref older than its max-ref-age goes (never `main`);
a tag keeps its snapshot; a branch keeps its newest `min-snapshots-to-keep` ancestors and
every ancestor younger than `max-snapshot-age-ms` (the branch's own settings first, then
the table's `history.expire.*` properties or the policy); a snapshot no ref reaches is kept
while younger than the table's max age.

Checkpoints: the newest snapshot carrying each configured summary key (Flink's
`flink.max-committed-checkpoint-id`, a sink's frontier) is kept, and so is every snapshot
between each branch head and it, because sinks find their resume point by walking parents
from the head (Flink's `getMaxCommittedCheckpointId`): a gap in the chain hides it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pyiceberg.table import Table
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.refs import SnapshotRef, SnapshotRefType
from pyiceberg.table.snapshots import Snapshot

from maintenance.durations import format_duration
from maintenance.errors import UsageError
from maintenance.jobs.expire.files import (
    LeftBehind,
    files_to_delete,
    left_behind,
    metadata_folder_listing,
    old_metadata_versions,
    retained_references,
    statistics_of,
)
from maintenance.jobs.expire.options import ExpireOptions
from maintenance.jobs.file_removal.candidates import named
from maintenance.jobs.spec import PlanInput

MAX_SNAPSHOT_AGE_PROPERTY = "history.expire.max-snapshot-age-ms"
MIN_SNAPSHOTS_PROPERTY = "history.expire.min-snapshots-to-keep"
MAX_REF_AGE_PROPERTY = "history.expire.max-ref-age-ms"
DEFAULT_MAX_SNAPSHOT_AGE_MS = 5 * 24 * 3600 * 1000  # Iceberg's default
DEFAULT_MIN_SNAPSHOTS = 1
MAIN = "main"


@dataclass
class ExpiryPlan:
    snapshot_id: int | None  # the current snapshot when planned
    snapshot_ids: list[int]  # to expire, oldest first
    refs_to_remove: list[str]
    refs: dict[str, int]  # every ref the plan was made against: name -> snapshot id
    kept_for_checkpoints: dict[str, int] = field(default_factory=dict)  # key -> newest carrier
    max_snapshot_age_ms: int = DEFAULT_MAX_SNAPSHOT_AGE_MS
    min_snapshots_to_keep: int = DEFAULT_MIN_SNAPSHOTS
    options: ExpireOptions = field(default_factory=ExpireOptions)
    old_metadata: list[str] = field(default_factory=list)  # metadata.json versions older than the log
    left_behind: LeftBehind = field(default_factory=LeftBehind)  # removed earlier, files not all deleted
    table: Table | None = field(default=None, repr=False, compare=False)  # to list what a dry run would delete

    @property
    def empty(self) -> bool:
        return not self.snapshot_ids and not self.refs_to_remove and not self.old_metadata and not self.left_behind.snapshots

    def nothing_to_do(self) -> str:
        kept = f", {len(self.kept_for_checkpoints)} kept for writers' checkpoints" if self.kept_for_checkpoints else ""
        return (f"no snapshot is older than {format_duration(self.max_snapshot_age_ms / 1000)} beyond the newest "
                f"{self.min_snapshots_to_keep} of each branch{kept}; no ref past its max age, no old metadata file, nothing left behind")

    def counters(self, detail: bool = False) -> dict[str, Any]:
        planned = {"snapshots_planned": len(self.snapshot_ids), "checkpoint_snapshots_kept": len(self.kept_for_checkpoints),
                   "checkpoint_snapshot_ids": self.kept_for_checkpoints, "snapshots_left_behind": len(self.left_behind.snapshots)}
        if not detail or self.empty or self.table is None:
            return planned
        table, planned_ids = self.table, set(self.snapshot_ids)  # a dry run says what it would delete
        expired = [s for s in table.metadata.snapshots if s.snapshot_id in planned_ids]
        budget = self.options.memory_budget
        retained = retained_references(table, [s for s in table.metadata.snapshots if s.snapshot_id not in planned_ids], budget // 2)
        try:
            statistics = [*statistics_of(table.metadata, planned_ids), *self.left_behind.statistics]
            deletable = files_to_delete(table, [*expired, *self.left_behind.snapshots], statistics, retained, self.old_metadata, budget // 4)
            try:
                return {**planned, **deletable.counters(), "snapshot_ids_to_expire": self.snapshot_ids, **named(deletable.paths(), deletable.count)}
            finally:
                deletable.close()
        finally:
            retained.keys.close()


def plan(inputs: PlanInput, options: ExpireOptions) -> ExpiryPlan:
    """The snapshots to expire, from the metadata; from one listing of the metadata folder,
    the metadata.json versions older than the log still lists and the snapshots an earlier,
    interrupted expiry left files of (`files.left_behind`), which expiry deletes too."""
    expiry = plan_expiry(inputs.table.metadata, options, inputs.now_ms)
    expiry.table = inputs.table
    listing = metadata_folder_listing(inputs.table)
    expiry.old_metadata = old_metadata_versions(inputs.table, listing)
    expiry.left_behind = left_behind(inputs.table, listing)
    return expiry


def plan_expiry(metadata: TableMetadata, options: ExpireOptions, now_ms: int) -> ExpiryPlan:
    props = metadata.properties
    max_age = int(options.max_snapshot_age * 1000) if options.max_snapshot_age is not None else _int(props, MAX_SNAPSHOT_AGE_PROPERTY, DEFAULT_MAX_SNAPSHOT_AGE_MS)
    min_keep = options.min_snapshots_to_keep if options.min_snapshots_to_keep is not None else max(1, _int(props, MIN_SNAPSHOTS_PROPERTY, DEFAULT_MIN_SNAPSHOTS))
    max_ref_age = _int(props, MAX_REF_AGE_PROPERTY, None)
    by_id = {s.snapshot_id: s for s in metadata.snapshots}

    kept_refs = {name: ref for name, ref in metadata.refs.items() if _ref_kept(name, ref, by_id, now_ms, max_ref_age)}
    retained: set[int] = set()
    reachable: set[int] = set()  # from some kept ref
    for ref in kept_refs.values():
        if ref.snapshot_ref_type == SnapshotRefType.TAG:
            retained.add(ref.snapshot_id)
            reachable.add(ref.snapshot_id)
            continue
        chain = _ancestors(ref.snapshot_id, by_id)
        reachable.update(s.snapshot_id for s in chain)
        branch_min = ref.min_snapshots_to_keep if ref.min_snapshots_to_keep is not None else min_keep
        branch_cutoff = now_ms - (ref.max_snapshot_age_ms if ref.max_snapshot_age_ms is not None else max_age)
        for position, snapshot in enumerate(chain):
            if position < branch_min or snapshot.timestamp_ms >= branch_cutoff:
                retained.add(snapshot.snapshot_id)
            else:
                break
        retained.update(_chain_to_checkpoints(chain, options.all_checkpoint_keys))
    retained.update(s.snapshot_id for s in metadata.snapshots if s.snapshot_id not in reachable and s.timestamp_ms >= now_ms - max_age)

    newest = _newest_carriers(metadata.snapshots, options.all_checkpoint_keys)
    retained.update(newest.values())
    if metadata.current_snapshot_id is not None:
        retained.add(metadata.current_snapshot_id)
    expire = sorted((s for s in metadata.snapshots if s.snapshot_id not in retained), key=lambda s: (s.timestamp_ms, s.sequence_number or 0))
    return ExpiryPlan(
        snapshot_id=metadata.current_snapshot_id,
        snapshot_ids=[s.snapshot_id for s in expire],
        refs_to_remove=sorted(set(metadata.refs) - set(kept_refs)),
        refs={name: ref.snapshot_id for name, ref in metadata.refs.items()},
        kept_for_checkpoints=newest,
        max_snapshot_age_ms=max_age,
        min_snapshots_to_keep=min_keep,
        options=options,
    )


def _ref_kept(name: str, ref: SnapshotRef, by_id: dict[int, Snapshot], now_ms: int, table_max_ref_age: int | None) -> bool:
    if name == MAIN:
        return True
    snapshot = by_id.get(ref.snapshot_id)
    if snapshot is None:
        return False  # dangling: Iceberg drops it too
    max_ref_age = ref.max_ref_age_ms if ref.max_ref_age_ms is not None else table_max_ref_age
    return max_ref_age is None or now_ms - snapshot.timestamp_ms <= max_ref_age


def _ancestors(snapshot_id: int, by_id: dict[int, Snapshot]) -> list[Snapshot]:
    """The snapshot and its parents, newest first, until a parent is missing."""
    chain, seen = [], set()
    current = by_id.get(snapshot_id)
    while current is not None and current.snapshot_id not in seen:
        chain.append(current)
        seen.add(current.snapshot_id)
        current = by_id.get(current.parent_snapshot_id) if current.parent_snapshot_id is not None else None
    return chain


def _carries(snapshot: Snapshot, key: str) -> bool:
    return snapshot.summary is not None and snapshot.summary[key] is not None


def _chain_to_checkpoints(chain: list[Snapshot], keys: tuple[str, ...]) -> set[int]:
    """From the head down to the newest ancestor carrying each key, inclusive."""
    depth = -1
    for key in keys:
        for position, snapshot in enumerate(chain):
            if _carries(snapshot, key):
                depth = max(depth, position)
                break
    return {s.snapshot_id for s in chain[: depth + 1]}


def _newest_carriers(snapshots: list[Snapshot], keys: tuple[str, ...]) -> dict[str, int]:
    newest: dict[str, int] = {}
    for key in keys:
        carriers = [s for s in snapshots if _carries(s, key)]
        if carriers:
            newest[key] = max(carriers, key=lambda s: (s.sequence_number or 0, s.timestamp_ms)).snapshot_id
    return newest


def _int(props: dict[str, str], key: str, default: int | None) -> int | None:
    value = props.get(key)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError as exc:
        raise UsageError(f"table property {key}={value!r} is not a number") from exc
