"""A newer snapshot of a table read before reads only the manifests it did not list
(maintenance/table/files.py): what it finds is what a read from storage finds, file by file,
also after a commit that rewrote manifests and from a snapshot derived from its parent
without reading it (`child_snapshot_files`). No Spark: tables made with pyiceberg."""

from __future__ import annotations

from pathlib import Path

from pyiceberg.catalog import Catalog
from pyiceberg.expressions import EqualTo
from pyiceberg.table import Table

from maintenance.catalogs import get_catalog
from maintenance.config import parse_config
from maintenance.table.files import CACHE, SnapshotFiles, child_snapshot_files, snapshot_files
from maintenance.workload.fleet import FleetOptions, change_tables, make_fleet

FLEET = FleetOptions(tables=1, commits=8, rows=40, partitions=4)


def _seen(files: SnapshotFiles) -> list[tuple[object, ...]]:
    """Everything health and plans read of a file, comparable."""
    return sorted((f.key, int(f.content), f.seq, f.file_seq, f.partition_path, f.size, f.records) for f in files.files)


def _fresh(table) -> SnapshotFiles:  # type: ignore[no-untyped-def]
    """The oracle: the snapshot read from storage, nothing kept."""
    return snapshot_files(table, cached=False)


def _one_table(tmp_path: Path) -> tuple[Catalog, Table]:
    """One table of 8 appends in the test's own home; nothing kept in the process."""
    config = parse_config({"home": str(tmp_path / "home")}, source="tests", base_dir=tmp_path)
    catalog = get_catalog(config, config.default_catalog)
    make_fleet(catalog, config.default_catalog, FLEET)
    CACHE.clear()
    return catalog, catalog.load_table("fleet.t00000")


def test_a_new_commit_reads_only_its_own_manifest(tmp_path: Path) -> None:
    catalog, table = _one_table(tmp_path)
    first = snapshot_files(table)
    assert len(first.manifests) == 8

    change_tables(catalog, FLEET, every=1)  # a writer's append: one new manifest beside the 8
    table = catalog.load_table("fleet.t00000")
    before = CACHE.manifests_read
    newer = snapshot_files(table)
    assert CACHE.manifests_read - before == 1 and len(newer.manifests) == 9
    assert _seen(newer) == _seen(_fresh(table))


def test_after_manifests_are_rewritten_nothing_is_taken_for_empty(tmp_path: Path) -> None:
    catalog, table = _one_table(tmp_path)
    parent = snapshot_files(table)

    table.delete(EqualTo("region", 1))  # whole files go: every manifest holding one is rewritten
    table = catalog.load_table("fleet.t00000")
    child = _fresh(table)
    removed = {f.key for f in parent.files} - {f.key for f in child.files}
    assert removed and child.snapshot_id != parent.snapshot_id
    CACHE.clear()
    derived = child_snapshot_files(table, parent, child.snapshot_id, removed)  # the parent's files less the removed: stale manifest names
    assert derived is not None and _seen(derived) == _seen(child)

    change_tables(catalog, FLEET, every=1)
    table = catalog.load_table("fleet.t00000")
    newest = snapshot_files(table)  # reuses the derived snapshot: only manifests it knows every file of
    assert _seen(newest) == _seen(_fresh(table))
    assert len(newest.files) == len(derived.files) + len(_fresh(table).files) - len(child.files)
