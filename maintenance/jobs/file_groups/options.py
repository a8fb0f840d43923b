"""The file-group options MERGE and COMPACT both declare (their options classes inherit them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from maintenance.errors import TableOptionError
from maintenance.jobs.options import DURATION, INTEGER_AT_LEAST_0, INTEGER_AT_LEAST_1, SIZE, option

if TYPE_CHECKING:
    from pyiceberg.partitioning import PartitionSpec
    from pyiceberg.table import Table

DEFAULT_MAX_GROUP_BYTES = 100 * 1024**3
DEFAULT_MAX_CONCURRENT_GROUPS = 4
DEFAULT_COMMIT_EVERY_GROUPS = 100
DEFAULT_DEFER_HOT_COMMITS = 2
DEFAULT_DEFER_HOT_AT_MOST_S = 3600.0


@dataclass(frozen=True)
class GroupOptions:
    max_group_bytes: int = option(DEFAULT_MAX_GROUP_BYTES, SIZE, "At most this many input bytes are rewritten as one group (one Spark job, within one partition).",
                                  iceberg="max-file-group-size-bytes")
    max_concurrent_groups: int = option(DEFAULT_MAX_CONCURRENT_GROUPS, INTEGER_AT_LEAST_1,
                                        "Groups rewritten at once on the shared Spark session.", iceberg="max-concurrent-file-group-rewrites")
    commit_every_groups: int = option(DEFAULT_COMMIT_EVERY_GROUPS, INTEGER_AT_LEAST_1,
                                      "Commit (and verify) after this many groups: a failure later does not undo what was committed.")
    max_bytes_per_run: int | None = option(None, SIZE, "Rewrite at most this many input bytes per run; the rest waits for the next run.")
    output_spec_id: int | None = option(None, INTEGER_AT_LEAST_0, "Write the new files in this partition spec of the table (default: the "
                                        "current one); files of other specs are rewritten into it.", iceberg="output-spec-id", metavar="ID")
    defer_hot_window: float | None = option(None, DURATION, "Leave out partitions that writers' merge-on-read commits (position deletes or "
                                            "deletion vectors of older data files) reached at least defer_hot_commits times within this "
                                            "window, so the rewrite does not fail their statements in flight (default: off).")
    defer_hot_commits: int = option(DEFAULT_DEFER_HOT_COMMITS, INTEGER_AT_LEAST_1,
                                    "Writers' deleting commits within defer_hot_window that make a partition hot.")
    defer_hot_at_most: float = option(DEFAULT_DEFER_HOT_AT_MOST_S, DURATION,
                                      "A hot partition waits at most this long, counted from when the oldest file the run would rewrite "
                                      "there was added.")


def output_spec(table: Table, options: GroupOptions) -> PartitionSpec:
    """The spec a run writes its files in: the option's, which the table must have, else
    the current one (a TableOptionError, exit 2, names the table's specs)."""
    if options.output_spec_id is None:
        return table.spec()
    specs = table.specs()
    if options.output_spec_id not in specs:
        known = ", ".join(str(s) for s in sorted(specs))
        raise TableOptionError(f"output_spec_id {options.output_spec_id}: the table has no such partition spec (its specs: {known})")
    return specs[options.output_spec_id]
