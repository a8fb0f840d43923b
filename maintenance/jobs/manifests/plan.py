"""MANIFESTS planning from the manifest list: which partition specs' manifests to rewrite.

Streaming writers add one or more manifests per commit, and every reader's planning opens
them all. Rewriting a spec's manifests with Iceberg's `rewriteManifests` Spark action sorts
their live entries by partition and writes them back in manifests of about
`commit.manifest.target-size-bytes` (8 MiB by default), each holding one range of
partitions, so a filtered scan opens few of them.

A spec is planned when its data manifests, or its delete manifests, are more than their
total size needs at the target size (the action's own estimate of what it writes) and at
least `min_manifests` of them were not written by an earlier MANIFESTS run. Manifests
whose entries are all deleted count too (the rewrite drops them). The second condition
makes the job settle: the action sizes its output by the manifests it reads, and streaming
writers' manifests shrink several times when rewritten, so its output is always "more
than needed" by its own estimate; rewriting it again would only repeat that. Right after a
MANIFESTS run there is nothing to do, until writers add manifests again.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from pyiceberg.table import Table

from maintenance.jobs.manifests.clusters import check_sort_by, sorted_clusters
from maintenance.jobs.manifests.options import ManifestsOptions
from maintenance.jobs.options import SIZE
from maintenance.jobs.spec import PlanInput
from maintenance.table.files import ManifestInfo, SnapshotFiles
from maintenance.table.health import DEFAULT_MANIFEST_TARGET, MANIFEST_TARGET_PROPERTY
from maintenance.table.marks import SUMMARY_JOB


@dataclass
class ManifestsPlan:
    snapshot_id: int | None
    target_size: int
    specs: dict[int, list[ManifestInfo]] = field(default_factory=dict)  # spec id -> its manifests, all rewritten together
    clusters: dict[int, dict[str, int]] = field(default_factory=dict)  # with sort_by: spec id -> partition path -> its new manifest run (`clusters`)

    @property
    def empty(self) -> bool:
        return not self.specs

    def nothing_to_do(self) -> str:
        return (f"no partition spec has more manifests than its entries need at the {SIZE.show(self.target_size)} target "
                "with enough of them new since the last MANIFESTS run (min_manifests)")

    def counters(self, detail: bool = False) -> dict[str, Any]:
        manifests = [m for group in self.specs.values() for m in group]
        counters: dict[str, Any] = {"manifests_planned": len(manifests), "manifest_bytes_planned": sum(m.length for m in manifests)}
        if detail:
            counters["spec_ids_planned"] = sorted(self.specs)
        return counters


def check_table(table: Table, options: ManifestsOptions) -> None:
    """Before a run (and its plan): `sort_by` names fields of the current spec, or exit 2."""
    check_sort_by(table, options.sort_by)


def plan(inputs: PlanInput, options: ManifestsOptions) -> ManifestsPlan:
    check_table(inputs.table, options)
    metadata = inputs.table.metadata
    target = int(metadata.properties.get(MANIFEST_TARGET_PROPERTY, DEFAULT_MANIFEST_TARGET))
    ours = {s.snapshot_id for s in metadata.snapshots if s.summary is not None and s.summary.get(SUMMARY_JOB) == "manifests"}
    return plan_manifests(inputs.files, target, options, written_by_manifests=ours)


def plan_manifests(files: SnapshotFiles, target_size: int, options: ManifestsOptions, written_by_manifests: Collection[int] = ()) -> ManifestsPlan:
    """`written_by_manifests`: the snapshots of earlier MANIFESTS runs (their manifests are not new)."""
    result = ManifestsPlan(files.snapshot_id if files.snapshot_id >= 0 else None, target_size)
    by_spec: dict[int, list[ManifestInfo]] = {}
    for manifest in files.manifests:
        by_spec.setdefault(manifest.spec_id, []).append(manifest)
    for spec_id, manifests in sorted(by_spec.items()):
        data, deletes = [m for m in manifests if not m.holds_deletes], [m for m in manifests if m.holds_deletes]
        if files.format_version >= 3 or options.sort_by:  # Iceberg's core API (`run`) rewrites data manifests only
            manifests, deletes = data, []
        if any(_worth_rewriting(kind, target_size, options.min_manifests, written_by_manifests) for kind in (data, deletes)):
            result.specs[spec_id] = manifests
            if options.sort_by:
                result.clusters[spec_id] = sorted_clusters(files, spec_id, options.sort_by, manifests, target_size)
    return result


def _worth_rewriting(manifests: list[ManifestInfo], target_size: int, min_manifests: int, written_by_manifests: Collection[int]) -> bool:
    needed = max(1, math.ceil(sum(m.length for m in manifests) / target_size))
    new = [m for m in manifests if m.added_snapshot_id not in written_by_manifests]
    return len(manifests) > needed and len(new) >= min_manifests
