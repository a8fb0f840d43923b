"""The logical content fingerprint that every maintenance job is checked against.

`sum(cast(xxhash64(...) as decimal(38,0)))` over all rows, read through Spark with every
delete applied: order-independent and exact (a decimal sum cannot wrap), so two physically
different layouts of the same rows agree and one changed row does not.

What a row hashes is its canonical form, because Spark's hash is blind in places:
- xxhash64 skips NULL arguments (`(a, NULL)` hashes like `(NULL, a)`), so a bit mask of
  which columns are NULL is hashed too;
- it maps -0.0 to 0.0, so a floating-point zero also hashes its text ("-0.0" or "0.0";
  only zeros pay for the cast); every NaN hashes alike, as SQL compares them;
- it cannot take maps, so a map is hashed as its entries sorted by key;
- inside structs, lists and maps it skips NULL elements, so nested values are hashed as
  JSON, which keeps every NULL and -0.0 (timestamps to the microsecond).

Two snapshots are compared in one schema: both are read by time travel, which uses each
snapshot's own schema, and then projected by field id onto the table's current schema (a
column added since reads NULL, a promoted column is cast to its new type, dropped and
reordered columns follow the current schema). A schema change without a new snapshot
therefore changes no fingerprint.

`files_fingerprints` is the same sum over the rows of some data files of a snapshot only,
each read through Iceberg's own scan task for it (planned by Iceberg on that snapshot, so
with every delete Iceberg applies to it) in the table's current schema: what verifying a
change needs (`publish/change_scope.py` says which files, and why that is enough).

The sums are taken as the rows pass (Spark's `observe`, `ReadFingerprints`), in a job of one
stage that then drops the rows (the `noop` sink): no shuffle to gather them.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import structlog

from maintenance.catalogs import TableRef
from maintenance.errors import SparkJobError
from maintenance.spark.errors import java_errors
from maintenance.spark.java_helpers import new_helper
from maintenance.spark.jvm import JavaObject, KeptPerJvm, java_long, jvm, load_java_table
from maintenance.spark.planned_tasks import GroupTasks, PlannedTasks
from maintenance.spark.raw_rows import bare_tasks, read_split_size
from maintenance.spark.stream_reads import table_for_file_reads, table_for_reads_of
from maintenance.table.files import TableFile

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

log = structlog.get_logger(__name__)

IcebergType = Any  # a type of Iceberg's schema JSON: a primitive's name, or a dict for struct/list/map
_NULL_MASK_BITS = 62  # columns per NULL-mask long (a positive Java long)
_JSON_OPTIONS = {
    "ignoreNullFields": "false",
    "timestampFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX",
    "timestampNTZFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSS",
}
_PROMOTED_SPARK_TYPES = {"long": "bigint", "double": "double"}  # Iceberg's promotions (int, float); decimals below


@dataclass(frozen=True)
class Fingerprint:
    table: str
    snapshot_id: int | None
    rows: int
    fingerprint: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def same_content(self, other: Fingerprint) -> bool:
        return (self.rows, self.fingerprint) == (other.rows, other.fingerprint)

    def plus(self, other: Fingerprint) -> Fingerprint:
        """This fingerprint with `other`'s rows counted in (the sum is over rows: parts of a
        snapshot's rows add up to the fingerprint of them all)."""
        return Fingerprint(self.table, self.snapshot_id, self.rows + other.rows, str(int(self.fingerprint) + int(other.fingerprint)))


def read_table(spark: SparkSession, ref: TableRef, snapshot_id: int | None = None) -> DataFrame:
    """The table's rows (all deletes applied), at a snapshot (in its schema) or the current one."""
    version = f" VERSION AS OF {int(snapshot_id)}" if snapshot_id is not None else ""
    return spark.sql(f"SELECT * FROM {ref.spark_name}{version}")


def content_fingerprint(spark: SparkSession, ref: TableRef, snapshot_id: int | None = None) -> Fingerprint:
    with java_errors(f"fingerprint {ref}"):
        # Refresh so a commit made through another client (pyiceberg, a writer) is seen.
        spark.sql(f"REFRESH TABLE {ref.spark_name}")
        read_schema, current_schema = _schemas(spark, ref, snapshot_id)
        frame = read_table(spark, ref, snapshot_id)
        row = frame.agg(*_totals(canonical_columns(read_schema, current_schema))).collect()[0]
    return Fingerprint(table=str(ref), snapshot_id=snapshot_id, rows=int(row["rows"]), fingerprint=row["fingerprint"] or "0")


