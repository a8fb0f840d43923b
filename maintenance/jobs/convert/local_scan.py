"""CONVERT's scan in the driver, without Spark: for conversions small enough to hold in memory.

The same work as `scan` (the Spark job), on the same plan, with the same result: the key
columns of the targets and of the planned equality deletes are read with pyarrow through
the table's FileIO, keys meet NULL-safely under the same scope rule (a lower data sequence
number; the same partition unless the delete is global; Iceberg's own pairs where a key is
floating-point), the entries of the position delete files folded in are kept where the
position rule applies them, and the positions are written one file per partition, sorted
by path and position, deduplicated; on format 3 they are handed back per data file.

Why a second engine: a Spark task costs about 3 ms per small file it opens (measured on a
1M-row CDC table: 400 key columns read in 1.0 s by Spark, 0.2 s by pyarrow on 8 threads),
and a CONVERT between MERGEs reads hundreds of small files for a few MiB of keys, so the
job was mostly Spark's overhead. `ConvertOptions.local_max_bytes` bounds what runs here
(what is read: the targets' key columns, the delete files), so the driver's memory stays
bounded; bigger conversions, and what this engine does not read (non-Parquet files, nested
or missing key columns, files without field ids and without a name mapping), go to Spark.
Tests run the CONVERT scenarios on both engines and compare with Iceberg's reader.

Matching is Java's: keys of every type are compared as values of the table's current type
(old files are widened as Iceberg's reader widens them: int -> long, float -> double,
decimal precision), NULL meets NULL, and floating-point keys meet by their exact text (-0.0
and 0.0 apart, every NaN together), as Iceberg's `compareTo` does.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyiceberg.io import FileIO
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.schema import Schema
from pyiceberg.table.name_mapping import NameMapping
from pyiceberg.types import UUIDType

from maintenance import faults
from maintenance.errors import SparkJobError
from maintenance.jobs.convert.plan import ConvertPlan
from maintenance.jobs.convert.scan import ScanResult, key_column
from maintenance.table.delete_rule import equality_scope, position_scope
from maintenance.table.files import PartitionKey, TableFile
from maintenance.table.pool import parallel_map
from maintenance.table.position_deletes import DELETE_FILE_PATH_ID, DELETE_POS_ID, POSITION_DELETE_SCHEMA

POSITION_BYTES_IN_MEMORY = 80  # a (path index, position) pair with its share of the join


class NotLocal(Exception):
    """This conversion needs the Spark engine (a file or key column the driver does not read)."""


def local_bytes(plan: ConvertPlan) -> int:
    """What the driver would read: the targets' key columns (their column sizes where the
    manifests record them, else the whole file) and the delete files."""
    key_ids = {fid for d in plan.deletes for fid in d.equality_ids}
    keys = 0
    for target in plan.targets:
        sizes = [target.stats.sizes.get(fid) for fid in key_ids]
        keys += sum(s for s in sizes if s is not None) if all(s is not None for s in sizes) else target.size
    return keys + sum(d.size for d in (*plan.deletes, *plan.position_deletes))


def local_refusal(plan: ConvertPlan, schema: Schema) -> str | None:
    """Why the driver cannot run this conversion (None: it can), from metadata alone."""
    files = (*plan.targets, *plan.deletes, *plan.position_deletes, *plan.position_data)
    other = next((f for f in files if f.file_format != "PARQUET"), None)
    if other is not None:
        return f"{other.file_format} file {other.path}"
    for field_id in {fid for d in plan.deletes for fid in d.equality_ids}:
        key = key_column(schema, field_id)
        if len(key.path) > 1:
            return f"nested key column {'.'.join(key.path)}"
        if isinstance(schema.find_field(field_id).field_type, UUIDType):
            return f"UUID key column {key.path[0]}"
    return None


def find_positions_locally(io: FileIO, schema: Schema, name_mapping: NameMapping | None, plan: ConvertPlan, output_dir: str, target_size: int, *,
                           collect: bool = False, iceberg_pairs: set[tuple[str, str]] | None = None) -> ScanResult:
    """`scan.find_positions`, in the driver (raises NotLocal before writing anything when a
    file turns out to need Spark)."""
    partitions = plan.partition_ids()
    reader = _Reader(io, schema, name_mapping)
    found: list[pa.Table] = []  # columns: part (int32), file_path (string), pos (int64)
    data_rows = delete_rows = 0
    for field_ids, deletes, targets in plan.key_groups():
        matched, read_data, read_deletes = _equality_matches(reader, plan, field_ids, targets, deletes, partitions, iceberg_pairs)
        found.append(matched)
        data_rows += read_data
        delete_rows += read_deletes
    position_records = 0
    if plan.position_deletes:
        kept, position_records = _folded_entries(reader, plan, partitions)
        found.append(kept)
    if not found:
        return ScanResult(list(partitions), {}, 0, delete_rows)
    entries = _deduplicated(pa.concat_tables(found))
    if collect:
        positions: dict[str, set[int]] = {}
        for path, pos in zip(entries.column("file_path").to_pylist(), entries.column("pos").to_pylist()):
            positions.setdefault(path, set()).add(pos)
        return ScanResult(list(partitions), {}, data_rows, delete_rows, positions, position_records)
    written = _write(io, entries, output_dir, max(1, target_size // 8))
    return ScanResult(list(partitions), written, data_rows, delete_rows, {}, position_records)


class _Reader:
    """Reads key columns of table files by field id, as the table's current types.

    Columns are found as Iceberg's Java reader finds them: by field id when any column of
    the file carries one (a column without one is then missing), else by the table's name
    mapping. A key column that is missing, or stored in a form the driver does not read
    exactly as Iceberg's reader does (INT96 or millisecond timestamps of migrated files,
    say), hands the run over to Spark."""

    def __init__(self, io: FileIO, schema: Schema, name_mapping: NameMapping | None) -> None:
        self.io, self.schema, self.name_mapping = io, schema, name_mapping

    def columns(self, f: TableFile, field_ids: Sequence[int]) -> tuple[list[pa.Array], int]:
        """The columns of `field_ids` of one file, cast to the current schema's types, and
        the file's row count (checked against its manifest entry)."""
        with self.io.new_input(f.path).open() as stream:
            parquet = pq.ParquetFile(stream, metadata=_footer(stream, f.size))
            by_id = self._columns_by_id(f, parquet.schema_arrow)
            names = []
            for field_id in field_ids:
                field = by_id.get(field_id)
                if field is None:
                    raise NotLocal(f"{f.path} has no column for field {field_id} (read as a default by Iceberg)")
                target = schema_to_pyarrow(Schema(self.schema.find_field(field_id))).field(0).type
                if not _reads_exactly(field.type, target):
                    raise NotLocal(f"{f.path}: column {field.name} is stored as {field.type}, read as {target}")
                names.append(field.name)
            table = parquet.read(columns=names, use_threads=False)
        if table.num_rows != f.records:
            raise SparkJobError(f"read {table.num_rows} rows of {f.path}, its manifest says {f.records}; nothing was committed")
        arrays = [table.column(name).combine_chunks().cast(schema_to_pyarrow(Schema(self.schema.find_field(field_id))).field(0).type)
                  for name, field_id in zip(names, field_ids)]
        return arrays, table.num_rows

    def _columns_by_id(self, f: TableFile, arrow_schema: pa.Schema) -> dict[int, pa.Field]:
        """Top-level columns by field id, as Iceberg's Java reader assigns them."""
        if _has_ids(arrow_schema):
            found = {}
            for field in arrow_schema:
                field_id = (field.metadata or {}).get(_FIELD_ID)
                if field_id is not None:
                    found[int(field_id)] = field
            return found
        if self.name_mapping is None:
            raise NotLocal(f"{f.path} has no field ids and the table no name mapping")
        ids_by_name = {name: mapped.field_id for mapped in self.name_mapping.root for name in mapped.names if mapped.field_id is not None}
        return {ids_by_name[field.name]: field for field in arrow_schema if field.name in ids_by_name}


