"""Rewriting data files in bounded groups: the engine MERGE and COMPACT share (not a job).
Its folder mirrors a job's: a plan made from metadata, then a run that executes it.

- `plan`: the plan's base (the file groups, ranked and cut to the budget, with each
  delete's reach); `grouping`: which files are written together and how many files each
  group makes (pure); `deferral`: the hot partitions a run leaves for later; `options`: the
  group options both jobs declare (size, concurrency, commits, budget).
- `run`: one data-file rewrite, start to finish (what both jobs' `run` calls);
  `executor`: groups run concurrently on the shared Spark session and committed every few
  groups (partial progress: a failed group does not undo committed ones); `writer`: one
  group read through Iceberg's scan tasks (deletes applied) and written back toward the
  target size, optionally sorted or z-ordered (Spark); `sizing`: a group that missed the
  target written again once; `deletes`: which delete files a commit may drop (those whose
  every data file is rewritten); `rebase`: writers' position deletes committed meanwhile
  carried over to the written files.
"""
