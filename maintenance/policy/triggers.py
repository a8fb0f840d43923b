"""The health measures a policy's triggers compare against thresholds.

Each is computed from `health` alone (metadata, no Spark). A job with triggers is due
when any one of them reaches its threshold.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from maintenance.durations import format_duration
from maintenance.table.health import TableHealth
from maintenance.units import format_seconds


@dataclass(frozen=True)
class Measure:
    name: str
    read: Callable[[TableHealth], float]
    duration: bool = False  # thresholds written as durations (e.g. 5d), compared in seconds
    help: str = ""
    size: bool = False  # thresholds written as sizes (e.g. 64MiB), compared in bytes
    at_most: bool = False  # reached when the value falls to the threshold or below (e.g. an average file size)

    def reached(self, value: float, threshold: float) -> bool:
        return value <= threshold if self.at_most else value >= threshold


def _delete_ratio(h: TableHealth) -> float:
    return (h.position_delete_records + h.equality_delete_records + h.deletion_vector_records) / max(1, h.data_records)


def _statistics_stale_ratio(h: TableHealth) -> float:
    """Rows changed since the newest statistics (since the first snapshot when there are
    none), as a share of the table's rows."""
    return h.rows_changed_since_statistics / max(1, h.data_records)


def _position_files_per_data_file(h: TableHealth) -> float:
    ratios = [p.position_delete_files / max(1, p.data_files) for p in h.partitions if p.position_delete_files]
    return max(ratios, default=0.0)


MEASURES: dict[str, Measure] = {
    m.name: m
    for m in (
        Measure("equality_delete_files", lambda h: h.equality_delete_files, help="equality delete files in the table"),
        Measure("equality_delete_records", lambda h: h.equality_delete_records),
        Measure("position_delete_files", lambda h: h.position_delete_files),
        Measure("position_delete_records", lambda h: h.position_delete_records),
        Measure("position_delete_files_per_data_file", _position_files_per_data_file, help="worst partition's position delete files per data file"),
        Measure("deletion_vectors", lambda h: h.deletion_vectors, help="format 3: data files with a deletion vector"),
        Measure("deletion_vector_records", lambda h: h.deletion_vector_records, help="format 3: positions the deletion vectors delete"),
        Measure("puffin_files", lambda h: h.deletion_vector_files,
                help="format 3: Puffin files holding the deletion vectors (health's deletion_vector_files); a reader opens each"),
        Measure("dangling_deletion_vectors", lambda h: h.dangling_deletion_vectors,
                help="format 3: deletion vectors whose data file is no longer live (REWRITE drops them)"),
        Measure("duplicate_deletion_vectors", lambda h: h.duplicate_deletion_vectors,
                help="format 3: deletion vectors beyond the one a data file may have (REWRITE merges them)"),
        Measure("delete_ratio", _delete_ratio, help="delete records / data records"),
        Measure("small_files", lambda h: h.small_data_files),
        Measure("data_files", lambda h: h.data_files),
        Measure("avg_data_file_bytes", lambda h: h.avg_data_file_bytes if h.data_files > 1 else float("inf"), size=True, at_most=True,
                help="average data file size, reached when at or below the threshold (tables with more than one data file)"),
        Measure("manifests", lambda h: h.manifests, help="manifests the current snapshot lists (data and delete)"),
        Measure("small_manifests", lambda h: h.small_manifests, help="manifests below 75% of commit.manifest.target-size-bytes"),
        Measure("snapshots", lambda h: h.snapshots),
        Measure("oldest_snapshot_age", lambda h: h.oldest_snapshot_age_s or 0.0, duration=True),
        Measure("metadata_files", lambda h: h.metadata_files),
        Measure("statistics_stale_ratio", _statistics_stale_ratio,
                help="rows added or deleted since the newest snapshot with statistics (or since the first snapshot), over the table's rows"),
    )
}


def fired(triggers: dict[str, float], health: TableHealth) -> list[str]:
    """The triggers reached, as reasons (`equality_delete_files 12 >= 1`)."""
    return [text for reached, text in compared(triggers, health) if reached]


def not_reached(triggers: dict[str, float], health: TableHealth) -> list[str]:
    """The triggers not reached, each value against its threshold (`equality_delete_files 3 < 10`):
    why a job is not due, in numbers an operator can weigh against the policy."""
    return [text for reached, text in compared(triggers, health) if not reached]


def compared(triggers: dict[str, float], health: TableHealth) -> list[tuple[bool, str]]:
    """Each trigger: whether it is reached, and its value against its threshold."""
    out = []
    for name, threshold in triggers.items():
        measure = MEASURES[name]
        value = measure.read(health)
        reached = measure.reached(value, threshold)
        if reached:
            sign = "<=" if measure.at_most else ">="
        else:
            sign = ">" if measure.at_most else "<"
        if measure.duration:  # as policies write them: `oldest_snapshot_age 12m45s < 5d`
            shown, limit = format_seconds(value), format_duration(threshold)
        else:
            shown, limit = (_fmt(value) if math.isfinite(value) else "n/a"), _fmt(threshold)  # n/a: avg_data_file_bytes of one data file
        out.append((reached, f"{name} {shown} {sign} {limit}"))
    return out


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.3g}"