_FIELD_ID = b"PARQUET:field_id"
_MAGIC = b"PAR1"


def _footer(stream: Any, size: int) -> pq.FileMetaData:
    """A Parquet file's footer, read exactly (its length, then it). Arrow's own reader reads
    the file's last 64 KiB at once, which for the small files streaming writers leave is the
    whole file: the driver is to read key columns, not files."""
    stream.seek(size - 8)
    tail = stream.read(8)
    if len(tail) != 8 or tail[4:] != _MAGIC:
        raise NotLocal(f"not a Parquet file of {size} bytes (its manifest's size)")
    length = int.from_bytes(tail[:4], "little")
    stream.seek(size - 8 - length)
    return pq.read_metadata(pa.BufferReader(_MAGIC + stream.read(length) + tail))


def _has_ids(arrow_schema: pa.Schema) -> bool:
    """Whether any field, nested ones included, carries a field id (Java's `hasIds`)."""
    def any_id(field: pa.Field) -> bool:
        if field.metadata and _FIELD_ID in field.metadata:
            return True
        kind = field.type
        if pa.types.is_struct(kind):
            return any(any_id(kind.field(i)) for i in range(kind.num_fields))
        if pa.types.is_list(kind) or pa.types.is_large_list(kind):
            return any_id(kind.value_field)
        if pa.types.is_map(kind):
            return any_id(kind.key_field) or any_id(kind.item_field)
        return False

    return any(any_id(field) for field in arrow_schema)


