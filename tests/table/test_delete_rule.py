"""The delete-applicability rule against Iceberg's own planner.

Generated tables (hypothesis): data files, equality deletes over one or several key
columns, position deletes (partition-scoped, file-scoped by `referenced_data_file` or by
equal `file_path` bounds), rewrites that keep old data sequence numbers, partition spec
evolution, an int -> long promotion of a key column, and column statistics as every
metrics mode leaves them (none, counts, truncated and full bounds, NULL and NaN counts,
inconsistent ones too). Files are registered with explicit metrics through Iceberg's Java
API; no data needs to exist, since planning reads manifests only.

For every data file, the delete files Iceberg's `planFiles()` applies to it must be among
those icemaint's rule returns (`DeleteIndex.deletes_for`); with no statistics at all the
two must be equal, which pins the scope and sequence-number rules down exactly.
"""

from __future__ import annotations

import itertools
import json
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyiceberg.conversions import to_bytes
from pyiceberg.table import StaticTable
from pyiceberg.types import DoubleType, IntegerType, LongType, StringType

from maintenance.spark.jvm import java_long, jvm
from maintenance.table.delete_rule import DeleteIndex
from maintenance.table.files import Content, snapshot_files
from maintenance.table.position_deletes import DELETE_FILE_PATH_ID
from tests.support.iceberg_oracle import iceberg_deletes_by_data_file, planned_tasks

EXAMPLES = int(os.environ.get("ICEMAINT_RULE_EXAMPLES", "200"))
SCHEMA_JSON = """{"type":"struct","schema-id":0,"fields":[
 {"id":1,"name":"k1","required":false,"type":"long"},
 {"id":2,"name":"k2","required":false,"type":"string"},
 {"id":3,"name":"p","required":true,"type":"int"},
 {"id":4,"name":"kf","required":false,"type":"double"},
 {"id":5,"name":"kr","required":true,"type":"long"},
 {"id":6,"name":"ki","required":false,"type":"int"}]}"""
KEY_SETS = [(1,), (2,), (1, 2), (4,), (5,), (6,), (1, 6), (2, 5)]
STRINGS = ["", "a", "ab", "b", "é", "z", "\U0001f600", "\uffff"]
SPECS = {
    "none": '{"spec-id":0,"fields":[]}',
    "identity": '{"spec-id":0,"fields":[{"name":"p","transform":"identity","source-id":3,"field-id":1000}]}',
    "bucket": '{"spec-id":0,"fields":[{"name":"k1_bucket","transform":"bucket[2]","source-id":1,"field-id":1000}]}',
    "void": '{"spec-id":0,"fields":[{"name":"p_void","transform":"void","source-id":3,"field-id":1000}]}',
    # Java tells -0.0 and 0.0 apart as partition values (Double.compare); Python's == does not.
    "double": '{"spec-id":0,"fields":[{"name":"kf","transform":"identity","source-id":4,"field-id":1000}]}',
}
DOUBLE_PARTITIONS = [0.0, -0.0, 1.5]


def _values(field_id: int, promoted: bool) -> st.SearchStrategy[Any]:
    if field_id == 2:
        return st.sampled_from(STRINGS)
    if field_id == 4:
        return st.sampled_from([-1.5, -0.0, 0.0, 1.0, 2.5, float("nan")])
    return st.integers(-3, 6)


@st.composite
def column_stats(draw: st.DrawFn, field_id: int, records: int) -> dict[str, Any]:
    """What one column's metrics may say, as the metrics modes and writers leave them."""
    mode = draw(st.sampled_from(["none", "counts", "full", "full", "truncate"]))
    out: dict[str, Any] = {}
    if mode == "none":
        return out
    out["values"] = records
    out["nulls"] = draw(st.sampled_from([0, 0, 1, records]) | st.integers(0, records))
    if field_id == 4 and draw(st.booleans()):
        out["nans"] = draw(st.integers(0, records))
    if mode in ("full", "truncate") and out["nulls"] < records:
        a, b = draw(_values(field_id, False)), draw(_values(field_id, False))
        if isinstance(a, float) and (a != a or b != b):
            return out  # writers leave NaN out of bounds
        low, high = sorted([a, b], key=lambda v: v.encode("utf-16-be", "surrogatepass") if isinstance(v, str) else v)
        if mode == "truncate" and field_id == 2:
            low, high = low[:1], (high[:1] + "\uffff") if high else high
        out["bounds"] = (low, high)
    return out