def files_fingerprints(spark: SparkSession, table: JavaObject, name: str, sides: Sequence[tuple[int, Sequence[TableFile]]],
                       readable: Iterable[TableFile]) -> list[Fingerprint]:
    """For each side (a snapshot and some of its live data files), the fingerprint of the
    rows of those files, every delete Iceberg applies to them applied, in the table's
    current schema. `table`: the catalog's Java table, refreshed to know the snapshots;
    `readable`: every file the reads may open (data and deletes:
    `stream_reads.table_for_file_reads`). The sides are read in one Spark job of one stage,
    their tasks side by side (`tasks_fingerprints`). A side with no file reads nothing."""
    readable = list(readable)
    wanted = [(i, snapshot_id, files) for i, (snapshot_id, files) in enumerate(sides) if files]
    found = {i: (0, "0") for i in range(len(sides))}
    if wanted:
        what = f"fingerprint {sum(len(f) for _, _, f in wanted)} files of {name}"
        with java_errors(what):
            started = time.perf_counter()
            planned = [PlannedTasks(spark, table, snapshot_id, files, "verification", readable).for_group([f.path for f in files])
                       for _, snapshot_id, files in wanted]
            log.debug("verification tasks planned", sides=len(wanted), seconds=round(time.perf_counter() - started, 3))
        read = tasks_fingerprints(spark, table, name, planned, table_for_file_reads(spark, table, readable))
        found.update(zip((i for i, _, _ in wanted), read))
    return [Fingerprint(table=name, snapshot_id=snapshot_id, rows=found[i][0], fingerprint=found[i][1]) for i, (snapshot_id, _) in enumerate(sides)]


def written_fingerprint(spark: SparkSession, table: JavaObject, name: str, files: Sequence[JavaObject]) -> Fingerprint:
    """The fingerprint of the rows of data files a rewrite has just written (Java data files,
    in no snapshot yet) as they are on disk, no delete applied, in the table's current schema,
    read by Iceberg's reader with each file's own spec and partition (`raw_rows.bare_tasks`):
    what a snapshot that adds them reads, when no delete applies to them there."""
    reads = table_for_reads_of(spark, table, (str(f.format()) for f in files))
    tasks = GroupTasks(bare_tasks(spark, table, files), [int(f.fileSizeInBytes()) for f in files])
    rows, fingerprint = tasks_fingerprints(spark, table, name, [tasks], reads)[0]
    return Fingerprint(table=name, snapshot_id=None, rows=rows, fingerprint=fingerprint)


def tasks_fingerprints(spark: SparkSession, table: JavaObject, name: str, task_lists: Sequence[GroupTasks], reads: JavaObject) -> list[tuple[int, str]]:
    """(rows, fingerprint) of each list of scan tasks, read through `reads` (the table, or
    it seen through a plain-stream FileIO) in one Spark job of one stage, the lists side by
    side, each shared out over the cores (`raw_rows.read_split_size`), each one's rows
    counted as they pass (`ReadFingerprints`) and then dropped (Spark's `noop` sink): no
    shuffle to gather the sums."""
    found: list[tuple[int, str]] = []
    with java_errors(f"fingerprint {len(task_lists)} reads of {name}"):
        counted = ReadFingerprints(spark, table)
        try:
            names = counted.read(reads, [(tasks.java, read_split_size(spark, tasks.sizes)) for tasks in task_lists])
            for observed in names:
                seen = counted.take(observed)
                if seen is None:
                    raise SparkJobError(f"the fingerprint of {name} was not counted within {counted.WAIT_S:.0f} s (Spark's listener bus is behind)")
                found.append(seen)
        finally:
            counted.close()
    return found


def schema_json(spark: SparkSession, table: JavaObject) -> str:
    """The Java table's current schema, as Iceberg writes it: what rows are hashed in."""
    return str(jvm(spark).org.apache.iceberg.SchemaParser.toJson(table.schema()))


