"""Column statistics of a content file, decoded the way Iceberg's Java reads them.

Statistics may be missing (metrics modes `none` and `counts`, columns past the 100th,
files from other writers): a missing count or bound means "unknown", never "zero" or
"only NULLs". Bounds written before a type promotion keep their old width (4 bytes for a
column that is now a long or a double); Java decodes them as the narrower type, and so
does this module. String bounds compare as Iceberg 1.10's `Comparators.charSequences()`
does: UTF-16 code units, except that a high surrogate sorts above every other unit, which
is Unicode code point order, Python's own order for `str` (plain UTF-16 order would put
an emoji below U+E000..U+FFFF and prune deletes Iceberg applies).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pyiceberg.conversions import from_bytes
from pyiceberg.types import (
    DoubleType,
    IcebergType,
    LongType,
    PrimitiveType,
    StringType,
    TimestampType,
    TimestamptzType,
    TimeType,
)

_NO_BOUND = object()


@dataclass(frozen=True)
class ColumnStats:
    """Counts and raw bounds by field id, as the manifest has them (absent keys are unknown)."""

    value_counts: Mapping[int, int] = field(default_factory=dict)
    null_counts: Mapping[int, int] = field(default_factory=dict)
    nan_counts: Mapping[int, int] = field(default_factory=dict)
    lower: Mapping[int, bytes] = field(default_factory=dict)
    upper: Mapping[int, bytes] = field(default_factory=dict)
    sizes: Mapping[int, int] = field(default_factory=dict)  # bytes of each column's chunks in the file

    def may_hold_null(self, field_id: int) -> bool:
        """Unless counts prove otherwise, a column may hold NULL."""
        nulls = self.null_counts.get(field_id)
        return nulls is None or nulls > 0

    def only_null(self, field_id: int) -> bool:
        """Every value is NULL: only counts prove it (missing bounds prove nothing)."""
        nulls, values = self.null_counts.get(field_id), self.value_counts.get(field_id)
        return nulls is not None and values is not None and nulls == values

    def bounds(self, field_id: int, field_type: IcebergType) -> tuple[Any, Any] | None:
        """(lower, upper) as comparable keys, or None when either is missing or undecodable."""
        lower, upper = self.lower.get(field_id), self.upper.get(field_id)
        if lower is None or upper is None or not isinstance(field_type, PrimitiveType):
            return None
        low, high = comparable(field_type, lower), comparable(field_type, upper)
        if low is _NO_BOUND or high is _NO_BOUND:
            return None
        return low, high


def decode(field_type: PrimitiveType, raw: bytes) -> Any:
    """A bound as a Python value; a bound written before int->long or float->double
    promotion is 4 bytes wide and is read as the narrower type (Java's Conversions)."""
    if len(raw) == 4 and isinstance(field_type, (LongType, TimeType, TimestampType, TimestamptzType)):
        return struct.unpack("<i", raw)[0]
    if len(raw) == 4 and isinstance(field_type, DoubleType):
        return struct.unpack("<f", raw)[0]
    return from_bytes(field_type, raw)


@lru_cache(maxsize=1 << 16)
def comparable(field_type: PrimitiveType, raw: bytes) -> Any:
    """A bound as a key ordered like Iceberg's comparator for the type, or _NO_BOUND.

    Cached: planning compares each data file's bounds with every delete's that may reach
    it, so the same bytes are decoded once per pair otherwise."""
    try:
        value = decode(field_type, raw)
    except Exception:  # an undecodable bound only means no pruning
        return _NO_BOUND
    if isinstance(field_type, StringType):
        return str(value)  # code point order, as Iceberg's CharSeqComparator
    if isinstance(value, float) and value != value:
        return _NO_BOUND  # a NaN bound orders nothing
    return value


def ranges_overlap(a: tuple[Any, Any], b: tuple[Any, Any]) -> bool:
    try:
        return not (a[1] < b[0] or b[1] < a[0])
    except TypeError:
        return True
