"""What delete files and small files cost a reader, in bytes it handles beyond a clean table's.

One model for the planner's ranking of tables (`reader_cost`) and for the ranking of a
rewrite's file groups (`jobs.file_groups.plan`). Its units are Spark's own: an opened file
costs Spark's open cost (`spark.sql.files.openCostInBytes`, 4 MiB), and every delete file a
data file's scan task applies costs that task an open plus its entries (each position or key
is read and held: `DELETE_RECORD_BYTES` apiece), once per data file it applies to.

A clean table is the same bytes in `TARGET_FILE_BYTES` files, and every scan also pays a
fixed cost (planning, launching tasks) worth `SCAN_OVERHEAD_BYTES`: one full target-sized
file. Without that floor a table of a few hundred KiB in 1,700 files read "×1,695 per scan",
the ratio of its file count, where a reader sees far less. Measured here (Spark local[2],
local disk, one run of medians of 5): one 750-byte file scanned in 0.17 s, the same rows in
1,000 files of 900 bytes in 3.75 s (×22.6); the model says ×31 for that table. The
amplification is therefore a reader's slowdown to within a small factor on any table size,
and `extra_opens` and `delete_records` say what it is made of.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from maintenance.table.health import TableHealth

OPEN_COST_BYTES = 4 * 1024 * 1024  # spark.sql.files.openCostInBytes
DELETE_RECORD_BYTES = 48  # a position (path, pos) or key held per applicable data file
TARGET_FILE_BYTES = 128 * 1024 * 1024
SCAN_OVERHEAD_BYTES = TARGET_FILE_BYTES  # a scan's fixed cost, whatever the table's size (module docstring)


def deletes_read_cost(files: int, records: int) -> float:
    """What delete files (or deletion vectors) cost the scan tasks they apply to: `files`
    and `records` counted once per data file each applies to."""
    return files * OPEN_COST_BYTES + records * DELETE_RECORD_BYTES


@dataclass(frozen=True)
class ReaderCost:
    """A full scan's cost beyond a clean table's (module docstring)."""

    extra_bytes: float  # beyond a clean table's, per full scan, in Spark's byte-equivalents
    amplification: float  # (clean + extra) / clean, clean including the scan's fixed cost
    extra_opens: int = 0  # files a scan opens beyond a clean table's: delete files per data file, and small files
    delete_records: int = 0  # delete entries a scan reads, per data file they apply to

    def to_json(self) -> dict[str, float]:
        return {"extra_mib_per_scan": round(self.extra_bytes / 2**20, 1), "read_amplification": round(self.amplification, 2),
                "extra_opens_per_scan": self.extra_opens, "delete_records_per_scan": self.delete_records}


NO_COST = ReaderCost(0.0, 1.0)


def reader_cost(health: TableHealth) -> ReaderCost:
    """Every delete file a data file's task opens costs an open and the entries it reads
    (equality keys are also held in memory), counted for every data file it applies to
    (health's `*_applied` counters, by the delete rule's scope); a deletion vector is read by
    the one task of its data file."""
    opens = records = 0
    for p in health.partitions or []:
        opens += p.position_deletes_applied + p.equality_deletes_applied + p.deletion_vectors
        records += p.position_delete_records_applied + p.equality_delete_records_applied + p.deletion_vector_records
    ideal_files = max(1, -(-health.data_bytes // TARGET_FILE_BYTES))
    opens += max(0, health.data_files - ideal_files)
    extra = float(opens * OPEN_COST_BYTES + records * DELETE_RECORD_BYTES)
    clean = health.data_bytes + ideal_files * OPEN_COST_BYTES + SCAN_OVERHEAD_BYTES
    return ReaderCost(extra_bytes=extra, amplification=(clean + extra) / clean, extra_opens=opens, delete_records=records)


# What a job relieves readers of (`JobSpec.relieves`): the part of a scan's extra cost it removes.
REWRITTEN = "deletes and small files"  # every delete file, and the data files beyond a clean scan's (MERGE rewrites them into target-sized files)
EQUALITY_DELETES = "equality deletes"  # the keys (CONVERT turns them into positions)
POSITION_DELETES = "position deletes"  # position delete files beyond one per data file (REWRITE)
SMALL_FILES = "small files"  # data files beyond a clean table's (COMPACT)
# Byte-equivalents a reader handles per second, to state a scan's extra cost in seconds: the
# module docstring's measurement (1,000 files of 900 bytes scanned 3.58 s slower than one,
# 999 extra opens of 4 MiB: 1.17e9 per second).
READER_BYTES_PER_S = 1.17e9


@dataclass(frozen=True)
class ScanShape:
    """What one scan reads: its data files and bytes, and the delete files its tasks apply
    (each counted once per data file it applies to, as Iceberg's `ScanReport` and the health's
    `*_applied` counters count them)."""

    data_files: float
    data_bytes: float
    equality_delete_files: float
    position_delete_files: float  # position delete files and deletion vectors

    @classmethod
    def full_scan(cls, health: TableHealth) -> ScanShape:
        """A scan of the whole table, from its health."""
        parts = health.partitions or []
        return cls(data_files=health.data_files, data_bytes=health.data_bytes,
                   equality_delete_files=sum(p.equality_deletes_applied for p in parts),
                   position_delete_files=sum(p.position_deletes_applied + p.deletion_vectors for p in parts))


@dataclass(frozen=True)
class DeleteWeights:
    """Entries an applied delete file holds on average, by kind: what the model charges each
    delete file a scan applies beyond its open (a scan report counts files, not entries)."""

    equality_records: float
    position_records: float  # position delete files and deletion vectors

    @classmethod
    def of(cls, health: TableHealth) -> DeleteWeights:
        parts = health.partitions or []
        return cls(_per_file(sum(p.equality_delete_records_applied for p in parts), sum(p.equality_deletes_applied for p in parts)),
                   _per_file(sum(p.position_delete_records_applied + p.deletion_vector_records for p in parts),
                             sum(p.position_deletes_applied + p.deletion_vectors for p in parts)))


def relieved_bytes(relief: str, scan: ScanShape, weights: DeleteWeights) -> float:
    """What a scan of this shape costs beyond a clean table's that a job relieving `relief`
    removes, by this module's model: an open per file, and each delete file's entries."""
    equality = scan.equality_delete_files * (OPEN_COST_BYTES + weights.equality_records * DELETE_RECORD_BYTES)
    position = scan.position_delete_files * (OPEN_COST_BYTES + weights.position_records * DELETE_RECORD_BYTES)
    if relief == REWRITTEN:
        return equality + position + relieved_bytes(SMALL_FILES, scan, weights)
    if relief == EQUALITY_DELETES:
        return scan.equality_delete_files * weights.equality_records * DELETE_RECORD_BYTES  # keys held become positions read: the opens stay
    if relief == POSITION_DELETES:
        return max(0.0, scan.position_delete_files - scan.data_files) * OPEN_COST_BYTES
    if relief == SMALL_FILES:
        return max(0.0, scan.data_files - max(1.0, -(-scan.data_bytes // TARGET_FILE_BYTES))) * OPEN_COST_BYTES
    raise ValueError(f"unknown relief '{relief}'")


def scan_extra_bytes(scan: ScanShape, weights: DeleteWeights) -> float:
    """A scan's whole cost beyond a clean table's: its delete files and its small files (of
    a full scan: `reader_cost`'s `extra_bytes`)."""
    return relieved_bytes(REWRITTEN, scan, weights)


def _per_file(records: int, files: int) -> float:
    return records / files if files else 0.0
