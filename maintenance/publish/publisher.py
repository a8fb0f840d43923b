"""Publishing a job's change: staged, verified, then made current, or nothing at all.

With verification on, a change never becomes current unverified:
1. **Stage.** The change's Iceberg operation is built and checked as a commit would be
   (its manifests written, its validations run, the fence passed), and kept in memory:
   the new snapshot reaches no catalog, so writers see nothing and no commit of theirs
   can be refused because of it (`spark/fenced_table.py` says why this matters on REST
   catalogs).
2. **Verify.** The staged snapshot is compared with its parent as the change's proof says
   (`publish/verifier.py`): the content fingerprint of exactly the data files the change
   can affect, or, for a rewrite of manifests, the live entries. The parent is the table
   as it was when the change was staged, so a writer committing meanwhile changes neither
   side.
3. **Publish.** If the table's current snapshot is still the parent, the verified snapshot
   itself is committed, main moving to it, by one compare-and-swap commit that the catalog
   refuses if main moves first (`FencedTable.publish_staged`).
   Otherwise the same change is built again and committed on the newest state, with the
   same validations (planning snapshot, concurrent deletes, the job's own validator). That
   commit is not fingerprinted again (a steady writer would otherwise starve every job):
   what makes it safe is that a verified change keeps its effect on any newer state whose
   new commits its validations accept. Each job's validator states which commits those
   are (`spark.validators`); for example MERGE refuses new partition-scoped equality
   deletes when it moves rows between partition specs. A data-file rewrite built again
   also carries over the position deletes writers committed meanwhile
   (`file_groups/rebase.py`, whose proof covers that part; it is tried again a few times,
   `commits_on_newer_state`, as a writer that deletes every few seconds may land again
   while it is built).

If the fingerprints differ, nothing is published: the run fails with "content changed",
and the table's metadata is exactly as it was. A staged snapshot that is not published
(it did not verify, or the change was built again) has its manifest list and its own
manifests deleted at once (no metadata can name them: they were never committed); the data
files the run wrote are left to orphan cleanup. Without verification the change is
committed directly, as one commit.

A change is a recipe (`build` returns a fresh, uncommitted operation each time it is
called), because Iceberg operations can be committed only once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import structlog

from maintenance import faults
from maintenance.errors import ConflictError
from maintenance.progress import Progress, no_progress
from maintenance.publish.proofs import DELETED_ROWS, ENTRIES, POSITIONS, ROWS, ContentChangedError, Evidence, Verification
from maintenance.spark.fenced_table import FencedTable, Staged
from maintenance.spark.jvm import JavaObject

log = structlog.get_logger(__name__)

Verify = Callable[[str, Staged, frozenset[str]], Evidence]  # (proof, the staged change, data files it says it removes): `publish/verifier.py`'s `Verifier.verify`
Discard = Callable[[list[str]], int]  # deletes files no metadata names, under the fence (`JobContext.discard_unpublished`)


@dataclass(frozen=True)
class Change:
    """One snapshot's worth of a job's work: an operation to commit (`build`), or something
    that commits by itself on the table it is given (`perform`: a Spark action)."""

    what: str  # for errors and logs: "MERGE", "CONVERT"
    build: Callable[[JavaObject], JavaObject] | None = None  # table -> a new, uncommitted snapshot-producing operation
    validate: Callable[[JavaObject], None] | None = None  # run on every commit attempt's base metadata
    perform: Callable[[JavaObject], None] | None = None  # table -> None, having committed one snapshot through it
    proof: str = ROWS  # how its staged snapshot is verified (`publish/proofs/`)
    removes: frozenset[str] = frozenset()  # the data files it says it removes: read early by verification, trusted for nothing
    commits_on_newer_state: int = 1  # how often it is committed on the newest state before a refusal stands (a `build` that adapts to it)


def _staged_counts(staged: Staged) -> dict[str, int]:
    """What a staged snapshot changes, as its summary says: files added and removed (data and
    delete files), manifests created and replaced (MANIFESTS)."""
    summary = staged.snapshot.summary() if staged.snapshot is not None else {}  # a scripted stand-in has no Java snapshot

    def total(*keys: str) -> int:
        return sum(int(summary.get(key) or 0) for key in keys)

    return {"files_added": total("added-data-files", "added-delete-files"), "files_removed": total("deleted-data-files", "removed-delete-files"),
            "manifests_written": total("manifests-created"), "manifests_replaced": total("manifests-replaced")}


def _commit(table: FencedTable, change: Change) -> int:
    if change.perform is not None:
        return table.perform(change.perform, change.what, validate=change.validate)
    assert change.build is not None
    return table.commit(change.build(table.java), change.what, validate=change.validate)


def _stage(table: FencedTable, change: Change) -> Staged:
    if change.perform is not None:
        return table.stage_performed(change.perform, change.what, validate=change.validate)
    assert change.build is not None
    return table.stage(change.build(table.java), change.what, validate=change.validate)


class Publisher:
    """Publishes a run's changes through its fenced table; verifies them when asked."""

    def __init__(self, table: FencedTable, *, verify: bool, verifier: Verify, verification: Verification | None = None,
                 progress: Progress = no_progress, discard: Discard = lambda paths: 0) -> None:
        self.table = table
        self.discard = discard
        self.verify = verify
        self.verifier = verifier
        self.progress = progress
        self.verification = verification if verification is not None else Verification()

    def publish(self, change: Change) -> int:
        """Make the change current; returns the snapshot id readers now see."""
        if not self.verify:
            return self._commit(change)
        staged = _stage(self.table, change)
        faults.point("staged")
        self.verification.staged.append(staged.snapshot_id)
        self.progress("staged", **_staged_counts(staged))
        evidence = self.verifier(change.proof, staged, change.removes)
        self.verification.add(evidence)
        if not evidence.same:
            self.verification.verified = False
            self._discard(staged)
            log.error("staged change does not keep the content; not published", staged=staged.snapshot_id, proof=change.proof,
                      before=evidence.before.to_json(), after=evidence.after.to_json(), difference=evidence.difference)
            what = {ROWS: "rows", ENTRIES: "entries", POSITIONS: "entries and positions", DELETED_ROWS: "deleted rows"}[change.proof]
            where = f" ({evidence.difference})" if evidence.difference else ""
            raise ContentChangedError(
                f"content changed: {evidence.before.rows} {what}/{evidence.before.fingerprint} before, {evidence.after.rows} {what}/"
                f"{evidence.after.fingerprint} in the staged snapshot {staged.snapshot_id}{where}; nothing was published"
            )
        self.verification.verified = self.verification.verified is not False
        self.progress("verified", verify_data_files=evidence.data_files)
        return self._make_current(change, staged)

    def _make_current(self, change: Change, staged: Staged) -> int:
        if self.table.publish_staged(staged, change.what, validate=change.validate):
            return staged.snapshot_id
        log.info("the table moved while the change was verified; applying it again on the newest state", staged=staged.snapshot_id)
        self._discard(staged)
        return self._commit(change)

    def _discard(self, staged: Staged) -> None:
        """The staged snapshot's own metadata files, never committed, go at once."""
        try:
            deleted = self.discard(staged.written_metadata())
        except Exception as exc:  # noqa: BLE001 (what is left is orphan cleanup's)
            log.warning("the staged change's metadata files are left for orphan cleanup", error=str(exc).splitlines()[0][:200])
            return
        log.debug("staged metadata discarded", files=deleted)

    def _commit(self, change: Change) -> int:
        """Commit on the newest state; a change whose `build` adapts to what landed meanwhile
        (`commits_on_newer_state`) is built and committed again after a refusal."""
        for attempt in range(1, change.commits_on_newer_state + 1):
            try:
                return _commit(self.table, change)
            except ConflictError:
                if attempt == change.commits_on_newer_state:
                    raise
                log.info("refused on the newest state; built again on what landed meanwhile", what=change.what, attempt=attempt)
        raise AssertionError("unreachable")
