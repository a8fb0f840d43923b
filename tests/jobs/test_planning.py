"""The pure planners on hand-built metadata: no Spark, no files, milliseconds each.

CONVERT's and MERGE's target choice, REWRITE's grouping and sequence numbers, COMPACT's
candidates and layouts, MANIFESTS' choice of specs, the file groups and sizes MERGE and
COMPACT share, expiry's retention rules, the reader cost ranking, triggers, and the option
parser every source of options shares.
"""

from __future__ import annotations

import dataclasses
import struct
from typing import Any

import pytest
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table.metadata import TableMetadataV2
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

from maintenance.errors import UsageError
from maintenance.jobs import registry
from maintenance.jobs.compact.options import CompactOptions
from maintenance.jobs.compact.plan import Layout, plan_compact
from maintenance.jobs.convert.plan import plan_convert
from maintenance.jobs.expire.options import ExpireOptions
from maintenance.jobs.expire.plan import plan_expiry
from maintenance.jobs.file_groups.deletes import DroppableDeletes, delete_reach
from maintenance.jobs.file_groups.grouping import OutputLayout, output_layout, plan_groups, split_size, within_budget, writer_measures
from maintenance.jobs.file_groups.sizing import OutputSizing, fits
from maintenance.jobs.manifests.options import ManifestsOptions
from maintenance.jobs.manifests.plan import plan_manifests
from maintenance.jobs.merge.options import MergeOptions
from maintenance.jobs.merge.plan import plan_merge
from maintenance.jobs.options import DURATION, SIZE, STRINGS, OptionError
from maintenance.jobs.rewrite.plan import plan_rewrite
from maintenance.policy.triggers import fired
from maintenance.table.files import Content, ManifestInfo, SnapshotFiles, TableFile
from maintenance.table.health import TableHealth, count_files
from maintenance.table.reader_cost import DELETE_RECORD_BYTES, OPEN_COST_BYTES, TARGET_FILE_BYTES, reader_cost
from maintenance.table.stats import ColumnStats

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "region", StringType(), required=False))
UNPARTITIONED = PartitionSpec(spec_id=0)
BY_REGION = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="region"), spec_id=1)
_names = iter(range(1_000_000))


def long_bound(value: int) -> bytes:
    return struct.pack("<q", value)


def table_file(content: Content, seq: int, region: str | None = None, *, size: int = 1000, records: int = 10, ids: tuple[int, int] | None = None,
               nulls: int | None = 0, equality_ids: tuple[int, ...] = (), referenced: str | None = None, spec: int | None = None) -> TableFile:
    stats = ColumnStats(
        value_counts={1: records} if nulls is not None else {},
        null_counts={1: nulls} if nulls is not None else {},
        lower={1: long_bound(ids[0])} if ids else {},
        upper={1: long_bound(ids[1])} if ids else {},
    )
    spec_id = spec if spec is not None else (1 if region is not None else 0)
    return TableFile(
        path=f"/t/{content.name.lower()}-{next(_names)}.parquet", content=content, file_format="PARQUET", spec_id=spec_id,
        partition=(region,) if region is not None else (), partition_path=f"region={region}" if region is not None else "",
        seq=seq, file_seq=seq, records=records, size=size, stats=stats, equality_ids=equality_ids, referenced_data_file=referenced,
    )


def data(seq: int, region: str | None = None, **kw: Any) -> TableFile:
    return table_file(Content.DATA, seq, region, **kw)


def eq(seq: int, region: str | None = None, **kw: Any) -> TableFile:
    return table_file(Content.EQUALITY_DELETES, seq, region, equality_ids=(1,), **kw)


def pos(seq: int, region: str | None = None, **kw: Any) -> TableFile:
    return table_file(Content.POSITION_DELETES, seq, region, **kw)


def snapshot(*files: TableFile, seq: int = 10) -> SnapshotFiles:
    return SnapshotFiles("uuid", 1, seq, 2, SCHEMA, {0: UNPARTITIONED, 1: BY_REGION}, list(files))


# -- CONVERT ---------------------------------------------------------------------------
def test_convert_targets_follow_scope_sequence_and_known_bounds() -> None:
    older, same_commit, other_region = data(1, "a", ids=(0, 9)), data(3, "a", ids=(0, 9)), data(1, "b", ids=(0, 9))
    far = data(1, "a", ids=(100, 200))
    counts_only = data(1, "a", nulls=0)  # metrics mode counts: no bounds, so no pruning
    delete = eq(3, "a", ids=(5, 5))
    plan = plan_convert(snapshot(older, same_commit, other_region, far, counts_only, delete))
    assert {t.path for t in plan.targets} == {older.path, counts_only.path}
    assert plan.applies_to[older.path] == [delete.path]


