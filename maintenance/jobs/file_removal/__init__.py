"""File removal: deleting files from storage under the fence, the engine EXPIRE and ORPHANS
share (not a job).

- `fenced`: each batch deleted only while the lease is proven and after the newest metadata
  was read again; a run's unpublished files discarded under the same lease checks.
- `candidates`: the files a plan would delete, spooled to disk past their share of the
  memory budget.
"""
