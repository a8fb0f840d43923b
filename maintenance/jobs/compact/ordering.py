"""Row orderings for COMPACT's file groups: the table's sort order, or a z-order of columns.

Both give the writer keys that it range-partitions a group's rows by, into as many parts
as the group writes files, and sorts within each, so every file holds one key range.
A group whose rows go to several partitions (`spread`: small partitions combined, or an
older spec's files) is clustered by the current spec's partition fields first, so each
file is written into one partition.

**Z-order** maps each column to an unsigned integer of `bits` bits that keeps the column's
order (numbers, dates and timestamps scaled linearly between the group's minimum and
maximum, read in one aggregation over those columns; strings and binary by their first
three bytes; booleans as one bit; NULL and NaN first), and interleaves the bits of all
columns into one 62-bit key, most significant first. Nearby keys are then nearby in every
column, so a filter on any of them skips files by their bounds.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING

from maintenance.jobs.compact.plan import Layout, SortKey
from maintenance.jobs.compact.transforms import quoted, transform_column
from maintenance.jobs.file_groups.grouping import FileGroup

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

KEY_BITS = 62  # of the long the interleaved key is
MAX_BITS_PER_COLUMN = 21
PREFIX_BITS = 24  # strings and binary: their first three bytes


def ordering_for(layout: Layout, catalog: str) -> SortOrdering | ZOrdering | None:
    if layout.strategy == "sort":
        return SortOrdering(layout, catalog)
    if layout.strategy == "zorder":
        return ZOrdering(layout, catalog)
    return None


@dataclass
class _Ordering:
    layout: Layout
    catalog: str

    @property
    def name(self) -> str:
        return self.layout.strategy

    def partition_columns(self, group: FileGroup) -> list[Column]:
        """The current spec's partition values of a group's rows (none when it writes one partition)."""
        if not group.spread:
            return []
        return [transform_column(self.catalog, k.column, k.transform) for k in self.layout.partition_keys]

    def _partition_prefix(self, group: FileGroup) -> list[Column]:
        return [column.asc_nulls_first() for column in self.partition_columns(group)]


class SortOrdering(_Ordering):
    """The table's sort order, transforms and directions included."""

    def keys(self, frame: DataFrame, group: FileGroup) -> list[Column]:
        return [*self._partition_prefix(group), *(_sorted(transform_column(self.catalog, k.column, k.transform), k) for k in self.layout.keys)]


class ZOrdering(_Ordering):
    """One interleaved key over the z-order columns."""

    def keys(self, frame: DataFrame, group: FileGroup) -> list[Column]:
        from pyspark.sql import functions as F

        columns = [k.column for k in self.layout.keys]
        bits = min(MAX_BITS_PER_COLUMN, KEY_BITS // len(columns))
        numeric = {i: value for i, (c, t) in enumerate(zip(columns, self.layout.zorder_types)) if (value := _numeric(c, t)) is not None}
        aggregates = [a for i, value in numeric.items() for a in (F.min(value).alias(f"lo{i}"), F.max(value).alias(f"hi{i}"))]
        bounds = frame.agg(*aggregates).first() if aggregates else None
        ranks = []
        for i, (column, kind) in enumerate(zip(columns, self.layout.zorder_types)):
            if i in numeric:
                assert bounds is not None
                ranks.append(_linear_rank(numeric[i], bounds[f"lo{i}"], bounds[f"hi{i}"], bits))
            elif kind in ("string", "binary"):
                ranks.append(_prefix_rank(column, kind, bits))
            else:  # boolean
                ranks.append(F.coalesce(F.expr(quoted(column)).cast("long"), F.lit(0).cast("long")) * F.lit(1 << (bits - 1)))
        terms = [
            F.shiftleft(F.shiftright(rank, bit).bitwiseAND(F.lit(1)), bit * len(ranks) + (len(ranks) - 1 - i))
            for bit in range(bits)
            for i, rank in enumerate(ranks)
        ]
        return [*self._partition_prefix(group), reduce(lambda a, b: a + b, terms).asc()]


def _sorted(column: Column, key: SortKey) -> Column:
    if key.descending:
        return column.desc_nulls_first() if key.nulls_first else column.desc_nulls_last()
    return column.asc_nulls_first() if key.nulls_first else column.asc_nulls_last()


def _numeric(column: str, kind: str) -> Column | None:
    """A column whose values order as numbers, as a double, NaN as NULL (None: not such a column)."""
    from pyspark.sql import functions as F

    value = F.expr(quoted(column))
    if kind in ("float", "double"):
        return F.nanvl(value.cast("double"), F.lit(None).cast("double"))
    if kind in ("integer", "long", "decimal"):
        return value.cast("double")
    if kind == "date":
        return F.unix_date(value).cast("double")
    if kind in ("timestamp", "timestamptz"):
        return F.unix_micros(value).cast("double")
    return None


def _linear_rank(value: Column, low: float | None, high: float | None, bits: int) -> Column:
    """`value` scaled onto [0, 2^bits - 1] between the group's minimum and maximum."""
    from pyspark.sql import functions as F

    top = (1 << bits) - 1
    if low is None or high is None or not high > low:
        return F.lit(0).cast("long")
    position = F.floor((value - F.lit(low)) / F.lit(high - low) * F.lit(top))
    return F.coalesce(F.least(F.greatest(position, F.lit(0)), F.lit(top)).cast("long"), F.lit(0).cast("long"))


def _prefix_rank(column: str, kind: str, bits: int) -> Column:
    """The first three bytes of a string (UTF-8, so code point order) or binary value, left-aligned, cut to `bits`."""
    from pyspark.sql import functions as F

    raw = F.encode(F.expr(quoted(column)), "UTF-8") if kind == "string" else F.expr(quoted(column))
    prefix = F.conv(F.rpad(F.hex(F.substring(raw, 1, 3)), 6, "0"), 16, 10).cast("long")
    return F.coalesce(F.shiftright(prefix, PREFIX_BITS - bits) if bits < PREFIX_BITS else F.shiftleft(prefix, bits - PREFIX_BITS), F.lit(0).cast("long"))