@st.composite
def file_metrics(draw: st.DrawFn) -> dict[str, Any]:
    records = draw(st.integers(1, 5))
    return {"records": records, "columns": {fid: draw(column_stats(fid, records)) for fid in (1, 2, 3, 4, 5, 6)}}


operation = st.one_of(
    st.tuples(st.just("data"), st.integers(0, 2), file_metrics(), st.booleans()),
    st.tuples(st.just("eq"), st.integers(0, 2), file_metrics(), st.sampled_from(KEY_SETS), st.booleans()),
    st.tuples(st.just("pos"), st.integers(0, 2), file_metrics(), st.sampled_from(["partition", "referenced", "bounds"]), st.integers(0, 50)),
    st.tuples(st.just("rewrite"), st.integers(0, 50), file_metrics(), st.booleans()),
    st.tuples(st.just("spec"), st.sampled_from(["drop", "bucket", "identity"])),
    st.tuples(st.just("promote")),
)


@dataclass
class GeneratedTable:
    """A Java table built from operations, for the rule and the oracle to look at."""

    spark: Any
    location: str
    spec: str
    no_stats: bool
    java: Any = None
    promoted: bool = False
    data_paths: list[str] = field(default_factory=list)
    names: itertools.count = field(default_factory=itertools.count)

    def __post_init__(self) -> None:
        iceberg = jvm(self.spark).org.apache.iceberg
        schema = iceberg.SchemaParser.fromJson(SCHEMA_JSON)
        spec = iceberg.PartitionSpecParser.fromJson(schema, SPECS[self.spec])
        props = jvm(self.spark).java.util.HashMap()
        props.put("format-version", "2")
        props.put("commit.manifest-merge.enabled", "false")
        # Checksum-free local files: these tables live for one example, and commits get cheaper.
        conf = jvm(self.spark).org.apache.hadoop.conf.Configuration(self.spark.sparkContext._jsc.hadoopConfiguration())
        conf.set("fs.file.impl", "org.apache.hadoop.fs.RawLocalFileSystem")
        conf.set("fs.file.impl.disable.cache", "true")
        tables = iceberg.hadoop.HadoopTables(conf)
        self.java = tables.create(schema, spec, props, self.location)
        self.iceberg = iceberg

    # -- building files --------------------------------------------------------------------
    # Records are parsed from Iceberg's own JSON form (ContentFileParser): Py4J turns every
    # java.lang.Long into a Python int, so maps of long counts cannot be built call by call.
    def _stats(self, metrics: dict[str, Any]) -> dict[str, Any]:
        if self.no_stats:
            return {}
        schema = self.java.schema()
        counts: dict[str, dict[int, int]] = {"value-counts": {}, "null-value-counts": {}, "nan-value-counts": {}}
        bounds: dict[str, dict[int, str]] = {"lower-bounds": {}, "upper-bounds": {}}
        for fid, column in metrics["columns"].items():
            if "values" in column:
                counts["value-counts"][fid] = column["values"]
                counts["null-value-counts"][fid] = column["nulls"]
            if "nans" in column:
                counts["nan-value-counts"][fid] = column["nans"]
            if "bounds" in column:
                kind = str(schema.findField(fid).type().typeId().toString())
                ptype = {"LONG": LongType(), "INTEGER": IntegerType(), "STRING": StringType(), "DOUBLE": DoubleType()}[kind]
                for name, value in zip(("lower-bounds", "upper-bounds"), column["bounds"]):
                    bounds[name][fid] = to_bytes(ptype, value).hex()
        return {name: {"keys": list(m), "values": list(m.values())} for name, m in {**counts, **bounds}.items()}

    def _partition(self, spec: Any, partition: int) -> dict[str, Any]:
        if spec.isUnpartitioned():
            return {str(f.fieldId()): None for f in spec.fields()}
        values = {}
        for pfield in spec.fields():
            transform = str(pfield.transform().toString())
            if transform.startswith("bucket"):
                values[str(pfield.fieldId())] = partition % 2
            elif int(pfield.sourceId()) == 4:
                values[str(pfield.fieldId())] = DOUBLE_PARTITIONS[partition % len(DOUBLE_PARTITIONS)]
            else:
                values[str(pfield.fieldId())] = partition
        return values

    def _file(self, content: str, kind: str, partition: int, records: int, extra: dict[str, Any]) -> Any:
        spec = self.java.spec()
        record = {
            "spec-id": int(spec.specId()), "content": content, "file-path": self._path(kind), "file-format": "PARQUET",
            "partition": self._partition(spec, partition), "file-size-in-bytes": 1000, "record-count": records, **extra,
        }
        node = self.iceberg.util.JsonUtil.mapper().readTree(json.dumps(record))
        return self.iceberg.ContentFileParser.fromJson(node, spec)

    def _path(self, kind: str) -> str:
        return f"{self.location}/data/{kind}-{next(self.names)}-{uuid.uuid4().hex[:6]}.parquet"

    def data_file(self, partition: int, metrics: dict[str, Any]) -> Any:
        return self._file("DATA", "data", partition, metrics["records"], self._stats(metrics))

    def equality_delete(self, partition: int, metrics: dict[str, Any], key: tuple[int, ...]) -> Any:
        return self._file("EQUALITY_DELETES", "eq", partition, metrics["records"], {**self._stats(metrics), "equality-ids": list(key)})

    def position_delete(self, partition: int, metrics: dict[str, Any], scope: str, target: str | None) -> Any:
        extra: dict[str, Any] = {}
        if target is not None and scope == "referenced":
            extra["referenced-data-file"] = target
        elif target is not None:  # equal file_path bounds make the file file-scoped; unequal do not
            low = target if scope == "bounds" else "a"
            extra["lower-bounds"] = {"keys": [DELETE_FILE_PATH_ID], "values": [low.encode().hex()]}
            extra["upper-bounds"] = {"keys": [DELETE_FILE_PATH_ID], "values": [target.encode().hex()]}
        return self._file("POSITION_DELETES", "pos", partition, metrics["records"], extra)

    # -- operations ------------------------------------------------------------------------
    def apply(self, op: tuple[Any, ...]) -> None:
        kind = op[0]
        if kind == "data":
            _, partition, metrics, with_eq = op
            data = self.data_file(partition, metrics)
            delta = self.java.newRowDelta().addRows(data)
            if with_eq:  # same commit, same sequence number: must not apply to this file
                delta = delta.addDeletes(self.equality_delete(partition, metrics, (1,)))
            delta.commit()
            self.data_paths.append(str(data.location()))
        elif kind == "eq":
            _, partition, metrics, key, with_data = op
            delta = self.java.newRowDelta().addDeletes(self.equality_delete(partition, metrics, key))
            if with_data:
                data = self.data_file(partition, metrics)
                delta = delta.addRows(data)
                self.data_paths.append(str(data.location()))
            delta.commit()
        elif kind == "pos":
            _, partition, metrics, scope, target_index = op
            target = self.data_paths[target_index % len(self.data_paths)] if self.data_paths and scope != "partition" else None
            self.java.newRowDelta().addDeletes(self.position_delete(partition, metrics, scope, target)).commit()
        elif kind == "rewrite" and self.data_paths:
            _, index, metrics, keep_seq = op
            live = {str(t.file().location()): t.file() for t in planned_tasks(self.java)}
            old_path = self.data_paths[index % len(self.data_paths)]
            if old_path not in live:
                return
            old = live[old_path]
            new = self.data_file(0, {**metrics, "records": int(old.recordCount())})  # a rewrite adds no rows
            rewrite = self.java.newRewrite().deleteFile(old).addFile(new)
            if keep_seq:
                rewrite = rewrite.dataSequenceNumber(java_long(self.spark, int(old.dataSequenceNumber())))
            try:
                rewrite.commit()
            except Exception as exc:  # Iceberg refuses a rewrite that would orphan deletes: not a table
                if "ValidationException" not in str(exc):
                    raise
                return
            self.data_paths.append(str(new.location()))
        elif kind == "spec" and self.spec != "void":
            expressions = self.iceberg.expressions.Expressions
            update = self.java.updateSpec()
            current = {str(f.name()) for f in self.java.spec().fields()}
            if op[1] == "drop" and current:
                for name in current:
                    update = update.removeField(name)
            elif op[1] == "bucket" and "k1_bucket" not in current:
                update = update.addField("k1_bucket", expressions.bucket("k1", 2))
            elif op[1] == "identity" and "p" not in current:
                update = update.addField("p")
            else:
                return
            update.commit()
        elif kind == "promote" and not self.promoted:
            self.java.updateSchema().updateColumn("ki", self.iceberg.types.Types.LongType.get()).commit()
            self.promoted = True

    def metadata_location(self) -> str:
        self.java.refresh()
        return str(self.java.operations().current().metadataFileLocation())


