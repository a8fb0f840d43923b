"""The retained-files proof (`publish/proofs/retained_files.py`): an EXPIRE or ORPHANS whose
deletions reach a file a retained snapshot needs fails as content changed, naming the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from maintenance.catalogs import load_table
from maintenance.config import Config
from maintenance.run.outcome import FAILED
from maintenance.run.runner import run_job
from maintenance.table.files import snapshot_files
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory
from tests.support.file_checks import local, missing_referenced_files


@pytest.mark.parametrize("job", ["expire", "orphans"])
def test_a_deletion_of_a_file_a_retained_snapshot_needs_fails_verification(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch, job: str) -> None:
    """The job's deletions are made to take one live data file too: the run fails as content
    changed, naming the file, and reads no data file to find out."""
    import maintenance.run.context as context

    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=600, commits=4)
    live = next(f.path for f in snapshot_files(load_table(config, ref)).data)
    if job == "orphans":
        (local(load_table(config, ref).location()) / "data" / "old.parquet").write_bytes(b"orphan")
        options: dict[str, Any] = {"older_than": 0, "force": True}
    else:
        options = {"max_snapshot_age": 0, "min_snapshots_to_keep": 1}
    real = context.FencedRemover.remove

    def and_one_live(self, phases, total=None):  # type: ignore[no-untyped-def]
        return real(self, [*phases, [live]], total)

    monkeypatch.setattr(context.FencedRemover, "remove", and_one_live)
    monkeypatch.setattr(context.FencedRemover, "_before_batch", _without_reference_check(context.FencedRemover._before_batch))
    result = run_job(config, ref, job, options, verify=True)
    assert result.status == FAILED and result.content_verified is False, (result.status, result.error)
    assert "referenced files missing, needed by a retained snapshot" in (result.error or "") and live.rsplit("/", 1)[-1] in (result.error or "")
    assert missing_referenced_files(load_table(config, ref)) != []
    assert result.counters["files_deleted"] >= 1


def _without_reference_check(real: Any) -> Any:
    """The fault: the batch's look at the newest references no longer protects the live file
    (it would take it out of the batch), so the deletion reaches it."""
    def before_batch(self):  # type: ignore[no-untyped-def]
        io, deadline = real(self)
        self.references = _Nothing(self.references)
        return io, deadline
    return before_batch


class _Nothing:
    def __init__(self, references: Any) -> None:
        self.inner = references

    def refresh(self) -> Any:
        return self.inner.refresh()

    def unreferenced(self, paths: list[str]) -> list[str]:
        return list(paths)
