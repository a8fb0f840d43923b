"""EXPIRE's options: how long and how many snapshots to keep, and writers' resume points."""

from __future__ import annotations

from dataclasses import dataclass

from maintenance.jobs.options import DURATION, FLAG, INTEGER_AT_LEAST_1, STRINGS, memory_budget_option, option

DEFAULT_CHECKPOINT_KEYS = ("flink.max-committed-checkpoint-id",)


@dataclass(frozen=True)
class ExpireOptions:
    """None means the table's `history.expire.*` property, then Iceberg's default."""

    max_snapshot_age: float | None = option(
        None, DURATION, "Expire snapshots older than this (default: the table's history.expire.max-snapshot-age-ms, else 5 days).",
        policy_key="retention.max_snapshot_age", flag="--older-than",
    )
    min_snapshots_to_keep: int | None = option(
        None, INTEGER_AT_LEAST_1, "Keep at least this many snapshots per branch (default: history.expire.min-snapshots-to-keep, else 1).",
        policy_key="retention.min_snapshots_to_keep", flag="--retain-last",
    )
    checkpoint_keys: tuple[str, ...] = option(
        (), STRINGS, "Snapshot summary keys marking a writer's resume point; the newest carrier and its chain are kept "
        "(flink.max-committed-checkpoint-id always is).",
        policy_key="retention.checkpoint_keys", flag="--checkpoint-key", repeatable=True, metavar="KEY",
    )

    clean_expired_metadata: bool = option(
        False, FLAG, "Also remove the partition specs and schemas no retained snapshot uses (never the current ones), as Iceberg's "
        "expire_snapshots(clean_expired_metadata) does.", iceberg="clean-expired-metadata",
    )

    memory_budget: int = memory_budget_option("the retained snapshots' files (half of it) and the expired snapshots' files (a quarter)")

    @property
    def all_checkpoint_keys(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*DEFAULT_CHECKPOINT_KEYS, *self.checkpoint_keys)))