def icemaint_deletes_by_data_file(metadata_location: str, no_stats: bool = False) -> dict[str, set[str]]:
    """The rule's answer per data file; on the way, the counts health takes from the rule's
    scope alone (`applied_by_scope`) must hold at least what the rule applies, and exactly
    that without statistics."""
    table = StaticTable.from_metadata(metadata_location)
    files = snapshot_files(table)
    index = DeleteIndex(files)
    found = {}
    for data in files.data:
        deletes = index.deletes_for(data)
        equality = sum(1 for d in deletes if d.content == Content.EQUALITY_DELETES)
        position = sum(1 for d in deletes if d.content == Content.POSITION_DELETES and not d.is_dv)
        applied = index.applied_by_scope(data)
        assert applied.equality_files >= equality and applied.position_files == position, data.path
        if no_stats:
            assert applied.equality_files == equality, data.path
        found[data.path] = {d.path for d in deletes}
    return found


@pytest.mark.slow  # one of the slowest: make test-integration runs it
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large])
@given(spec=st.sampled_from(list(SPECS)), operations=st.lists(operation, min_size=1, max_size=9), no_stats=st.booleans())
def test_rule_covers_every_delete_iceberg_applies(spark, tmp_path_factory: pytest.TempPathFactory, spec: str, operations: list, no_stats: bool) -> None:
    table = GeneratedTable(spark, f"file:{tmp_path_factory.mktemp('rule')}/t", spec, no_stats)
    for op in operations:
        table.apply(op)
    if table.java.currentSnapshot() is None:
        return
    iceberg = iceberg_deletes_by_data_file(table.java)
    ours = icemaint_deletes_by_data_file(table.metadata_location(), no_stats)
    assert set(ours) == set(iceberg)
    for path, applied in iceberg.items():
        assert applied <= ours[path], f"{path}: Iceberg applies {sorted(applied - ours[path])} which the rule misses"
        if no_stats:
            assert ours[path] == applied, f"{path}: without statistics the rule must equal Iceberg's"