def _reads_exactly(stored: pa.DataType, current: pa.DataType) -> bool:
    """Whether a column stored as `stored` is read by the driver exactly as Iceberg's reader
    reads it as `current`: the same type, or a promotion the spec allows (int -> long,
    float -> double, decimal precision), with timestamps in microseconds as Iceberg writes
    them (a migrated file's INT96 or millisecond timestamps are left to Iceberg's reader)."""
    if pa.types.is_timestamp(stored) or pa.types.is_time(stored):
        return stored.unit == "us" and pa.types.is_timestamp(current) == pa.types.is_timestamp(stored) and current.unit == "us"
    if pa.types.is_decimal(stored):
        return pa.types.is_decimal(current) and stored.scale == current.scale and stored.precision <= current.precision
    if stored in (pa.int32(), pa.int16(), pa.int8()):
        return current in (pa.int32(), pa.int64()) and stored == pa.int32()
    if stored == pa.float32():
        return current in (pa.float32(), pa.float64())
    same_kind = (
        (pa.types.is_string(stored) or pa.types.is_large_string(stored)) and (pa.types.is_string(current) or pa.types.is_large_string(current))
        or (pa.types.is_binary(stored) or pa.types.is_large_binary(stored)) and (pa.types.is_binary(current) or pa.types.is_large_binary(current))
    )
    return same_kind or stored == current


def _join_keys(arrays: Sequence[pa.Array], floating: Sequence[bool]) -> dict[str, pa.Array]:
    """Per key: `n<i>` (is NULL) and `v<i>` (the value, NULL filled; floating-point values
    as their exact text, so -0.0 and 0.0 differ and NaN meets NaN as in Java)."""
    keys: dict[str, pa.Array] = {}
    for i, (array, is_float) in enumerate(zip(arrays, floating)):
        value = pc.cast(array, pa.string()) if is_float else array
        keys[f"n{i}"] = pc.is_null(array)
        keys[f"v{i}"] = pc.fill_null(value, pa.scalar("", pa.string()) if is_float else _zero(array.type))
    return keys


