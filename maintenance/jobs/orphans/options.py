"""ORPHANS' options, and the one rule for its age margin."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from maintenance.jobs.options import DURATION, FLAG, LOCATION, OptionCheckError, memory_budget_option, option
from maintenance.table.paths import is_s3

if TYPE_CHECKING:
    from pyiceberg.table import Table

MIN_OLDER_THAN_S = 3600


@dataclass(frozen=True)
class OrphansOptions:
    older_than: float = option(3 * 24 * 3600.0, DURATION, "Only files last modified longer ago than this are deleted.")
    memory_budget: int = memory_budget_option("the referenced paths (half of it) and the orphans found (a quarter)")
    inventory: str | None = option(None, LOCATION, "List the table location from an S3 Inventory report instead of LIST requests: its "
                                   "manifest.json, or the report configuration's folder (its newest complete report).", metavar="LOCATION")
    force: bool = option(False, FLAG, "Allow a margin below 1 hour (command line only).", policy_key=False)


def check_margin(options: OrphansOptions, dry_run: bool) -> None:
    """Below an hour a write in progress may look orphaned: refused unless forced on the
    command line (a dry run, which deletes nothing, may look; a policy cannot force it)."""
    if options.older_than < MIN_OLDER_THAN_S and not (options.force or dry_run):
        raise OptionCheckError("older_than", f"an orphan age margin of {options.older_than:g}s is below 1 hour and could delete files of writes in progress", "use --force")


def check_inventory(table: Table, options: OrphansOptions) -> None:
    """An S3 Inventory report lists S3 objects: refused, before any lease, for a table elsewhere."""
    if options.inventory is not None and not is_s3(table.location()):
        raise OptionCheckError("inventory", f"an S3 Inventory report lists S3 objects, and the table is at {table.location()}", "list it (no --inventory)")