def test_rule_prunes_by_bounds_only_where_values_are_known(spark, tmp_path: Path) -> None:
    """Deterministic: disjoint bounds prune; counts alone (no bounds) never do; NULL keys
    in the delete and an all-NULL column in the data keep the pair."""
    table = GeneratedTable(spark, f"file:{tmp_path}/t", "none", no_stats=False)

    def metrics(**columns: dict[str, Any]) -> dict[str, Any]:
        return {"records": 3, "columns": {int(k[1:]): v for k, v in columns.items()}}

    low = table.data_file(0, metrics(c1={"values": 3, "nulls": 0, "bounds": (0, 2)}))
    counts_only = table.data_file(0, metrics(c1={"values": 3, "nulls": 0}))
    only_null = table.data_file(0, metrics(c1={"values": 3, "nulls": 3}))
    table.java.newAppend().appendFile(low).appendFile(counts_only).appendFile(only_null).commit()
    high_keys = table.equality_delete(0, metrics(c1={"values": 3, "nulls": 0, "bounds": (5, 6)}), (1,))
    null_and_values = table.equality_delete(0, metrics(c1={"values": 3, "nulls": 1}), (1,))  # issue 12: counts, no bounds
    table.java.newRowDelta().addDeletes(high_keys).addDeletes(null_and_values).commit()

    ours = icemaint_deletes_by_data_file(table.metadata_location())
    iceberg = iceberg_deletes_by_data_file(table.java)
    high, mixed = str(high_keys.location()), str(null_and_values.location())
    assert ours[str(low.location())] == {mixed} == iceberg[str(low.location())]
    assert ours[str(counts_only.location())] == {high, mixed} == iceberg[str(counts_only.location())]
    assert ours[str(only_null.location())] == {mixed} == iceberg[str(only_null.location())]