def test_a_global_delete_reaches_every_partition_and_needs_the_whole_table() -> None:
    a, b = data(1, "a"), data(1, "b")
    delete = eq(2, nulls=None)  # unpartitioned spec: global
    assert {t.path for t in plan_convert(snapshot(a, b, delete)).targets} == {a.path, b.path}
    assert plan_convert(snapshot(a, b, delete), partitions=("region=a",)).empty


def test_null_keys_keep_files_that_hold_nulls() -> None:
    only_nulls = eq(2, "a", nulls=10, records=10)
    no_nulls, some_nulls = data(1, "a", ids=(0, 9), nulls=0), data(1, "a", ids=(0, 9), nulls=3)
    plan = plan_convert(snapshot(no_nulls, some_nulls, only_nulls))
    assert {t.path for t in plan.targets} == {some_nulls.path}


def test_max_delete_files_takes_the_oldest_first() -> None:
    first, second, third = eq(4, "a"), eq(2, "a"), eq(3, "a")
    plan = plan_convert(snapshot(data(1, "a"), first, second, third), max_delete_files=2)
    assert [d.path for d in plan.deletes] == [second.path, third.path]


# -- MERGE -----------------------------------------------------------------------------
def test_merge_targets_every_file_a_delete_applies_to_and_packs_small_ones() -> None:
    hit, untouched_small, other_region = data(1, "a", size=10), data(1, "a", size=10, ids=(50, 60)), data(1, "b", size=10)
    file_scoped = pos(2, "a", referenced=hit.path)
    partition_scoped = pos(2, "b")
    plan = plan_merge(snapshot(hit, untouched_small, other_region, file_scoped, partition_scoped), output_spec_id=1, small_file_bytes=100)
    assert {t.path for t in plan.targets} == {hit.path, untouched_small.path, other_region.path}
    assert {d.path for d in plan.deletes} == {file_scoped.path, partition_scoped.path}
    scoped = plan_merge(snapshot(hit, other_region, file_scoped, partition_scoped), output_spec_id=1, options=MergeOptions(partitions=("region=b",)))
    assert {t.path for t in scoped.targets} == {other_region.path} and {d.path for d in scoped.deletes} == {partition_scoped.path}


def test_merge_groups_write_older_specs_into_the_current_one() -> None:
    current = [data(1, "a", size=100), data(1, "b", size=100)]
    assert sorted(str(g.key) for g in plan_groups(current, 1, {})) == ["(1, ('a',))", "(1, ('b',))"]
    mixed = plan_groups([*current, data(1, spec=0, size=100)], 1, {})
    assert len(mixed) == 1 and mixed[0].moves_rows and mixed[0].spread and len(mixed[0].files) == 3


def test_small_partitions_are_combined_into_one_job_and_large_ones_stay_alone() -> None:
    small = [data(1, region, size=30) for region in "abcde" for _ in range(2)]  # 60 bytes a partition: one file each
    large = [data(1, "z", size=150), data(1, "z", size=150)]  # three files of the target
    groups = plan_groups([*small, *large], 1, {}, target_size=100)
    combined = [g for g in groups if g.spread]
    assert [sorted(str(k[1][0]) for k in g.partitions) for g in combined] == [["a", "b", "c", "d", "e"]]
    assert combined[0].output_files(100) == 5 and not combined[0].moves_rows
    alone = [g for g in groups if not g.spread]
    assert len(alone) == 1 and alone[0].output_files(100) == 3
    assert all(not g.spread for g in plan_groups(small, 1, {}, target_size=25))  # 60 bytes: two files a partition, no longer small
    few = [data(1, region, size=30) for region in "abcd" for _ in range(2)]
    assert [len(g.partitions) for g in plan_groups(few, 1, {}, target_size=100)] == [1, 1, 1, 1]  # as many as run at once: no shuffle
    assert [len(g.partitions) for g in plan_groups(few, 1, {}, target_size=100, max_concurrent_groups=2)] == [4]


@pytest.mark.parametrize(("output", "files", "last_share"), [(50, 1, 1.0), (110, 1, 1.0), (130, 1, 1.0), (149, 1, 1.0), (150, 2, 0.5), (185, 2, 1.0),
                                                             (199, 2, 1.0), (220, 2, 1.0), (230, 2, 1.3), (250, 3, 0.5), (275, 3, 1.0), (340, 3, 1.4),
                                                             (450, 5, 1.0), (1010, 10, 1.0), (1040, 10, 1.0)])
