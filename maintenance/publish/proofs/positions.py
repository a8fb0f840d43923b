"""The positions proof (REWRITE merging the DVs of a data file that has two, which Iceberg's
planning refuses to read).

Every live entry but position deletes and DVs is the same on both sides (data files,
equality deletes: `spark/live_entries.py`), and each data file of the change's scope
(`publish/change_scope.py`) has the same positions deleted by the position deletes and DVs
that apply to it (`spark/deleted_positions.py`, by Iceberg's own delete loader, each delete
file on its own). A data file's rows are its rows less the positions deleted less the rows
its equality deletes match: the first and the last are the same on both sides, the
positions are compared, and outside the scope the deletes that apply are the same entries
(`change_scope`'s argument). So equal digests mean equal content, where a data file with
two DVs has for content its rows less the union of both (what a reader merging them
deletes); no data file is read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyiceberg.table import Table

from maintenance.publish.change_scope import change_scope
from maintenance.publish.proofs import Evidence
from maintenance.spark.deleted_positions import deleted_positions_digest
from maintenance.spark.fenced_table import Staged
from maintenance.spark.fingerprint import Fingerprint
from maintenance.spark.live_entries import live_entries_digest_without_position_deletes
from maintenance.table.delete_rule import DeleteIndex
from maintenance.table.files import snapshot_files

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def positions_evidence(spark: SparkSession, staged: Staged, table: Table, name: str) -> Evidence:
    """Per side, the digest of every other entry and of the positions each scope file has
    deleted; `table`: pyiceberg's, knowing the staged snapshot."""
    java, parent_id, staged_id = staged.view, staged.parent_id, staged.snapshot_id
    before, after = snapshot_files(table, parent_id), snapshot_files(table, staged_id)
    scope = change_scope(before, after)
    sides = []
    for snapshot_id, files, in_scope in ((parent_id, before, scope.before), (staged_id, after, scope.after)):
        entries, entries_digest = live_entries_digest_without_position_deletes(spark, java, snapshot_id)
        index = DeleteIndex(files)
        positions, digest = deleted_positions_digest(spark, java, snapshot_id, {f.path: index.position_deletes_for(f) for f in in_scope})
        sides.append(Fingerprint(name, snapshot_id, entries + positions, f"positions:{entries_digest}:{digest}"))
    return Evidence(sides[0], sides[1], table_bytes=scope.table_bytes)
