"""Tables whose operations are gated (`java/GatedOperations.java`): the one Python door to
that helper.

Three tables are made of the catalog's table with gated operations, each a `BaseTable` of
the catalog's name:
- the fenced table (`fenced_table.py`): commits and snapshot ids go to the fence, a Python
  object behind Py4J; everything else is answered in the JVM;
- the view of a staged change: metadata no catalog holds shown as the table's current one,
  commits refused (what verification reads the staged snapshot through);
- the plain-stream view (`stream_reads.py`): files read through another FileIO, commits
  refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from maintenance.spark.java_helpers import new_helper
from maintenance.spark.jvm import JavaObject, jvm

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def gated_table(spark: SparkSession, real: JavaObject, gate: JavaObject) -> tuple[JavaObject, JavaObject]:
    """(the gated operations, the table over them): `real`'s operations with commits and
    snapshot ids sent to `gate` (a Python `TableOperations`); the operations also `show`
    staged metadata while an action finishes (`FencedTable.stage_performed`)."""
    operations = new_helper(spark, "GatedOperations").around(real.operations(), gate)
    return operations, _table(spark, operations, real)


def staged_view(spark: SparkSession, real: JavaObject, metadata: JavaObject) -> JavaObject:
    """`real` showing `metadata` (a staged change's, which no catalog holds) as its current
    metadata; commits refused."""
    return _table(spark, new_helper(spark, "GatedOperations").around(real.operations(), None).show(metadata), real)


def read_through(spark: SparkSession, real: JavaObject, io: JavaObject) -> JavaObject:
    """`real` reading and writing files through `io` (a Java FileIO); commits refused."""
    return _table(spark, new_helper(spark, "GatedOperations").around(real.operations(), None).through(io), real)


def _table(spark: SparkSession, operations: JavaObject, real: JavaObject) -> JavaObject:
    return jvm(spark).org.apache.iceberg.BaseTable(operations, real.name())