def test_output_files_are_within_a_tenth_of_the_target_but_the_last(output: int, files: int, last_share: float) -> None:
    """Even files where a count keeps them within 10% of the target; otherwise full files and
    a last one with the rest, which joins the last full file when under half a target (never
    two of 0.75 targets, which the next COMPACT would rewrite)."""
    layout = output_layout(output, 100)
    assert (layout.files, round(layout.last_share, 6)) == (files, last_share)
    sizes = [output * share for share in layout.shares()]
    assert abs(sum(sizes) - output) < 1e-6 and fits([round(s) for s in sizes], 100)


def test_a_group_that_missed_the_target_is_written_again_and_teaches_the_run_its_ratio() -> None:
    sizing = OutputSizing(100)
    [group] = plan_groups([data(1, "a", size=55) for _ in range(4)], 1, {}, target_size=100)  # 220 bytes estimated: two even files
    assert group.layout(100) == OutputLayout(2) and sizing.calibrated(group) is group
    assert sizing.resized(group, [105, 98]) is None  # within 10%: kept
    resized = sizing.resized(group, [80, 80])  # the rows took 160 bytes: one full file and the rest
    assert resized is not None and resized.expected_output_bytes == 160 and resized.layout(100) == OutputLayout(2, 0.6)
    [later] = plan_groups([data(1, "b", size=55) for _ in range(4)], 1, {}, target_size=100)
    assert sizing.calibrated(later).expected_output_bytes == 160  # scaled by what the first group taught
    spread = dataclasses.replace(later, spread=True)
    assert sizing.resized(spread, [10, 300]) is None and sizing.calibrated(spread) is spread  # one file per partition: not sized


def test_small_files_are_sized_by_the_writer_where_its_measure_holds_at_the_target() -> None:
    mib = 2**20
    small = [data(1, "a", size=15_000, records=500) for _ in range(500)]  # 7.2 MiB of 500-row files: 30 bytes a row
    assert writer_measures(small, 4 * mib, page_row_limit=20_000)  # a buffered page of 20,000 rows: 0.6 MiB, under a quarter of 4 MiB
    assert not writer_measures(small, 1 * mib, page_row_limit=20_000)  # 0.6 MiB against 1 MiB: the writer would roll over far too early
    assert writer_measures(small, 1 * mib, page_row_limit=2_000)
    large = [data(1, "a", size=30 * mib, records=1_000_000) for _ in range(3)]  # more rows than a page: their bytes are the output's
    assert not writer_measures(large, 4 * mib, page_row_limit=20_000)

    [rolled] = plan_groups(small, 1, {}, target_size=4 * mib)
    assert rolled.rolls and rolled.output_files(4 * mib) == 2 and rolled.read_splits(4 * mib) == 1  # the bytes say two files; one split, the writer decides
    [by_bytes] = plan_groups(small, 1, {}, target_size=mib)
    assert not by_bytes.rolls and by_bytes.read_splits(mib) == by_bytes.output_files(mib) == 7
    many = [data(1, "a", size=15_000, records=500) for _ in range(5000)]  # 72 MiB: at the least 18 MiB out, four splits of 4 MiB targets
    [wide] = plan_groups(many, 1, {}, target_size=4 * mib)
    assert wide.rolls and wide.read_splits(4 * mib) == 4


def test_a_split_is_a_share_plus_the_largest_file() -> None:
    weights = [30] * 10
    assert split_size(weights, 3) == 100 + 30 + 1  # every split but the last holds more than a share


def test_groups_are_bounded_and_a_budget_keeps_the_largest_first() -> None:
    files = [data(1, "a", size=40) for _ in range(5)]
    groups = plan_groups(files, 1, {}, max_group_bytes=100)
    assert sorted(len(g.files) for g in groups) == [1, 2, 2] and all(g.input_bytes <= 100 for g in groups)
    assert [g.input_bytes for g in within_budget(groups, 150)] == [80, 40]  # the second 80 does not fit; the 40 does
    assert len(within_budget(groups, 1)) == 1  # always at least one group


