"""How data files are rewritten together: bounded groups that each become files near the target size.

Files are grouped by partition (spec id and values), and a partition's files are split
into groups of at most `max_group_bytes` (first fit, largest files first, so the groups of
one partition come out about even). Each group is one Spark job. Partitions that make one
file each are combined into one group written through a shuffle clustered by partition
(`spread`), so many small partitions cost one job, not one each. When files of an older
spec take part, every target is written together into the current spec's partitions the
same way (`moves_rows`), in consecutive runs of at most `max_group_bytes`: an old file's
rows spread over many new partitions, which the current spec's files of those partitions
should share.

Sizing (`output_layout`): every file a group writes is within `SIZE_TOLERANCE` (10%) of the
target, but a partition's last one, which takes the rest. Where an even count of files does
that (one file up to 1.1 targets, and any total of 4.5 targets or more), the group writes
that many even files: each read split takes about the group's bytes divided by the count
and becomes exactly one file (the writer does not roll over within a split), and where
whole files are too big to share out evenly, rows are dealt out by a shuffle instead.
Between (1.1 to 1.8 targets, 2.2 to 2.7, 3.3 to 3.6, 4.4 to 4.5), no even count can: the
group writes full files of the target and a last one with the rest, its rows cut by row
count (`writer`); a rest under half a target joins the last file (up to 1.5 targets)
rather than make a small file of its own. Either way the next COMPACT finds nothing: no
file above `max_file_size_ratio` (1.8), at most one below the target. Two even files of
0.75 targets, the old choice at 1.5, were the worst: both below COMPACT's
`min_file_size_ratio`, together above the target, so the next run rewrote them again.
Input bytes shrink by the rows deletes remove, so the estimate of the output scales the
input by the live fraction of its rows.

Small files are the exception (`writer_measures`): Parquet spends several times the bytes
on rows spread over many small files (each repeats its dictionaries, page headers and
footer, and compresses little), so their bytes overstate the output (2,000 files of 500
rows: 7.3 MiB a partition in, 1.9 MiB out) and a count from them writes several files
where one would do. Where the writer's own measure of the file it writes can be trusted at
the target, such a group is read in as few splits as its output could need at the least
(`SMALL_FILE_SHRINK`) and the writer starts a new file when the one it writes reaches the
target.

Order and budget: groups come out largest first; the plan (`file_groups.plan`) ranks them
by reader benefit per byte, and `within_budget` keeps groups in that order until
`max_bytes_per_run` input bytes, so a daemon works through a huge table over several cycles.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from maintenance.jobs.file_groups.options import DEFAULT_MAX_CONCURRENT_GROUPS
from maintenance.table.files import Content, PartitionKey, SnapshotFiles, TableFile
from maintenance.table.targets import PAGE_ROW_LIMIT_DEFAULT

SIZE_TOLERANCE = 0.1  # written files are within this share of the target, but a partition's last
LAST_FILE_JOINS = 0.5  # a rest below this share of the target joins the last full file instead of making a file of its own
MAX_OUTPUT_FACTOR = 1.4  # the writer rolls over only past this multiple of the target
COMBINED_TARGETS = 4  # small partitions are combined into groups of up to this many target sizes of input
SMALL_FILE_SHRINK = 0.25  # the least share of their bytes small files' rows may take once written together (measured: 0.26)
BUFFERED_PAGE_SHARE = 0.25  # the writer's measure is trusted when the page it buffers is at most this share of the target


@dataclass
class FileGroup:
    """Files written together in one Spark job."""

    partitions: tuple[PartitionKey, ...]  # the partitions its files come from (older specs: their target, the current spec's unpartitioned key)
    files: list[TableFile]
    expected_output_bytes: int
    spread: bool = False  # rows go to several partitions: written through a shuffle clustered by partition
    moves_rows: bool = False  # files of an older spec, written into the current spec's partitions
    rolls: bool = False  # small files: the writer sizes the files by its own measure (`writer_measures`)
    reader_benefit: float = 0.0  # bytes per scan readers stop paying once it is rewritten (`file_groups.plan`)

    @property
    def key(self) -> PartitionKey:
        return self.partitions[0]

    @property
    def input_bytes(self) -> int:
        return sum(f.size for f in self.files)

    def output_files(self, target: int) -> int:
        """How many files the group is expected to write: one per partition it combines, or
        by size (`output_layout`)."""
        return len(self.partitions) if self.spread and not self.moves_rows else self.layout(target).files

    def layout(self, target: int) -> OutputLayout:
        """How its rows are cut into files (by size; `spread` and `rolls` groups are cut by
        partition and by the writer, always as even files)."""
        layout = output_layout(self.expected_output_bytes, target)
        return OutputLayout(layout.files) if self.spread or self.rolls else layout

    def read_splits(self, target: int) -> int:
        """How many splits (or key ranges) the group is read in: one per expected file, or,
        when the writer sizes the files (`rolls`), as few as the output could need at the least."""
        if self.rolls:
            return max(1, math.floor(self.expected_output_bytes * SMALL_FILE_SHRINK / target))
        return self.output_files(target)


def writer_measures(files: Sequence[TableFile], target: int, page_row_limit: int) -> bool:
    """Whether the files are small (fewer rows each than a Parquet page holds, so their
    bytes overstate the output) and the writer's measure can size what they become.

    Iceberg's Parquet writer measures the file it writes as the pages it has compressed
    plus the page it still holds uncompressed, up to `page_row_limit` rows of every column;
    taking the input's bytes per row as a rough stand-in for that page's, the measure is
    trusted when the page is at most `BUFFERED_PAGE_SHARE` of the target. That holds for
    the usual targets (hundreds of MiB) and fails for tiny ones (a 1 MiB target rolled over
    at 0.15 MiB files), which keep the count from bytes."""
    records = sum(f.records for f in files)
    if not records or records >= page_row_limit * len(files):
        return False
    buffered_page = page_row_limit * sum(f.size for f in files) / records
    return buffered_page <= BUFFERED_PAGE_SHARE * target


@dataclass(frozen=True)
class OutputLayout:
    """The files a group's rows become: `files` even files, or `files - 1` files of the
    target and a last one of `last_share` of the target (below 1: the rest; above: a full
    file and a rest under `LAST_FILE_JOINS`)."""

    files: int
    last_share: float = 1.0

    @property
    def even(self) -> bool:
        return self.files == 1 or self.last_share == 1.0

    def shares(self) -> list[float]:
        """Each file's share of the rows, in order."""
        if self.even:
            return [1.0 / self.files] * self.files
        total = self.files - 1 + self.last_share
        return [1.0 / total] * (self.files - 1) + [self.last_share / total]


