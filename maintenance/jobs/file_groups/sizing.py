"""The written size checked against the plan: a group whose files missed the target is written again, once, at the size its rows really take.

The plan estimates what a group writes from its input bytes (scaled by the rows deletes
leave), and its layout (`grouping.output_layout`) cuts the rows by that estimate. The
estimate can be off by more than the 10% the layout allows: small input files repeat their
dictionaries, headers and footers; sorted rows compress better than the input's order (on
a 256 KiB target, measured 0.73 to 0.98 of the input's bytes). What a group wrote is exact,
so the first group of a run that misses teaches the run its ratio of written to estimated
bytes: the group is written again with its estimate corrected (the first output, which
nothing references, is discarded through `JobContext.discard_unpublished`), and every
group that starts after that has its estimate scaled by the ratio before it is written.

Only groups cut by size are checked: a `spread` group writes one file per partition, and a
`rolls` group is sized by the writer.
"""

from __future__ import annotations

import dataclasses
import threading

from maintenance.jobs.file_groups.grouping import LAST_FILE_JOINS, SIZE_TOLERANCE, FileGroup


class OutputSizing:
    """One run's ratio of written to estimated bytes, shared by its group threads."""

    def __init__(self, target: int) -> None:
        self.target = target
        self._ratio: float | None = None
        self._lock = threading.Lock()

    def calibrated(self, group: FileGroup) -> FileGroup:
        """The group with its estimate scaled by what the run has learned, if anything."""
        with self._lock:
            ratio = self._ratio
        if ratio is None or not checked(group):
            return group
        return dataclasses.replace(group, expected_output_bytes=int(group.expected_output_bytes * ratio))

    def resized(self, group: FileGroup, written: list[int]) -> FileGroup | None:
        """None when the files written (`written`: their sizes) fit the target; otherwise
        the group with the estimate its rows really take, to be written again (and the
        ratio learned for the groups that start later)."""
        if not checked(group) or not written or fits(written, self.target):
            return None
        actual = sum(written)
        with self._lock:
            self._ratio = actual / max(1, group.expected_output_bytes) * (self._ratio or 1.0)
        resized = dataclasses.replace(group, expected_output_bytes=actual)
        return resized if resized.layout(self.target) != group.layout(self.target) else None


def checked(group: FileGroup) -> bool:
    return not group.spread and not group.rolls


def fits(sizes: list[int], target: int) -> bool:
    """Every file within `SIZE_TOLERANCE` of the target but one, the partition's last, which
    takes the rest: at most a full file and a rest under `LAST_FILE_JOINS` (with the same
    tolerance)."""
    low, high = target * (1 - SIZE_TOLERANCE), target * (1 + SIZE_TOLERANCE)
    others = [size for size in sizes if not low <= size <= high]
    return len(others) <= 1 and all(size <= (1 + LAST_FILE_JOINS) * high for size in others)