def test_the_budget_goes_to_the_groups_readers_suffer_from_most_per_byte_not_the_largest() -> None:
    """Model (`file_groups.plan`): a group's benefit is an open and the entries of every
    delete applying to one of its files, per file it applies to, plus an open per file it
    removes; divided by its input bytes. Region a: 400 bytes under one small delete; region
    b: 100 bytes under three deletes of 50 entries: b first, a left for the next run."""
    big = [data(1, "a", size=100, records=100) for _ in range(4)]
    small = [data(1, "b", size=100, records=100)]
    a_delete, b_deletes = pos(2, "a", records=1), [pos(2, "b", records=50) for _ in range(3)]
    files = snapshot(*big, *small, a_delete, *b_deletes)

    plan = plan_merge(files, output_spec_id=1, options=MergeOptions(max_bytes_per_run=150, max_group_bytes=1000))

    assert [g.partitions for g in plan.groups] == [((1, ("b",)),)] and plan.groups_deferred == 1
    assert plan.reach[b_deletes[0].key] == {small[0].path} and plan.reach[a_delete.key] == {f.path for f in big}
    whole = plan_merge(files, output_spec_id=1, options=MergeOptions(max_group_bytes=1000))
    b_first, a_second = whole.groups
    assert b_first.reader_benefit / b_first.input_bytes > a_second.reader_benefit / a_second.input_bytes
    assert b_first.reader_benefit == 3 * OPEN_COST_BYTES + 150 * DELETE_RECORD_BYTES  # one file, nothing fewer
    assert a_second.reader_benefit == 4 * (OPEN_COST_BYTES + DELETE_RECORD_BYTES) + 3 * OPEN_COST_BYTES  # four files into one
    listed = whole.counters(detail=True)
    assert listed["groups_planned"] == 2 and [g["files"] for g in listed["groups"]] == [[small[0].path], sorted(f.path for f in big)]
    assert [g["expected_output_files"] for g in listed["groups"]] == [1, 1] and listed["groups"][1]["partitions"] == ["region=a"]


def test_a_delete_is_dropped_only_with_the_last_data_file_it_reaches() -> None:
    a1, a2, b1 = data(1, "a"), data(1, "a"), data(1, "b")
    partition_delete, dangling = pos(2, "a"), pos(2, "c")
    reach = delete_reach(snapshot(a1, a2, b1, partition_delete, dangling), [partition_delete, dangling])
    droppable = DroppableDeletes(reach)
    assert droppable.covered_by([a1.path]) == [dangling.path]  # dangling: with the first commit
    assert droppable.covered_by([a1.path]) == [dangling.path]  # asked again (a refused commit): the same, until committed
    droppable.committed([a1.path], [dangling.path])
    assert droppable.covered_by([b1.path]) == []
    droppable.committed([b1.path], [])
    assert droppable.covered_by([a2.path]) == [partition_delete.path]
    droppable.committed([a2.path], [partition_delete.path])
    assert droppable.kept == []


# -- COMPACT ---------------------------------------------------------------------------
BINPACK = Layout("binpack")


def compact(*files: TableFile, **options: Any) -> Any:
    return plan_compact(snapshot(*files), 1, 100, CompactOptions(**options), BINPACK)


def test_compact_takes_partitions_with_enough_small_files() -> None:
    many = [data(1, "a", size=10) for _ in range(5)]
    few = [data(1, "b", size=10) for _ in range(4)]
    right_size = [data(1, "c", size=100) for _ in range(6)]
    plan = compact(*many, *few, *right_size)
    assert {t.path for t in plan.targets} == {f.path for f in many} and plan.partitions == 1
    assert compact(*few, min_input_files=4).partitions == 1


def test_compact_takes_enough_content_an_oversized_file_and_heavily_deleted_files() -> None:
    two_big_enough = [data(1, "a", size=60), data(1, "a", size=60)]  # both below 75, together above the target
    oversized = data(1, "b", size=200)  # above 1.8 x target: split
    deleted = data(1, "c", size=100, records=10)
    dv = table_file(Content.POSITION_DELETES, 2, "c", records=4, referenced=deleted.path)
    plan = compact(*two_big_enough, oversized, deleted, dv)
    assert {t.path for t in plan.targets} == {*(f.path for f in two_big_enough), oversized.path, deleted.path}
    assert {d.path for d in plan.deletes} == {dv.path}
    assert compact(deleted, dv, delete_ratio_threshold=0.5).empty  # 4 of 10 rows deleted is below half


def test_compact_writes_older_specs_together_into_the_current_one_and_lists_dangling_deletes() -> None:
    old = [data(1, spec=0, size=10), data(1, spec=0, size=10)]
    gone = pos(3, "z")  # no data file in region z: dangling
    plan = compact(*old, gone, min_input_files=2)
    assert {t.path for t in plan.targets} == {f.path for f in old} and gone.path in {d.path for d in plan.deletes}
    assert compact(*[data(1, "a", size=100)] * 1).empty