def test_minus_zero_and_zero_are_two_partitions(spark, tmp_path: Path) -> None:
    """Deterministic: Iceberg keeps partitions kf=-0.0 and kf=0.0 apart (Double.compare), so
    neither an equality delete nor a partition-scoped position delete of one reaches the other."""
    table = GeneratedTable(spark, f"file:{tmp_path}/t", "double", no_stats=True)
    no_stats = {"records": 3, "columns": {}}
    zero, minus_zero = table.data_file(0, no_stats), table.data_file(1, no_stats)
    table.java.newAppend().appendFile(zero).appendFile(minus_zero).commit()
    eq = table.equality_delete(1, no_stats, (1,))
    pos = table.position_delete(1, no_stats, "partition", None)
    table.java.newRowDelta().addDeletes(eq).addDeletes(pos).commit()

    ours = icemaint_deletes_by_data_file(table.metadata_location(), no_stats)
    iceberg = iceberg_deletes_by_data_file(table.java)
    both = {str(eq.location()), str(pos.location())}
    assert iceberg[str(minus_zero.location())] == both == ours[str(minus_zero.location())]
    assert iceberg[str(zero.location())] == set() == ours[str(zero.location())]


def test_the_rule_as_spark_columns_agrees_with_the_rule_on_metadata(spark) -> None:  # type: ignore[no-untyped-def]
    """CONVERT's join and the position entries CONVERT and REWRITE carry over apply the rule
    row by row in Spark (`*_scope_column`); over every combination of sequence numbers,
    partitions, global and file-scoped deletes, they must say what `*_scope` says."""
    from maintenance.table.delete_rule import equality_scope, equality_scope_column, position_scope, position_scope_column
    from maintenance.table.files import Content, TableFile

    def file(path: str, content: Content, seq: int, partition: int, referenced: str | None = None) -> TableFile:
        return TableFile(path=path, content=content, file_format="PARQUET", spec_id=0, partition=(partition,), partition_path=f"p={partition}",
                         seq=seq, file_seq=seq, records=1, size=1, referenced_data_file=referenced)

    cases = []
    for data_seq, delete_seq, data_part, delete_part, is_global, referenced in itertools.product(
            (1, 2, 3), (1, 2, 3), (0, 1), (0, 1), (False, True), (None, "a", "b")):
        data = file("a", Content.DATA, data_seq, data_part)
        equality = file("e", Content.EQUALITY_DELETES, delete_seq, delete_part)
        position = file("d", Content.POSITION_DELETES, delete_seq, delete_part, referenced)
        cases.append((data_seq, delete_seq, data_part, delete_part, is_global, referenced,
                      equality_scope(equality, data, is_global), position_scope(position, data)))
    frame = spark.createDataFrame(cases, "d_seq long, s_seq long, d_part int, s_part int, s_global boolean, s_ref string, eq boolean, pos boolean")
    from pyspark.sql import functions as F

    checked = frame.select(
        (equality_scope_column(F.col("d_seq"), F.col("d_part"), F.col("s_seq"), F.col("s_part"), F.col("s_global")) == F.col("eq")).alias("eq_agrees"),
        (position_scope_column(F.lit("a"), F.col("d_seq"), F.col("d_part"), F.col("s_seq"), F.col("s_part"), F.col("s_ref")) == F.col("pos")).alias("pos_agrees"),
    ).collect()
    assert len(checked) == len(cases) and all(r.eq_agrees and r.pos_agrees for r in checked)