def output_layout(output_bytes: float, target: int) -> OutputLayout:
    """The files `output_bytes` become: each within `SIZE_TOLERANCE` of the target, but the
    last, and even where a count allows it (module docstring)."""
    if output_bytes <= target * (1 + SIZE_TOLERANCE):
        return OutputLayout(1)
    low, high = math.floor(output_bytes / target), math.ceil(output_bytes / target)
    if output_bytes / low <= target * (1 + SIZE_TOLERANCE):
        return OutputLayout(low)
    if output_bytes / high >= target * (1 - SIZE_TOLERANCE):
        return OutputLayout(high)
    rest = (output_bytes - low * target) / target
    if rest < LAST_FILE_JOINS:
        return OutputLayout(low, 1 + rest) if low > 1 else OutputLayout(1)
    return OutputLayout(high, rest)


def expected_files(output_bytes: float, target: int) -> int:
    """How many files `output_bytes` become (`output_layout`)."""
    return output_layout(output_bytes, target).files


def split_size(weights: list[int], outputs: int) -> int:
    """Input bytes per read split, so that `outputs` splits take every file: a share of the
    total plus the largest file, because the packer closes a split only when the next file
    does not fit (so every split but the last holds more than a share)."""
    return math.ceil(sum(weights) / outputs) + max(weights, default=0) + 1


def max_output_bytes(target: int) -> int:
    return int(target * MAX_OUTPUT_FACTOR)


def plan_groups(targets: Sequence[TableFile], output_spec_id: int, live_fraction: dict[PartitionKey, float], *,
                max_group_bytes: int | None = None, target_size: int | None = None, page_row_limit: int = PAGE_ROW_LIMIT_DEFAULT,
                max_concurrent_groups: int = DEFAULT_MAX_CONCURRENT_GROUPS) -> list[FileGroup]:
    """Groups of at most `max_group_bytes` input bytes, largest group first.

    Per partition, its files are split into groups. Partitions whose rows make one file at
    most (below `target_size`) are then combined, several into one group of at most
    `COMBINED_TARGETS` times the target, written through a shuffle clustered by partition:
    one Spark job writes one file into each of them, where a job per partition would spend
    more on its own start than on the rows (500 partitions of 20 small files took 0.35 s
    each, one at a time). That is only when there are more such partitions than groups run
    at once (`max_concurrent_groups`): up to that many, each is a job of its own, all run
    side by side, and no row is shuffled. When files of an older spec take part, their rows land in the
    current spec's partitions, where the current spec's own files of those partitions are:
    every target is then written together (in consecutive runs of at most
    `max_group_bytes`), so each current partition gets files near the target instead of one
    fragment per old partition."""
    if any(f.spec_id != output_spec_id for f in targets):
        ordered = sorted(targets, key=lambda f: (f.spec_id, str(f.partition), f.path))
        return [
            FileGroup(((output_spec_id, ()),), chunk, int(sum(f.size * live_fraction.get(f.partition_key, 1.0) for f in chunk)), spread=True,
                      moves_rows=True)
            for chunk in _consecutive(ordered, max_group_bytes)
        ]
    by_key: dict[PartitionKey, list[TableFile]] = {}
    for f in targets:
        by_key.setdefault(f.partition_key, []).append(f)
    groups = []
    for key, files in by_key.items():
        fraction = live_fraction.get(key, 1.0)
        for chunk in _split(files, max_group_bytes):
            rolls = target_size is not None and writer_measures(chunk, target_size, page_row_limit)
            groups.append(FileGroup((key,), chunk, int(sum(f.size for f in chunk) * fraction), rolls=rolls))
    if target_size is not None:
        groups = _combine_small(groups, target_size, max_group_bytes, max_concurrent_groups)
    return sorted(groups, key=lambda g: (-g.input_bytes, g.key[0], str(g.key[1])))