# -- MANIFESTS -------------------------------------------------------------------------
def manifest(length: int, spec: int = 1, deletes: bool = False, added_by: int = 1) -> ManifestInfo:
    return ManifestInfo(f"/t/m-{next(_names)}.avro", length, Content.POSITION_DELETES if deletes else Content.DATA, spec, 1, added_by)


def test_manifests_are_rewritten_only_where_fewer_would_hold_them() -> None:
    def planned(*manifests: ManifestInfo, **options: Any) -> list[int]:
        files = SnapshotFiles("uuid", 1, 1, 2, SCHEMA, {0: UNPARTITIONED, 1: BY_REGION}, [], list(manifests))
        return sorted(plan_manifests(files, 100, ManifestsOptions(**options), written_by_manifests={9}).specs)

    assert planned(manifest(10), manifest(10), manifest(60, spec=0)) == [1]
    assert planned(manifest(90), manifest(90)) == []  # two are needed at the target size anyway
    assert planned(manifest(10), manifest(10, deletes=True)) == []  # one of each kind
    assert planned(manifest(10, deletes=True), manifest(10, deletes=True), manifest(10, deletes=True)) == [1]
    assert planned(manifest(10), manifest(10), min_manifests=3) == []
    assert planned(manifest(10, added_by=9), manifest(10, added_by=9), manifest(10)) == []  # an earlier MANIFESTS run's output settles


def test_triggers_reach_at_least_and_at_most_thresholds() -> None:
    health = TableHealth(data_files=10, data_bytes=10 * 2**20, manifests=40, small_manifests=39)
    assert fired({"avg_data_file_bytes": 2 * 2**20, "small_manifests": 30}, health) == ["avg_data_file_bytes 1048576 <= 2097152", "small_manifests 39 >= 30"]
    assert fired({"avg_data_file_bytes": 2**19}, health) == []


# -- REWRITE ---------------------------------------------------------------------------
def test_rewrite_groups_by_the_data_files_partition_with_the_highest_sequence_number() -> None:
    a1, b1 = data(1, "a"), data(1, "b")
    many = [pos(s, "a", size=10) for s in (2, 3, 4)]
    cross = pos(5, "a", size=10, referenced=b1.path)  # file-scoped: applies to b1 in another partition
    compact = [pos(2, "c", size=10)]  # one file: nothing to combine
    plan = plan_rewrite(snapshot(a1, b1, *many, cross, *compact), {})
    assert {d.path for d in plan.deletes} == {d.path for d in [*many, cross]}
    by_partition = dict(zip(plan.partitions, plan.sequence_numbers))
    assert by_partition == {(1, ("a",)): 4, (1, ("b",)): 5}
    assert {d.path for d in plan.data} == {a1.path, b1.path}


# -- EXPIRE ----------------------------------------------------------------------------
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


# -- ranking ---------------------------------------------------------------------------
def test_reader_cost_weighs_deletes_by_the_data_files_they_apply_to() -> None:
    """100 equality deletes newer than 1,000 data files cost readers far more than 100 newer
    than 2; the same 100 older than every data file (applying to none) cost nothing."""
    def health(data_seqs: list[int], delete_seqs: list[int]) -> TableHealth:
        result = TableHealth()
        count_files(result, snapshot(*(data(s, size=2**20) for s in data_seqs), *(eq(s) for s in delete_seqs)), small_file_bytes=1)
        return result

    many, few, none = health([1] * 1000, [5] * 100), health([1] * 2, [5] * 100), health([9] * 1000, [5] * 100)
    assert many.equality_deletes_applied == 100_000 and few.equality_deletes_applied == 200 and none.equality_deletes_applied == 0
    assert reader_cost(many).extra_bytes > 100 * reader_cost(few).extra_bytes
    assert reader_cost(none).extra_bytes == reader_cost(health([9] * 1000, [])).extra_bytes


# -- options: one parser for every source -------------------------------------------------
def test_option_kinds_read_yaml_values_property_strings_and_flags_alike() -> None:
    assert DURATION.parse("3d") == DURATION.parse(259200) == 259200.0
    assert SIZE.parse("512MiB") == SIZE.parse(536870912) == 536870912
    assert STRINGS.parse("a, b") == STRINGS.parse(["a", "b"]) == ("a", "b")
    with pytest.raises(OptionError, match="not a duration"):
        DURATION.parse("soon")
    with pytest.raises(OptionError, match="needs a unit: '5' could be 5s, 5m, 5h or 5d"):
        DURATION.parse("5")  # written text: `--older-than 5` is not silently five seconds
    assert DURATION.parse("0") == DURATION.parse(5) - 5 == 0.0


