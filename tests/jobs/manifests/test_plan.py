"""MANIFESTS' plan on hand-built manifest lists (`jobs/manifests/plan.py`): which specs' manifests
are rewritten."""

from __future__ import annotations

from typing import Any

from maintenance.jobs.manifests.options import ManifestsOptions
from maintenance.jobs.manifests.plan import plan_manifests
from maintenance.table.files import Content, ManifestInfo, SnapshotFiles
from tests.support.metadata import BY_REGION, SCHEMA, UNPARTITIONED, fresh_name


def manifest(length: int, spec: int = 1, deletes: bool = False, added_by: int = 1) -> ManifestInfo:
    return ManifestInfo(f"/t/m-{fresh_name()}.avro", length, Content.POSITION_DELETES if deletes else Content.DATA, spec, 1, added_by)


def test_manifests_are_rewritten_only_where_fewer_would_hold_them() -> None:
    def planned(*manifests: ManifestInfo, **options: Any) -> list[int]:
        files = SnapshotFiles("uuid", 1, 1, 2, SCHEMA, {0: UNPARTITIONED, 1: BY_REGION}, [], list(manifests))
        return sorted(plan_manifests(files, 100, ManifestsOptions(**options), written_by_manifests={9}).specs)

    assert planned(manifest(10), manifest(10), manifest(60, spec=0)) == [1]
    assert planned(manifest(90), manifest(90)) == []  # two are needed at the target size anyway
    assert planned(manifest(10), manifest(10, deletes=True)) == []  # one of each kind
    assert planned(manifest(10, deletes=True), manifest(10, deletes=True), manifest(10, deletes=True)) == [1]
    assert planned(manifest(10), manifest(10), min_manifests=3) == []
    assert planned(manifest(10, added_by=9), manifest(10, added_by=9), manifest(10)) == []
