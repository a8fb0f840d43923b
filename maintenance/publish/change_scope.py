"""Which data files a change can affect: all that verifying it needs to read.

A change takes snapshot P (its parent) to snapshot S by removing the file entries R and
adding the entries A (data files, delete files, deletion vectors; an entry is a file with
its content, data sequence number, spec and partition, so a file re-added with another
sequence number is in both). The change's **scope** is
- every data file of R and of A, and
- every live data file of P or S to which some delete file of R or A may apply, by the one
  rule (`table/delete_rule.py`: a superset of what Iceberg's planner applies).

**Why reading the scope on both sides proves the whole table.** Take a data file d outside
the scope. It is neither removed nor added, so it is live in P and in S with the same
entry: same path, same data sequence number, same partition. The deletes live in P are
those live in both plus R's; in S, those live in both plus A's. No delete of R or A may
apply to d (else d would be in the scope), and the rule never misses a pair Iceberg makes,
so the deletes Iceberg applies to d are the same subset of the common deletes in P and in
S: whether one applies depends only on that delete and d (scope, sequence numbers, key
statistics). One exception in the rule makes a third file matter: a deletion vector stops
v2 position deletes from applying to its data file; but a DV that changes is itself in R
or A and applies to that very file, which is then in the scope. So d's rows are the same
in P and S, and the rows of P and S differ at most in the scope's files. The content
fingerprint is a sum over rows, so P's equals S's exactly when the fingerprint of P's
scope files equals that of S's. When the scope is every data file (a global equality
delete changed), this is the full fingerprint; when it is empty (a dangling delete
dropped), nothing is read.
"""

from __future__ import annotations

from dataclasses import dataclass

from maintenance.table.delete_rule import DeleteIndex
from maintenance.table.files import Content, SnapshotFiles, TableFile

Entry = tuple[int, str, int, int, tuple[object, ...]]


def entry_of(f: TableFile) -> Entry:
    """What identifies a file's entry in a snapshot: content, record key, data sequence
    number, spec and partition (keyed as Java compares them)."""
    return (int(f.content), f.key, f.seq, f.spec_id, f.partition_key[1])


@dataclass(frozen=True)
class ChangeScope:
    """The data files a change's verification reads, on each side."""

    before: list[TableFile]  # data files of the parent to read (with every delete that applies to them)
    after: list[TableFile]  # data files of the staged snapshot to read
    removed: int  # entries the change removed (data and delete files)
    added: int  # entries it added
    table_bytes: int  # the data bytes of both snapshots, for the share read

    @property
    def data_files(self) -> int:
        return len(self.before) + len(self.after)

    @property
    def bytes(self) -> int:
        return sum(f.size for f in self.before) + sum(f.size for f in self.after)

    @property
    def share(self) -> float:
        """The part of both snapshots' data bytes the verification reads."""
        return self.bytes / self.table_bytes if self.table_bytes else 0.0


def change_scope(before: SnapshotFiles, after: SnapshotFiles) -> ChangeScope:
    """The scope of the change from `before` (P) to `after` (S); see the module docstring."""
    in_before = {entry_of(f): f for f in before.files}
    in_after = {entry_of(f): f for f in after.files}
    removed = [f for key, f in in_before.items() if key not in in_after]
    added = [f for key, f in in_after.items() if key not in in_before]
    scope = {entry_of(f) for f in (*removed, *added) if f.content == Content.DATA}
    for files, changed in ((before, removed), (after, added)):
        deletes = [f for f in changed if f.content != Content.DATA]
        if deletes:
            index = DeleteIndex(files, deletes)
            scope.update(entry_of(d) for d in files.data if index.deletes_for(d))
    return ChangeScope(
        before=[f for f in before.data if entry_of(f) in scope],
        after=[f for f in after.data if entry_of(f) in scope],
        removed=len(removed),
        added=len(added),
        table_bytes=sum(f.size for f in before.data) + sum(f.size for f in after.data),
    )