def test_job_options_from_raw_values_and_their_errors() -> None:
    expire = registry.job("expire")
    assert expire.parse_options({"max_snapshot_age": "2d", "checkpoint_keys": "a,b"}) == ExpireOptions(172800.0, None, ("a", "b"))
    with pytest.raises(UsageError, match="--retain-last: must be an integer of at least 1"):
        expire.parse_options({"min_snapshots_to_keep": "0"})
    with pytest.raises(UsageError, match="not an option of this job"):
        registry.job("merge").parse_options({"retention": "1d"})
    orphans = registry.job("orphans")
    with pytest.raises(UsageError, match="below 1 hour"):
        orphans.check_options(orphans.parse_options({"older_than": "10m"}), False)
    orphans.check_options(orphans.parse_options({"older_than": "10m"}), True)  # a dry run may look


def test_every_job_is_in_the_registry_once_with_its_options_declared() -> None:
    names = [spec.name for spec in registry.JOBS]
    assert len(names) == len(set(names))
    for spec in registry.JOBS:
        spec.parse_options(None)  # the defaults are valid
        for option in spec.option_specs():
            assert option.help and option.kind.name
            assert option.policy_key or option.flag, option.name


def test_icebergs_option_names_are_aliases_everywhere_an_option_is_read() -> None:
    """`target-file-size-bytes` as a policy key, a table property (the same mapping) and a
    flag; giving both names of one option is refused; `icemaint jobs` shows the mapping."""
    from maintenance.jobs.options import policy_values
    from maintenance.jobs.reference import jobs_json
    from maintenance.policy.loader import _Where as Where
    from maintenance.policy.loader import parse_job

    compact = registry.job("compact")
    values, _ = policy_values(compact.options, {"target-file-size-bytes": "64MiB", "min-input-files": 3, "delete-ratio-threshold": 0.4})
    parsed = compact.parse_options(values)
    assert (parsed.target_file_size, parsed.min_input_files, parsed.delete_ratio_threshold) == (64 * 2**20, 3, 0.4)
    job = parse_job("compact", {"every": "1h", "max-concurrent-file-group-rewrites": 2, "max-file-group-size-bytes": "1GiB"}, Where("p.yaml", {}))
    assert (job.options.max_concurrent_groups, job.options.max_group_bytes) == (2, 2**30)
    with pytest.raises(UsageError, match="one option: give one"):
        policy_values(compact.options, {"target_file_size": "1MiB", "target-file-size-bytes": "2MiB"})
    shown = {o["name"]: o["iceberg_name"] for j in jobs_json()["jobs"] if j["name"] == "compact" for o in j["options"]}
    assert shown["target_file_size"] == "target-file-size-bytes" and shown["strategy"] is None


def test_reader_cost_of_a_tiny_table_is_a_readers_slowdown_not_its_file_count() -> None:
    """The model's own calibration (table/reader_cost.py): 1,000 files of 900 bytes scanned
    ×22.6 slower than one file here; the model must say so within a small factor, where the
    former model (no per-scan floor) said ×~1,000 and "3,996 MiB extra" for a 0.9 MB table.
    On a table of full-sized files small files barely move the ratio, and the components
    say what a scan does."""
    def health(sizes: list[int], delete_seqs: list[int] = ()) -> TableHealth:  # type: ignore[assignment]
        result = TableHealth()
        count_files(result, snapshot(*(data(1, size=s) for s in sizes), *(eq(s) for s in delete_seqs)), small_file_bytes=1)
        return result

    tiny = reader_cost(health([900] * 1000))
    assert tiny.extra_opens == 999 and tiny.delete_records == 0
    assert 22.6 / 3 < tiny.amplification < 22.6 * 3
    big = reader_cost(health([TARGET_FILE_BYTES] * 1000 + [2**20] * 10))
    assert big.extra_opens == 9 and 1.0 < big.amplification < 1.001  # the 10 MiB fill one more clean file
    with_deletes = reader_cost(health([2**20] * 4, [5] * 3))  # 3 equality deletes of 10 keys, each applying to 4 data files
    assert with_deletes.extra_opens == 3 + 4 * 3 and with_deletes.delete_records == 4 * 3 * 10
