"""Claiming a table without the JVM: a run that only deletes files (ORPHANS) writes its
epoch into the table's properties through pyiceberg, so it never starts Spark.

What the claim must guarantee (`spark/fenced_table.py` does the same in Java): the
property is written only while this run holds the lease, and never over a newer holder's
epoch. Here:
- before the commit, the lease is proven in the database (`Fence.before_commit`) and its
  proven time has not run out, and the table as loaded names no newer epoch (a newer one
  while we hold the lease means the state database was reset: ours moves past it,
  `Fence.advance_past`);
- at the commit, catalogs that commit in this process (SQL, Hive, Glue) check the
  requirement `_NoNewerEpoch` against the metadata they are about to replace and swap it
  only if it is still current, so an epoch written in between fails the commit (and the
  next attempt sees it and is fenced). A REST catalog checks only the requirements the
  protocol knows: there the table's uuid is asserted, and a newer holder could write its
  epoch between our proof and our commit only if our lease ran out in that instant, which
  the time check before it rules out but for a pause right there (as with the Java claim
  on a REST catalog, whose property updates also carry no base).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Literal

from pydantic import Field
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.table import Table
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.update import AssertTableUUID, SetPropertiesUpdate, ValidatableTableRequirement
from sqlalchemy.exc import SQLAlchemyError

from maintenance import faults
from maintenance.errors import CatalogUnavailableError, ConflictError
from maintenance.lease.fence import Fence, FencedError, newer_epoch_refusal
from maintenance.table.marks import EPOCH_PROPERTY, parse_epoch

ATTEMPTS = 5
PYICEBERG_WRITES_UP_TO = 2  # pyiceberg 0.12 refuses to write format-3 metadata ("Writing V3 is not yet supported")


def claims_without_jvm(table: Table) -> bool:
    """Whether pyiceberg can write this table's metadata: format 3 tables are claimed
    through the Java table (`spark/fenced_table.py`), which starts Spark."""
    return table.metadata.format_version <= PYICEBERG_WRITES_UP_TO


class _NoNewerEpoch(ValidatableTableRequirement):
    """The metadata a commit replaces names no epoch above ours (checked in this process)."""

    type: Literal["icemaint-no-newer-epoch"] = Field(default="icemaint-no-newer-epoch")
    epoch: int

    def validate(self, base_metadata: TableMetadata | None) -> None:
        if base_metadata is None:
            raise CommitFailedException("the table is gone")
        refusal = newer_epoch_refusal(parse_epoch(base_metadata.properties.get(EPOCH_PROPERTY)), self.epoch, "claim")
        if refusal is not None:
            raise refusal


def claim_table(load: Callable[[], Table], fence: Fence) -> None:
    """Write our epoch into the table unless it already names it (see the module docstring)."""
    fence.assert_held("claim")
    for _ in range(ATTEMPTS):
        if _claimed(load(), fence):
            faults.point("claimed")
            return
    raise ConflictError(f"claim table: {ATTEMPTS} attempts in a row lost a race with other commits")


def _claimed(table: Table, fence: Fence) -> bool:
    """One attempt: True once the table names our epoch, False if another commit won the race."""
    named = parse_epoch(table.metadata.properties.get(EPOCH_PROPERTY))
    fence.advance_past(named)
    if named == fence.epoch:
        return True
    fence.before_commit(named, fence.epoch, None)
    if fence.time_left() <= 0:
        raise FencedError(f"claim refused: the lease on {fence.keeper.lease.table} is not proven for long enough")
    requirements: tuple = (AssertTableUUID(uuid=table.metadata.table_uuid),)
    if not _is_rest(table.catalog):
        requirements += (_NoNewerEpoch(epoch=fence.epoch),)
    try:
        table.catalog.commit_table(table, requirements, (SetPropertiesUpdate(updates={EPOCH_PROPERTY: str(fence.epoch)}),))
    except CommitFailedException:
        return False  # another commit landed first: look again
    except (OSError, ConnectionError, SQLAlchemyError) as exc:
        raise CatalogUnavailableError(f"claim table: the catalog did not answer ({type(exc).__name__})") from exc
    return True


def _is_rest(catalog: object) -> bool:
    """Whether the catalog is pyiceberg's REST client, asked without importing that client
    (about 0.1 s, with requests) in a process whose catalogs are SQL or Hive: a RestCatalog
    exists only once its module is loaded."""
    rest = sys.modules.get("pyiceberg.catalog.rest")
    return rest is not None and isinstance(catalog, rest.RestCatalog)
