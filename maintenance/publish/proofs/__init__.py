"""Every proof icemaint verifies an effect by, one module each, and what they share.

A change says how its staged snapshot is proved (`Change.proof`); the verifier
(`publish/verifier.py`) runs that proof on the staged snapshot and its parent:
- **rows** (MERGE, COMPACT; `rows.py`): the content fingerprint of the data files the
  change can affect (`publish/change_scope.py`), on both sides;
- **entries** (MANIFESTS; `entries.py`): the multiset of live entries is the same;
- **positions** (REWRITE merging a data file's two DVs; `positions.py`): every other entry
  the same, and each scope file with the same positions deleted;
- **deleted rows** (CONVERT, REWRITE; `deleted_rows.py`): each scope file with the same
  rows deleted.
Effects that make no data snapshot are proved by the run's context right after them:
- **retained files** (EXPIRE, ORPHANS, after deleting files; `retained_files.py`): every
  file a retained snapshot needs exists, and the snapshot current before names the same
  manifests;
- **entries kept** (STATS, after an action that registers metadata; `entries.py`): the
  snapshot current before reads the same live entries afterwards.
Each module states its proof's premises. None reads a data file it does not need: a proof
costs what the change costs, not what the table does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from maintenance.errors import IcemaintError
from maintenance.spark.fingerprint import Fingerprint

ROWS, ENTRIES, POSITIONS, DELETED_ROWS = "rows", "entries", "positions", "deleted rows"  # a change's `proof`


class ContentChangedError(IcemaintError):
    """A staged change, or an effect, does not keep the table's content: it was not published
    (or, for deleted files, the run says what it found)."""


@dataclass(frozen=True)
class Evidence:
    """What one verification compared, and what it read to do so."""

    before: Fingerprint  # of the parent
    after: Fingerprint  # of the staged snapshot
    data_files: int = 0  # data files read, both sides
    bytes: int = 0  # their bytes
    table_bytes: int = 0  # the data bytes of both snapshots
    difference: str | None = None  # where the sides differ, when the proof can say

    @property
    def same(self) -> bool:
        return self.before.same_content(self.after) and self.difference is None


@dataclass
class Verification:
    """What verification said across every change and effect of a run, and what it read
    (the run's record)."""

    fingerprint_before: str | None = None  # of the first change's parent
    fingerprint_after: str | None = None  # of the last staged snapshot
    verified: bool | None = None
    staged: list[int] = field(default_factory=list)
    data_files: int = 0  # data files read to verify, both sides of every change
    bytes: int = 0
    table_bytes: int = 0  # the data bytes of both snapshots of every change

    def add(self, evidence: Evidence) -> None:
        if self.fingerprint_before is None:
            self.fingerprint_before = evidence.before.fingerprint
        self.fingerprint_after = evidence.after.fingerprint
        self.data_files += evidence.data_files
        self.bytes += evidence.bytes
        self.table_bytes += evidence.table_bytes

    def counters(self) -> dict[str, float | int]:
        """What it read: the data files, their bytes, and their share of the table's (both sides)."""
        share = round(self.bytes / self.table_bytes, 4) if self.table_bytes else 0.0
        return {"verify_data_files": self.data_files, "verify_bytes": self.bytes, "verify_share": share}
