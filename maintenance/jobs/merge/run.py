"""The MERGE job: rewrite every data file the chosen deletes touch, and drop those deletes.

The target files are read through Iceberg's own reader (so every delete that applies is
applied) from exactly their planned scan tasks, staged with Iceberg's `ScanTaskSetManager`,
and written back toward the target file size through Iceberg's rewrite coordinator
(nothing is committed by the write), in bounded file groups run concurrently and committed
every few groups (`jobs.file_groups`: how files are grouped and sized, how older partition
specs are written into the current one, partial progress). Each commit is one
`RewriteFiles` that replaces its groups' data files and removes the delete files whose every
data file is now rewritten, with `dataSequenceNumber(planning snapshot's)`: equality deletes committed meanwhile keep applying to the new files, so
neither side must retry, and Iceberg ignores them when it validates. A position delete
committed meanwhile on a replaced file makes the commit fail cleanly; a rerun replans.
When files of older specs are written into the current spec, rows change partition and that
argument no longer holds for partition-scoped equality deletes: such a MERGE fails cleanly
if one was committed meanwhile (`spark.validators.no_new_partition_equality_deletes`).

Iceberg's stock `rewrite_data_files` keeps the delete files (apache/iceberg #4127, #8743,
#6126) and gives new files a new sequence number unless told otherwise; here the delete
files are removed explicitly, which is safe because every data file they may apply to is
among those rewritten.
"""

from __future__ import annotations

from maintenance.jobs.file_groups.run import rewrite
from maintenance.jobs.merge.plan import MergePlan
from maintenance.run.context import JobContext
from maintenance.run.outcome import JobOutcome


def run(ctx: JobContext, plan: MergePlan) -> JobOutcome:
    return rewrite(ctx, "MERGE", plan)
