"""The entries proofs: a change or an action that must leave every live entry alone.

- **entries** (MANIFESTS): no row can move when only manifests are rewritten, so the
  multiset of live entries of the staged snapshot must be its parent's;
- **entries kept** (STATS): an action that registers metadata by itself and makes no
  snapshot (a statistics file) must leave the snapshot that was current before reading the
  same live entries afterwards (a writer's later snapshots are no damage).
Both read the entries by Iceberg's own manifest readers (`spark/live_entries.py` says what
an entry is and how it is hashed); no data file is read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from maintenance.publish.proofs import ContentChangedError, Evidence, Verification
from maintenance.spark.fingerprint import Fingerprint
from maintenance.spark.jvm import JavaObject
from maintenance.spark.live_entries import live_entries_digest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def entries_evidence(spark: SparkSession, table: JavaObject, name: str, parent_id: int, staged_id: int) -> Evidence:
    """The entries proof of a staged snapshot: each side's live entries, read through `table`
    (the staged change's view)."""
    return Evidence(*(Fingerprint(name, snapshot_id, *live_entries_digest(spark, table, snapshot_id)) for snapshot_id in (parent_id, staged_id)))


def live_entries(spark: SparkSession, table: JavaObject, snapshot_id: int) -> str:
    """A snapshot's live entries as the run record keeps them: `count/digest`."""
    count, digest = live_entries_digest(spark, table, snapshot_id)
    return f"{count}/{digest}"


def prove_entries_kept(verification: Verification, before: str, after: Callable[[], str], snapshot_id: int, what: str) -> None:
    """The entries-kept proof of an action: `before` and `after()` are the snapshot's
    `live_entries` read before and after it; recorded in `verification`, and a difference
    raises `ContentChangedError`."""
    verification.fingerprint_before = before
    verification.fingerprint_after = after()
    same = verification.fingerprint_after == before
    verification.verified = same and verification.verified is not False
    if not same:
        raise ContentChangedError(f"content changed: after {what}, snapshot {snapshot_id} no longer reads the live entries it read before")