class ReadFingerprints:
    """The fingerprints of lists of scan tasks' rows, taken while a query reads them: `read`
    the lists, then `take` what was seen under each name it gave (rows and fingerprint, in
    the table's current schema as it was when this was made). Spark gathers the sums in the
    tasks that read the rows and hands them to a listener when the query ends
    (`java/ObservedReads.java`, which also builds and runs the query: one Py4J call); if they
    do not come within `WAIT_S`, `take` says so (None). Only a result stage counts each task
    once (a stage Spark computes again, after a lost shuffle output, counts its rows again):
    the query is one stage, no shuffle. Close it when done."""

    WAIT_S = 60.0

    def __init__(self, spark: SparkSession, table: JavaObject) -> None:
        self._spark = spark
        self._totals = _schema_totals(spark, schema_json(spark, table))
        self._prefix = f"icemaint_read_{uuid.uuid4().hex}_"
        self._manager = spark._jsparkSession.listenerManager()  # type: ignore[attr-defined]
        self._listener = new_helper(spark, "ObservedReads").keeping(self._prefix)
        self._manager.register(self._listener)

    def read(self, reads: JavaObject, task_lists: Sequence[tuple[JavaObject, int]]) -> list[str]:
        """Reads each list of scan tasks (a java.util.List, with the bytes one Spark task
        reads) through `reads` in one Spark job, its rows counted and summed as they pass;
        the name to `take` each list's by."""
        names = [f"{self._prefix}{uuid.uuid4().hex}" for _ in task_lists]
        if not names:
            return names
        lists = jvm(self._spark).java.util.ArrayList()
        for tasks, _ in task_lists:
            lists.add(tasks)
        self._listener.read(self._spark._jsparkSession, reads, lists, "\n".join(str(size) for _, size in task_lists),  # type: ignore[attr-defined]
                            self._totals, "\n".join(names))
        return names

    def take(self, name: str) -> tuple[int, str] | None:
        """(rows, fingerprint) of the list `read` under `name`, once its query has ended."""
        seen = self._listener.take(name, int(self.WAIT_S * 1000))  # Spark's row of the totals
        if seen is None:
            return None
        rows, fingerprint = seen.get(0), seen.get(1)  # a count (long) and a sum (string; null over no rows)
        return int(rows), str(fingerprint or "0")

    def close(self) -> None:
        self._manager.unregister(self._listener)


_SCHEMA_TOTALS: KeptPerJvm[JavaObject] = KeptPerJvm(32)  # a schema's JSON -> `_totals` of its canonical columns, a Java Column[]


def _schema_totals(spark: SparkSession, schema_json: str) -> JavaObject:
    """`_totals` for rows of this schema, as a Java `Column[]`, built once per JVM: building
    the canonical columns is a few Py4J calls per column (30 ms for a table of ten, per
    verified change), and column expressions belong to no session or frame, only to the JVM
    that holds them."""

    def make() -> JavaObject:
        schema = json.loads(schema_json)
        columns = _totals(canonical_columns(schema, schema))
        totals = spark.sparkContext._gateway.new_array(jvm(spark).org.apache.spark.sql.Column, len(columns))  # type: ignore[attr-defined]
        for i, column in enumerate(columns):
            totals[i] = column._jc  # type: ignore[attr-defined]
        return totals

    return _SCHEMA_TOTALS.get(spark, schema_json, make)


def _totals(columns: Sequence[Column]) -> list[Column]:
    """The fingerprint's one rule: the row count, and the exact sum of every row's hash of
    its canonical columns (`canonical_columns`)."""
    from pyspark.sql import functions as F

    hashed = F.xxhash64(*columns).cast("decimal(38,0)")
    return [F.count(F.lit(1)).alias("rows"), F.sum(hashed).cast("string").alias("fingerprint")]


