"""MANIFESTS' `sort_by`: which new manifest each partition's entries go to.

Iceberg 1.11's `rewrite_manifests` takes `sort_by` partition fields (apache/iceberg#15467):
entries ordered by those fields first, so each new manifest holds one narrow range of them
and a scan filtering on them (a date, most often) opens few manifests. Iceberg 1.10 has no
such option, so MANIFESTS orders them itself and gives Iceberg's core `RewriteManifests` a
cluster per manifest to write (`clusterBy`): the spec's partitions are sorted by the chosen
fields, then by the rest of the partition, and cut into as many consecutive runs as
manifests of the target size would hold the spec's entries (by the old manifests' bytes, the
Spark action's estimate), each run of about as many data files. A partition is never cut in
two, so each new manifest covers one contiguous range of the chosen fields, and the ranges
of two manifests do not overlap beyond the partition where one ends and the next begins.

Clusters are keyed by the partition's path (`PartitionSpec.partitionToPath`, which
pyiceberg's `partition_to_path` spells the same way); an entry whose path is not among
them (a file a writer added after planning) goes to a cluster of its own. Which cluster an
entry lands in changes no entry: the verification's entries must be the same either way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pyiceberg.table import Table

from maintenance.errors import TableOptionError
from maintenance.table.files import ManifestInfo, SnapshotFiles


def sorted_clusters(files: SnapshotFiles, spec_id: int, sort_by: Sequence[str], manifests: Sequence[ManifestInfo], target_size: int) -> dict[str, int]:
    """Partition path -> the cluster (new manifest run) its data entries go to."""
    names = [field.name for field in files.specs[spec_id].fields]
    if not names:
        return {}
    chosen = [name for name in sort_by if name in names]  # an older spec may lack one (`check_table` holds the current spec to them all)
    order = [names.index(name) for name in chosen] + [i for i, name in enumerate(names) if name not in chosen]
    counts: dict[str, int] = {}
    keys: dict[str, tuple[Any, ...]] = {}
    for data in files.data:
        if data.spec_id == spec_id:
            counts[data.partition_path] = counts.get(data.partition_path, 0) + 1
            keys.setdefault(data.partition_path, tuple((data.partition[i] is None, data.partition[i]) for i in order))
    runs = max(1, math.ceil(sum(m.length for m in manifests if not m.holds_deletes) / target_size))
    per_run = sum(counts.values()) / runs
    clusters: dict[str, int] = {}
    run, in_run = 0, 0
    for path in sorted(counts, key=lambda p: (keys[p], p)):
        if in_run and in_run + counts[path] > per_run and run < runs - 1:
            run, in_run = run + 1, 0
        clusters[path] = run
        in_run += counts[path]
    return clusters


def check_sort_by(table: Table, sort_by: Sequence[str]) -> None:
    """The fields name partition fields of the table's current spec (a TableOptionError, exit 2, if not)."""
    names = [field.name for field in table.spec().fields]
    missing = [name for name in sort_by if name not in names]
    if missing:
        raise TableOptionError(f"sort_by {missing[0]}: the table's partition spec has no such field (its fields: {', '.join(names) or 'none'})")
