"""CONVERT's and REWRITE's changes corrupted on their way to the commit, one position at a time.

A corruption takes the positions one new delete file (format 2) or the new deletion vectors
(format 3) hold and changes them as `how` says, using what the table shows before the run
(`Visible`: every row Spark reads, by file and position): so each corruption is known to
change what readers see, and a test that it is caught cannot pass because the corruption
happened to change nothing.

- `missing`: one position the job found is left out (a deleted row comes back);
- `extra`: a visible row's position is added (a visible row is deleted);
- `wrong-file`: one position is moved to another data file of the same partition, at a
  position visible there (as many rows deleted as before, other ones).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.spark.content_files import ContentFiles
from maintenance.spark.jvm import load_java_table
from maintenance.table.files import snapshot_files
from maintenance.table.position_deletes import POSITION_DELETE_SCHEMA
from tests.support.file_checks import local

HOWS = ("missing", "extra", "wrong-file")
Positions = dict[str, set[int]]  # data file path -> positions


@dataclass(frozen=True)
class Visible:
    """What the table reads before the run: visible (file, position) pairs, and each data
    file's partition mates."""

    rows: frozenset[tuple[str, int]]
    position_deleted: frozenset[tuple[str, int]]  # by the position deletes and DVs the table has now
    mates: dict[str, list[str]]  # data file -> the other data files of its partition

    @classmethod
    def of(cls, spark: Any, config: Config, ref: TableRef) -> Visible:
        spark.sql(f"REFRESH TABLE {ref.spark_name}")
        rows = frozenset((r[0], int(r[1])) for r in spark.sql(f"SELECT _file, _pos FROM {ref.spark_name}").collect())
        position_deleted = frozenset((r[0], int(r[1])) for r in spark.sql(f"SELECT file_path, pos FROM {ref.spark_name}.position_deletes").collect())
        data = snapshot_files(load_table(config, ref)).data
        mates = {f.path: [g.path for g in data if g.partition_key == f.partition_key and g.path != f.path] for f in data}
        return cls(rows, position_deleted, mates)

    def first_visible(self, path: str, taken: set[int]) -> int | None:
        found = sorted(pos for file, pos in self.rows if file == path and pos not in taken)
        return found[0] if found else None


def corrupted(how: str, positions: Positions, visible: Visible, only: str | None = None, *, among: set[str] | None = None,
              merged_in: frozenset[tuple[str, int]] = frozenset()) -> Positions:
    """`positions` with one change as `how` says, made in the first data file (or `only`).
    `merged_in`: positions the writer adds back whatever it is given (the DV writer merges
    what the table's position deletes and DVs delete now), never the one taken away;
    `among`: the data files a position may move to."""
    result = {path: set(found) for path, found in positions.items()}

    def victims(path: str) -> list[int]:
        return sorted(pos for pos in result[path] if (path, pos) not in merged_in)

    path = only if only is not None else sorted(p for p in result if victims(p) or how == "extra")[0]
    found = victims(path)
    assert found or how == "extra", f"every position of {path} is deleted by a position delete already"
    victim = found[0] if found else -1
    if how == "missing":
        result[path].discard(victim)
    elif how == "extra":
        extra = visible.first_visible(path, result[path])
        assert extra is not None, f"no visible row left in {path} to delete"
        result[path].add(extra)
    elif how == "wrong-file":
        mates = [mate for mate in visible.mates[path] if among is None or mate in among]
        target = next(((mate, pos) for mate in mates if (pos := visible.first_visible(mate, result.get(mate, set()))) is not None), None)
        assert target is not None, f"no partition mate of {path} with a visible row"
        result[path].discard(victim)
        result.setdefault(target[0], set()).add(target[1])
    else:
        raise ValueError(how)
    return result


@contextmanager
def corrupting(spark: Any, config: Config, ref: TableRef, monkeypatch: pytest.MonkeyPatch, how: str | None, module: Any,
               only: str | None = None, remove_also: list[Any] = ()) -> Iterator[None]:
    """While inside, `module`'s (`jobs.convert.commit` or `jobs.rewrite.run`) change is
    corrupted as `how` says: on format 2 the first new position delete file is written again
    corrupted (a new file, its own record), on format 3 the positions handed to the DV
    writer (`build_dvs`); `how=None` corrupts nothing. `remove_also`: Java delete files the
    change also removes."""
    visible = Visible.of(spark, config, ref)
    real_rewrite = module.delete_file_rewrite

    def rewrite(spark_: Any, snapshot_id: int, removed: Any, added: Any) -> Any:
        added = list(added)
        if how is not None:
            for i, (delete_file, seq) in enumerate(added):
                if str(delete_file.format()) == "PARQUET":
                    added[i] = (_rewritten(spark_, config, ref, delete_file, how, visible, only), seq)
                    break
        return real_rewrite(spark_, snapshot_id, [*removed, *remove_also], added)

    with monkeypatch.context() as patched:
        patched.setattr(module, "delete_file_rewrite", rewrite)
        if how is not None and hasattr(module, "build_dvs"):
            real_build = module.build_dvs

            def build(spark_: Any, table: Any, io: Any, files: Any, new: dict[str, Any], *rest: Any) -> Any:
                from maintenance.jobs.deletion_vectors.build import NewDeletes

                seq = max(d.seq for d in new.values())
                changed = corrupted(how, {path: set(d.positions) for path, d in new.items()}, visible, only, among=set(new), merged_in=visible.position_deleted)
                return real_build(spark_, table, io, files, {path: NewDeletes(found, new[path].seq if path in new else seq)
                                                              for path, found in changed.items()}, *rest)

            patched.setattr(module, "build_dvs", build)
        yield


def _rewritten(spark: Any, config: Config, ref: TableRef, delete_file: Any, how: str, visible: Visible, only: str | None) -> Any:
    """A new position delete file with `delete_file`'s positions corrupted, in its folder and partition."""
    location = str(delete_file.location())
    entries = pq.read_table(local(location)).to_pylist()
    positions: Positions = {}
    for entry in entries:
        positions.setdefault(entry["file_path"], set()).add(int(entry["pos"]))
    changed = corrupted(how, positions, visible, only if only in positions else None)
    rows = sorted((path, pos) for path, found in changed.items() for pos in found)
    new_location = f"{location.rsplit('/', 1)[0]}/corrupt-{uuid.uuid4().hex}.parquet"
    table = pa.Table.from_pylist([{"file_path": path, "pos": pos} for path, pos in rows], schema=POSITION_DELETE_SCHEMA)
    pq.write_table(table, local(new_location))
    java = load_java_table(spark, ref)
    return ContentFiles(spark, java).position_delete_file(new_location, int(delete_file.specId()), delete_file.partition())