def _combine_small(groups: list[FileGroup], target_size: int, max_group_bytes: int | None, max_concurrent_groups: int) -> list[FileGroup]:
    """Groups that write one file each, combined (in partition order) up to the combined
    size, when there are more of them than run at once."""
    limit = COMBINED_TARGETS * target_size if max_group_bytes is None else min(max_group_bytes, COMBINED_TARGETS * target_size)
    single = sorted((g for g in groups if expected_files(g.expected_output_bytes, target_size) == 1), key=lambda g: (g.key[0], str(g.key[1])))
    if len(single) < 2 or len(single) <= max_concurrent_groups:
        return groups
    kept = [g for g in groups if expected_files(g.expected_output_bytes, target_size) > 1]
    runs: list[list[FileGroup]] = [[]]
    total = 0
    for group in single:
        if runs[-1] and total + group.input_bytes > limit:
            runs.append([])
            total = 0
        runs[-1].append(group)
        total += group.input_bytes
    for run in runs:
        if len(run) == 1:
            kept.append(run[0])
        else:
            kept.append(FileGroup(tuple(g.key for g in run), [f for g in run for f in g.files], sum(g.expected_output_bytes for g in run), spread=True))
    return kept


def within_budget(groups: Sequence[FileGroup], max_bytes: int | None) -> list[FileGroup]:
    """The groups to run now: in order, until `max_bytes` input bytes (always at least one)."""
    if max_bytes is None:
        return list(groups)
    chosen, total = [], 0
    for group in groups:
        if chosen and total + group.input_bytes > max_bytes:
            continue
        chosen.append(group)
        total += group.input_bytes
    return chosen


def _consecutive(files: list[TableFile], max_bytes: int | None) -> list[list[TableFile]]:
    """Files in their order, cut into runs of at most `max_bytes` (a larger file is alone)."""
    runs: list[list[TableFile]] = [[]]
    total = 0
    for f in files:
        if runs[-1] and max_bytes is not None and total + f.size > max_bytes:
            runs.append([])
            total = 0
        runs[-1].append(f)
        total += f.size
    return [run for run in runs if run]


def _split(files: list[TableFile], max_bytes: int | None) -> list[list[TableFile]]:
    """First fit decreasing into bins of `max_bytes` (a file larger than that is alone)."""
    if max_bytes is None or sum(f.size for f in files) <= max_bytes:
        return [sorted(files, key=lambda f: f.path)]
    used: list[int] = []
    members: list[list[TableFile]] = []
    for f in sorted(files, key=lambda f: (-f.size, f.path)):
        index = next((i for i, size in enumerate(used) if size + f.size <= max_bytes), None)
        if index is None:
            used.append(0)
            members.append([])
            index = len(used) - 1
        used[index] += f.size
        members[index].append(f)
    return [sorted(group, key=lambda f: f.path) for group in members]


def live_fraction(files: SnapshotFiles, deletes: Sequence[TableFile], targets: Sequence[TableFile]) -> dict[PartitionKey, float]:
    """Per partition of the targets, the share of rows the deletes leave (each delete record
    is taken to remove one row of its partition; global equality deletes are left out), to
    estimate how much a rewrite writes."""
    deleted: dict[PartitionKey, int] = defaultdict(int)
    for d in deletes:
        if d.content == Content.POSITION_DELETES or not files.is_global(d.spec_id):
            deleted[d.partition_key] += d.records
    rows: dict[PartitionKey, int] = defaultdict(int)
    for f in targets:
        rows[f.partition_key] += f.records
    return {key: max(0.05, 1 - deleted[key] / total) for key, total in rows.items() if total}