def canonical_columns(read_schema: dict[str, Any], current_schema: dict[str, Any]) -> list[Column]:
    """What a row hashes: each current column's canonical value (read by field id from the
    frame of `read_schema`), then the signs of floating-point zeros, then the NULL masks."""
    from pyspark.sql import functions as F

    by_id = {f["id"]: f for f in read_schema["fields"]}
    values, signs = [], []
    for wanted in current_schema["fields"]:
        found = by_id.get(wanted["id"])
        if found is None:
            values.append(F.lit(None).cast("string"))
            continue
        canonical = _canonical(F.col(_quoted(found["name"])), found["type"], wanted["type"])
        if isinstance(wanted["type"], dict):
            canonical = F.to_json(canonical, _JSON_OPTIONS)
        elif wanted["type"] in ("float", "double"):
            signs.append(F.when(canonical == 0, canonical.cast("string")))  # "-0.0" or "0.0"
        values.append(canonical)
    return [*values, *signs, *_null_masks(values)]


def _canonical(value: Column, read_type: IcebergType, wanted: IcebergType) -> Column:
    """`value` (of `read_type`) in the canonical form of `wanted`, its current type."""
    from pyspark.sql import functions as F

    if not isinstance(wanted, dict):
        return _canonical_primitive(value, read_type, wanted)
    kind = wanted["type"]
    if kind == "struct":
        by_id = {f["id"]: f for f in read_type["fields"]}
        children = []
        for child in wanted["fields"]:
            found = by_id.get(child["id"])
            child_value = _canonical(value.getField(found["name"]), found["type"], child["type"]) if found else F.lit(None).cast("string")
            children.append(child_value.alias(child["name"]))
        return F.when(value.isNull(), F.lit(None)).otherwise(F.struct(*children))
    if kind == "list":
        if _plain(read_type, wanted):
            return value
        return F.transform(value, lambda element: _canonical(element, read_type["element"], wanted["element"]))
    if kind == "map":

        def entry(e: Column) -> Column:
            key = _canonical(e.getField("key"), read_type["key"], wanted["key"])
            return F.struct(key.alias("key"), _canonical(e.getField("value"), read_type["value"], wanted["value"]).alias("value"))

        return F.array_sort(F.transform(F.map_entries(value), entry))
    return value


def _canonical_primitive(value: Column, read_type: IcebergType, wanted: str) -> Column:
    if read_type == wanted:
        return value
    if wanted.startswith("decimal"):
        return value.cast(wanted)
    spark_type = _PROMOTED_SPARK_TYPES.get(wanted)
    return value.cast(spark_type) if spark_type else value


def _plain(read_type: IcebergType, wanted: IcebergType) -> bool:
    """The same type on both sides, with no map inside (maps need a canonical form)."""
    return read_type == wanted and not any(isinstance(t, dict) and t["type"] == "map" for t in _walk(wanted))


def _walk(iceberg_type: IcebergType) -> Iterator[IcebergType]:
    yield iceberg_type
    if isinstance(iceberg_type, dict):
        kind = iceberg_type["type"]
        children = [f["type"] for f in iceberg_type["fields"]] if kind == "struct" else [iceberg_type["element"]] if kind == "list" else [iceberg_type["key"], iceberg_type["value"]]
        for child in children:
            yield from _walk(child)


def _null_masks(values: list[Column]) -> list[Column]:
    """One long per 62 columns, bit i set when column i is NULL (xxhash64 skips NULLs)."""
    from pyspark.sql import functions as F

    masks = []
    for start in range(0, len(values), _NULL_MASK_BITS):
        bits = [F.when(v.isNull(), F.lit(1 << i)).otherwise(F.lit(0)) for i, v in enumerate(values[start : start + _NULL_MASK_BITS])]
        mask = bits[0]
        for bit in bits[1:]:
            mask = mask + bit
        masks.append(mask.cast("bigint"))
    return masks


def _schemas(spark: SparkSession, ref: TableRef, snapshot_id: int | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the schema a time-travel read of the snapshot uses, the table's current schema), as
    Iceberg's schema JSON. Spark reads a snapshot with the schema it was committed with
    (the current one when the snapshot does not record it: Iceberg's SnapshotUtil.schemaFor)."""
    table = load_java_table(spark, ref)
    parser = jvm(spark).org.apache.iceberg.SchemaParser
    current = table.schema()
    read = current
    if snapshot_id is not None:
        snapshot = table.snapshot(java_long(spark, int(snapshot_id)))
        schema_id = snapshot.schemaId() if snapshot is not None else None
        if schema_id is not None:
            read = table.schemas().get(schema_id) or current
    return json.loads(parser.toJson(read)), json.loads(parser.toJson(current))


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
