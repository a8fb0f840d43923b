"""The retained-files proof: after files were deleted from storage (EXPIRE, ORPHANS), the
table still has everything it needs.

EXPIRE and ORPHANS make no data snapshot, so there is no staged snapshot to compare. What
their deletions must not have touched is checked once they are done:
- every file a retained snapshot needs exists (one listing of the location and the retained
  snapshots' manifests: `table/references.py`, `missing_files`); files first, so that a
  missing one is named, not met as a read error;
- the snapshot current before deleting names the same manifests in its manifest list
  (`references.manifest_list_digest`, whose docstring has the proof that, with the first
  check, this means the same live entries).
No data file is read, and manifests are read for their paths only.
"""

from __future__ import annotations

from pyiceberg.table import Table

from maintenance.publish.proofs import ContentChangedError, Verification
from maintenance.table.references import manifest_list_digest, missing_files


def manifests_named(table: Table, snapshot_id: int) -> str:
    """What the proof compares: the digest of the manifests the snapshot's manifest list names."""
    return manifest_list_digest(table, snapshot_id)


def prove_retained_files(table: Table, snapshot_id: int, before: str, verification: Verification) -> None:
    """The proof on `table` (loaded after deleting), `before` being `manifests_named` of the
    snapshot current before; recorded in `verification`, a failure raises `ContentChangedError`."""
    missing = missing_files(table)
    verification.fingerprint_before = before
    if missing:
        verification.verified = False
        raise ContentChangedError(f"content changed: {len(missing)} referenced files missing, needed by a retained snapshot (first: {missing[0]})")
    verification.fingerprint_after = manifests_named(table, snapshot_id)
    verification.verified = verification.fingerprint_after == before
    if not verification.verified:
        raise ContentChangedError(f"content changed: snapshot {snapshot_id} no longer names the manifests it named before deleting")