def _zero(arrow_type: pa.DataType) -> pa.Scalar:
    """A constant of the type to stand in for NULL (the NULL flag tells them apart)."""
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return pa.scalar("", arrow_type)
    if pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type):
        return pa.scalar(b"", arrow_type)
    if pa.types.is_fixed_size_binary(arrow_type):
        return pa.scalar(b"\0" * arrow_type.byte_width, arrow_type)
    if pa.types.is_boolean(arrow_type):
        return pa.scalar(False)
    return pa.scalar(0, arrow_type)  # numbers, decimals, dates, times, timestamps: their zero


def _equality_matches(reader: _Reader, plan: ConvertPlan, field_ids: tuple[int, ...], targets: list[TableFile], deletes: list[TableFile],
                      partitions: dict[PartitionKey, int], iceberg_pairs: set[tuple[str, str]] | None) -> tuple[pa.Table, int, int]:
    """Positions of the targets' rows that a delete of `deletes` applies to, and the rows read."""
    floating = [key_column(reader.schema, fid).floating for fid in field_ids]
    delete_parts = parallel_map(lambda d: reader.columns(d, field_ids), deletes, _path)
    data_parts = parallel_map(lambda t: reader.columns(t, field_ids), targets, _path)
    delete_rows = sum(rows for _, rows in delete_parts)
    data_rows = sum(rows for _, rows in data_parts)
    key_names = [name for i in range(len(field_ids)) for name in (f"n{i}", f"v{i}")]

    removed = pa.concat_tables([
        pa.table({**_join_keys(arrays, floating), "e_idx": pa.repeat(pa.scalar(index, pa.int32()), rows)})
        for index, (arrays, rows) in enumerate(delete_parts) if rows
    ]) if delete_rows else None
    data = pa.concat_tables([
        pa.table({**_join_keys(arrays, floating), "d_idx": pa.repeat(pa.scalar(index, pa.int32()), rows), "pos": _positions(rows)})
        for index, (arrays, rows) in enumerate(data_parts) if rows
    ]) if data_rows else None
    if removed is None or data is None:
        return _empty_entries(), data_rows, delete_rows
    # The join gives each data row every delete holding its key (a key a delete file holds
    # twice counts once); each (file, delete) pair met is then judged once by the scope rule.
    joined = data.join(removed.group_by([*key_names, "e_idx"]).aggregate([]), keys=key_names, join_type="inner", use_threads=True)
    pair = pc.add(pc.multiply(pc.cast(joined.column("d_idx"), pa.int64()), 1 << 32), pc.cast(joined.column("e_idx"), pa.int64()))
    met = pc.unique(pair).to_pylist()
    allowed = [code for code in met if _applies(plan, targets[code >> 32], deletes[code & 0xFFFFFFFF], iceberg_pairs)]
    joined = joined.filter(pc.is_in(pair, value_set=pa.array(allowed, pa.int64())))
    part_of = pa.array([partitions[t.partition_key] for t in targets], pa.int32())
    path_of = pa.array([t.path for t in targets], pa.string())
    idx = joined.column("d_idx")
    return pa.table({"part": pc.take(part_of, idx), "file_path": pc.take(path_of, idx), "pos": joined.column("pos")}), data_rows, delete_rows


def _path(f: TableFile) -> str:
    return f.path


def _applies(plan: ConvertPlan, data: TableFile, delete: TableFile, iceberg_pairs: set[tuple[str, str]] | None) -> bool:
    """Whether an equality delete applies to a data file: the scope rule, and Iceberg's own
    pairs where given (floating-point keys)."""
    return equality_scope(delete, data, delete.path in plan.global_deletes) and (iceberg_pairs is None or (data.path, delete.path) in iceberg_pairs)


def _positions(rows: int) -> pa.Array:
    """0, 1, ... rows - 1: a file's row positions."""
    return pc.subtract(pc.cumulative_sum(pa.repeat(pa.scalar(1, pa.int64()), rows)), 1)


