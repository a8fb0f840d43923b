"""Rewriting data files in bounded groups: the engine MERGE and COMPACT share (not a job).

- `grouping`: which files are written together and how many files each group makes (pure).
- `options`: the group options both jobs declare (size, concurrency, commits, budget).
- `writer`: one group read through Iceberg's scan tasks (deletes applied) and written back
  toward the target size, optionally sorted or z-ordered (Spark).
- `deletes`: which delete files a commit may drop: those whose every data file is rewritten.
- `executor`: groups run concurrently on the shared Spark session and committed every few
  groups (partial progress: a failed group does not undo committed ones).
"""
