"""Iceberg partition and sort transforms as Spark columns, through Iceberg's own Spark functions.

Iceberg registers its transforms as functions of every Iceberg catalog (`<catalog>.system.bucket`,
`truncate`, `years`, `months`, `days`, `hours`), which compute exactly what Iceberg's writers
compute, so rows sorted or clustered by these columns line up with the table's partitions
and sort order.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from maintenance.errors import UsageError

if TYPE_CHECKING:
    from pyspark.sql import Column

_PARAMETERISED = re.compile(r"^(bucket|truncate)\[(\d+)\]$")
_TIME = {"year": "years", "month": "months", "day": "days", "hour": "hours"}


def quoted(column: str) -> str:
    """A (dotted, possibly nested) column name as a Spark SQL identifier."""
    return ".".join(f"`{part.replace('`', '``')}`" for part in column.split("."))


def transform_column(catalog: str, column: str, transform: str) -> Column:
    """The Spark column of `transform` (Iceberg's spelling: identity, bucket[16], day, ...) applied to `column`."""
    from pyspark.sql import functions as F

    name = quoted(column)
    if transform == "identity":
        return F.expr(name)
    match = _PARAMETERISED.match(transform)
    if match:
        return F.expr(f"{quoted(catalog)}.system.{match[1]}({match[2]}, {name})")
    if transform in _TIME:
        return F.expr(f"{quoted(catalog)}.system.{_TIME[transform]}({name})")
    raise UsageError(f"the transform {transform} of column {column} cannot be ordered by")