def _folded_entries(reader: _Reader, plan: ConvertPlan, partitions: dict[PartitionKey, int]) -> tuple[pa.Table, int]:
    """The entries of the position delete files folded in that the position rule applies to
    a live data file, tagged with that file's partition; and the entries read."""
    data_by_path = {f.path: f for f in plan.position_data}
    data_by_partition: dict[PartitionKey, list[TableFile]] = {}
    for f in plan.position_data:
        data_by_partition.setdefault(f.partition_key, []).append(f)
    tables = parallel_map(lambda d: _position_entries(reader, d), plan.position_deletes, _path)
    kept = []
    read = 0
    for delete, entries in zip(plan.position_deletes, tables):
        read += entries.num_rows
        near = [data_by_path[delete.referenced_data_file]] if delete.referenced_data_file in data_by_path else data_by_partition.get(delete.partition_key, [])
        reachable = [f for f in near if position_scope(delete, f)]
        if not reachable:
            continue
        mask = pc.is_in(entries.column("file_path"), value_set=pa.array([f.path for f in reachable], pa.string()))
        chosen = entries.filter(mask)
        parts = pa.array([partitions[data_by_path[p].partition_key] for p in chosen.column("file_path").to_pylist()], pa.int32())
        kept.append(pa.table({"part": parts, "file_path": chosen.column("file_path"), "pos": chosen.column("pos")}))
    expected = sum(d.records for d in plan.position_deletes)
    if read != expected:
        raise SparkJobError(f"read {read} position delete rows, expected {expected}; nothing was committed")
    return (pa.concat_tables(kept) if kept else _empty_entries()), read


def _position_entries(reader: _Reader, delete: TableFile) -> pa.Table:
    with reader.io.new_input(delete.path).open() as stream:
        parquet = pq.ParquetFile(stream, metadata=_footer(stream, delete.size))
        ids = {field.metadata.get(b"PARQUET:field_id") if field.metadata else None: field.name for field in parquet.schema_arrow}
        path_name, pos_name = ids.get(str(DELETE_FILE_PATH_ID).encode()), ids.get(str(DELETE_POS_ID).encode())
        if path_name is None or pos_name is None:
            raise NotLocal(f"{delete.path} has no file_path/pos field ids")
        table = parquet.read(columns=[path_name, pos_name], use_threads=False)
    if table.num_rows != delete.records:
        raise SparkJobError(f"read {table.num_rows} rows of {delete.path}, its manifest says {delete.records}; nothing was committed")
    return pa.table({"file_path": table.column(path_name).cast(pa.string()), "pos": table.column(pos_name).cast(pa.int64())})


def _empty_entries() -> pa.Table:
    return pa.table({"part": pa.array([], pa.int32()), "file_path": pa.array([], pa.string()), "pos": pa.array([], pa.int64())})


def _deduplicated(entries: pa.Table) -> pa.Table:
    """One entry per (file, position), sorted by partition, path and position."""
    unique = entries.group_by(["part", "file_path", "pos"]).aggregate([])
    return unique.sort_by([("part", "ascending"), ("file_path", "ascending"), ("pos", "ascending")])


def _write(io: FileIO, entries: pa.Table, output_dir: str, max_records_per_file: int) -> dict[int, list[str]]:
    """Each partition's entries as position delete files of at most `max_records_per_file`
    entries under `output_dir/part=<id>/`; returns the files written by partition id."""
    written: dict[int, list[str]] = {}
    parts = entries.column("part")
    base = output_dir.rstrip("/")
    faults.watch("spark-write", base)  # the same kill point as the Spark engine's write
    for part in pc.unique(parts).to_pylist():
        rows = entries.filter(pc.equal(parts, part)).select(["file_path", "pos"]).cast(POSITION_DELETE_SCHEMA)
        for start in range(0, rows.num_rows, max_records_per_file):
            location = f"{base}/part={part}/{uuid.uuid4()}.parquet"
            with io.new_output(location).create(overwrite=False) as stream:
                pq.write_table(rows.slice(start, max_records_per_file), stream)
            written.setdefault(int(part), []).append(location)
    return written
