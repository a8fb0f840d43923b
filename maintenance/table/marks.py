"""What icemaint writes into a table's own metadata, named once, low in the house: the table
property a job's lease claims the table with, and the keys every maintenance snapshot's
summary carries. The metadata layer reads them (a writer's commit is one without
`icemaint.job`), the fence writes and checks them (`lease/fence.py`)."""

from __future__ import annotations

EPOCH_PROPERTY = "icemaint.lease-epoch"  # the table property: the newest lease epoch that claimed the table
SUMMARY_JOB = "icemaint.job"  # in a maintenance snapshot's summary: the job,
SUMMARY_RUN_ID = "icemaint.run-id"  # the run,
SUMMARY_EPOCH = "icemaint.lease-epoch"  # and the lease epoch it committed under


def parse_epoch(value: str | None) -> int | None:
    """The epoch a table property names, or None (none, or not a number)."""
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
