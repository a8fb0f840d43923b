"""Which files are written together and into how many files (`jobs/file_groups/grouping.py`),
on hand-built metadata: pure, milliseconds each."""

from __future__ import annotations

import pytest

from maintenance.jobs.file_groups.grouping import output_layout, plan_groups, split_size, within_budget, writer_measures
from maintenance.jobs.file_groups.sizing import fits
from tests.support.metadata import data


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
    assert split_size(weights, 3) == 100 + 30 + 1


def test_groups_are_bounded_and_a_budget_keeps_the_largest_first() -> None:
    files = [data(1, "a", size=40) for _ in range(5)]
    groups = plan_groups(files, 1, {}, max_group_bytes=100)
    assert sorted(len(g.files) for g in groups) == [1, 2, 2] and all(g.input_bytes <= 100 for g in groups)
    assert [g.input_bytes for g in within_budget(groups, 150)] == [80, 40]  # the second 80 does not fit; the 40 does
    assert len(within_budget(groups, 1)) == 1
