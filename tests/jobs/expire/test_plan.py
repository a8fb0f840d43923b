"""EXPIRE's plan on hand-built metadata (`jobs/expire/plan.py`): retention by count and age,
tags and writers' checkpoints kept, table properties as defaults."""

from __future__ import annotations

from typing import Any

from pyiceberg.table.metadata import TableMetadataV2

from maintenance.jobs.expire.options import ExpireOptions
from maintenance.jobs.expire.plan import plan_expiry
from tests.support.metadata import SCHEMA, UNPARTITIONED


def metadata(snapshots: list[dict[str, Any]], refs: dict[str, dict[str, Any]], properties: dict[str, str] | None = None) -> TableMetadataV2:
    return TableMetadataV2(
        location="/t", table_uuid="9c12d441-03fe-4693-9a96-a0705ddf69c1", last_updated_ms=10_000, last_column_id=2,
        schemas=[SCHEMA], current_schema_id=0, partition_specs=[UNPARTITIONED], default_spec_id=0, last_partition_id=999,
        properties=properties or {}, current_snapshot_id=snapshots[-1]["snapshot-id"], snapshots=snapshots, refs=refs,
        last_sequence_number=len(snapshots),
    )


def snap(snapshot_id: int, parent: int | None, ts: int, **summary: str) -> dict[str, Any]:
    return {"snapshot-id": snapshot_id, "parent-snapshot-id": parent, "sequence-number": snapshot_id, "timestamp-ms": ts,
            "manifest-list": f"/t/snap-{snapshot_id}.avro", "summary": {"operation": "append", **summary}, "schema-id": 0}


def chain(count: int, **checkpoint_at: str) -> list[dict[str, Any]]:
    return [snap(i, i - 1 if i > 1 else None, i * 1000, **({"flink.max-committed-checkpoint-id": "7"} if str(i) in checkpoint_at.values() else {}))
            for i in range(1, count + 1)]


def test_expiry_keeps_the_newest_by_count_and_age() -> None:
    meta = metadata(chain(6), {"main": {"snapshot-id": 6, "type": "branch"}})
    assert plan_expiry(meta, ExpireOptions(max_snapshot_age=0, min_snapshots_to_keep=2), now_ms=100_000).snapshot_ids == [1, 2, 3, 4]
    assert plan_expiry(meta, ExpireOptions(max_snapshot_age=97, min_snapshots_to_keep=1), now_ms=100_000).snapshot_ids == [1, 2]


def test_expiry_keeps_tags_and_the_chain_to_a_writers_checkpoint() -> None:
    meta = metadata(chain(6, at="2"), {"main": {"snapshot-id": 6, "type": "branch"}, "release": {"snapshot-id": 1, "type": "tag"}})
    plan = plan_expiry(meta, ExpireOptions(max_snapshot_age=0, min_snapshots_to_keep=1), now_ms=100_000)
    assert plan.snapshot_ids == [] and plan.kept_for_checkpoints == {"flink.max-committed-checkpoint-id": 2}


def test_table_properties_set_the_retention_when_options_do_not() -> None:
    meta = metadata(chain(5), {"main": {"snapshot-id": 5, "type": "branch"}},
                    {"history.expire.max-snapshot-age-ms": "0", "history.expire.min-snapshots-to-keep": "3"})
    assert plan_expiry(meta, ExpireOptions(), now_ms=100_000).snapshot_ids == [1, 2]
