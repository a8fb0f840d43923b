"""The file-group options MERGE and COMPACT both declare (their options classes inherit them)."""

from __future__ import annotations

from dataclasses import dataclass

from maintenance.jobs.options import INTEGER_AT_LEAST_1, SIZE, option

DEFAULT_MAX_GROUP_BYTES = 100 * 1024**3
DEFAULT_MAX_CONCURRENT_GROUPS = 4
DEFAULT_COMMIT_EVERY_GROUPS = 100


@dataclass(frozen=True)
class GroupOptions:
    max_group_bytes: int = option(DEFAULT_MAX_GROUP_BYTES, SIZE, "At most this many input bytes are rewritten as one group (one Spark job, within one partition).",
                                  iceberg="max-file-group-size-bytes")
    max_concurrent_groups: int = option(DEFAULT_MAX_CONCURRENT_GROUPS, INTEGER_AT_LEAST_1,
                                        "Groups rewritten at once on the shared Spark session.", iceberg="max-concurrent-file-group-rewrites")
    commit_every_groups: int = option(DEFAULT_COMMIT_EVERY_GROUPS, INTEGER_AT_LEAST_1,
                                      "Commit (and verify) after this many groups: a failure later does not undo what was committed.")
    max_bytes_per_run: int | None = option(None, SIZE, "Rewrite at most this many input bytes per run; the rest waits for the next run.")
