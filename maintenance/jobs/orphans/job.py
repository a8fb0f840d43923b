"""The ORPHANS job: delete files under the table location that no metadata references.

Order matters for safety: references are read first, then the location is listed, then the
references are read again from the newest metadata, so a commit landing during the listing
protects its files too (a fresh file is protected by the age margin anyway). Deletion goes
in fenced batches.
"""

from __future__ import annotations

import time

import structlog
from pyiceberg.table import Table

from maintenance.catalogs import load_table
from maintenance.errors import UsageError
from maintenance.jobs.context import JobContext
from maintenance.jobs.orphans.plan import plan_orphans
from maintenance.jobs.result import COMMITTED, NOOP, JobOutcome
from maintenance.listing import list_location
from maintenance.paths import normalise
from maintenance.reachable import ReferencedFiles

log = structlog.get_logger(__name__)
DEFAULT_OLDER_THAN_S = 3 * 24 * 3600
MIN_OLDER_THAN_S = 3600


def check_margin(older_than_s: float, force: bool, dry_run: bool = False) -> None:
    """Below an hour a write in progress may look orphaned: refused unless forced (a dry run,
    which deletes nothing, may look)."""
    if older_than_s < 0:
        raise UsageError("the orphan age margin cannot be negative")
    if older_than_s < MIN_OLDER_THAN_S and not (force or dry_run):
        raise UsageError(f"an orphan age margin of {older_than_s:g}s is below 1 hour and could delete files of writes in progress; use --force")


def orphans(ctx: JobContext) -> JobOutcome:
    older_than_s = float(ctx.options.get("older_than_s", DEFAULT_OLDER_THAN_S))
    check_margin(older_than_s, bool(ctx.options.get("force", False)), ctx.dry_run)
    cutoff_ms = int((time.time() - older_than_s) * 1000)

    table = load_table(ctx.config, ctx.ref)
    referenced = ReferencedFiles()
    referenced.add_table(table)
    started = time.monotonic()
    listing = list_location(table.io, table.location())
    listing_s = time.monotonic() - started
    newest = load_table(ctx.config, ctx.ref)
    if normalise(newest.metadata_location) != normalise(table.metadata_location):
        referenced.add_table(newest)
    plan = plan_orphans(listing, referenced, older_than_ms=cutoff_ms, metadata_dir=_metadata_dir(newest))
    counters = {
        "files_listed": plan.listed,
        "files_referenced": plan.referenced_listed,
        "hidden_files_skipped": plan.hidden,
        "recent_files_kept": plan.too_new,
        "orphan_files": len(plan.candidates),
        "orphan_bytes": plan.bytes,
        "metadata_versions_read": referenced.metadata_versions_read,
        "listing_s": round(listing_s, 3),
        "older_than_s": older_than_s,
    }
    if ctx.dry_run:
        return JobOutcome(NOOP, counters={**counters, "files_deleted": 0, "would_delete": [f.location for f in plan.candidates]})
    if not plan.candidates:
        return JobOutcome(NOOP, counters={**counters, "files_deleted": 0})
    deleted = ctx.table.delete_files(f.location for f in plan.candidates)
    log.info("orphan files deleted", count=deleted, bytes=plan.bytes)
    return JobOutcome(COMMITTED, counters={**counters, "files_deleted": deleted})


def _metadata_dir(table: Table) -> str:
    """The metadata folder relative to the location (`write.metadata.path` may move it)."""
    location = normalise(table.location())
    folder = normalise(table.metadata_location.rsplit("/", 1)[0])
    return folder[len(location) + 1 :] if folder.startswith(location + "/") else "metadata"
