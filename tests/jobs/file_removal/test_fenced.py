"""The deletion fence's batches, in this process (`maintenance/jobs/file_removal/fenced.py`): a real
lease on the SQLite state database, local files, and references that the test moves on
(a writer's import) or makes slow (a pause inside their read). The end-to-end versions, with
the process stopped by SIGSTOP, are in `tests/jobs/file_removal/test_fenced_pauses.py`."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from pyiceberg.io.pyarrow import PyArrowFileIO

from maintenance.config import Config
from maintenance.jobs.file_removal.fenced import FencedRemover, discard_unpublished
from maintenance.lease.fence import Fence, FencedError
from maintenance.lease.keeper import LeaseKeeper
from maintenance.state.store import StateStore, open_state
from maintenance.table.marks import EPOCH_PROPERTY

WINDOW_S = 0.3  # a short window, so a "pause" of a few tenths of a second outlasts it
TTL_S = 60.0  # the lease is proven by time throughout: only the lease row can fence


@pytest.fixture
def state(config: Config) -> StateStore:
    return open_state(config)


@pytest.fixture
def fence(state: StateStore) -> Iterator[Fence]:
    """A held lease whose keeper never renews (not started): nothing but a read of the lease
    row can tell the holder that it was released."""
    name = f"local.deletion.t{uuid.uuid4().hex[:8]}"
    asked_at = time.monotonic()
    lease = state.leases.acquire(name, "holder-A", ttl_s=TTL_S)
    assert lease is not None
    keeper = LeaseKeeper(state.leases, lease, ttl_s=TTL_S, asked_at=asked_at)
    yield Fence(state.leases, keeper, job="orphans", run_id="run-1")
    state.leases.release(keeper.lease)


class MovingReferences:
    """What a table references, as of each look: `before_look(n)` runs inside the nth look,
    after the metadata was "loaded" (what the look returns is fixed by then), as a writer's
    commit or a pause there would."""

    def __init__(self, epoch: int, before_look: Callable[[int], None] = lambda n: None) -> None:
        self.referenced: set[str] = set()
        self.looks = 0
        self.before_look = before_look
        self.table = SimpleNamespace(metadata=SimpleNamespace(properties={EPOCH_PROPERTY: str(epoch)}), io=PyArrowFileIO())

    def refresh(self) -> SimpleNamespace:
        self.looks += 1
        named = set(self.referenced)  # the metadata as loaded now
        self.before_look(self.looks)
        self._named = named
        return self.table

    def unreferenced(self, paths: list[str]) -> list[str]:
        return [path for path in paths if path not in self._named]


def orphans(tmp_path: Path, count: int) -> list[str]:
    paths = []
    for n in range(count):
        path = tmp_path / f"orphan-{n:03d}.parquet"
        path.write_bytes(b"unreferenced")
        paths.append(str(path))
    return paths


def test_a_pause_inside_the_look_at_the_references_uses_up_the_batch_window(fence: Fence, tmp_path: Path) -> None:
    """Issue #62: the first batch's look loads the metadata, then pauses past the window;
    meanwhile a writer imports one of the files. The window was counted from before the look,
    so the batch deletes nothing on the references from before the pause: its files go to
    the next batch, whose look names the import, which is kept."""
    paths = orphans(tmp_path, 5)
    imported = paths[0]

    def paused_at_first(look: int) -> None:
        if look == 1:
            time.sleep(WINDOW_S * 1.5)
            references.referenced.add(imported)  # imported during the pause

    references = MovingReferences(fence.epoch, paused_at_first)
    done = FencedRemover(fence, references, window_s=WINDOW_S).remove([paths])

    assert Path(imported).exists()
    assert (done.files, done.now_referenced, references.looks) == (4, 1, 2)
    assert not any(Path(p).exists() for p in paths[1:])


def test_a_forced_release_fences_the_next_batch_by_the_lease_row(fence: Fence, state: StateStore, tmp_path: Path) -> None:
    """An operator forces the lease free between two batches. The keeper saw nothing (no
    renewal was due) and the lease is still proven by time, yet the next batch is refused:
    before each batch the holder reads the lease row (holder and epoch) in the database."""
    paths = orphans(tmp_path, 3)

    def released_after_first(look: int) -> None:
        if look == 2:
            state.leases.force_release(fence.keeper.lease.table)

    references = MovingReferences(fence.epoch, released_after_first)
    remover = FencedRemover(fence, references, window_s=WINDOW_S, batch_files=1)
    with pytest.raises(FencedError, match="is no longer held"):
        remover.remove([paths])

    assert fence.time_left() < 0 < fence.keeper.proven_until - fence.margin_s - time.monotonic()  # lost, though proven by time
    assert fence.keeper.lost_reason == "lease no longer held"
    assert remover.done.files == 1 and [Path(p).exists() for p in paths] == [False, True, True]


def test_a_forced_release_fences_discarding_unpublished_files(fence: Fence, state: StateStore, tmp_path: Path) -> None:
    """Files a run wrote and will not publish need no reference check, but a holder that lost
    its lease deletes nothing: the lease row is read first, and again once a window is over."""
    paths = orphans(tmp_path, 3)
    assert discard_unpublished(fence, PyArrowFileIO(), paths[:1], window_s=WINDOW_S) == 1
    state.leases.force_release(fence.keeper.lease.table)
    with pytest.raises(FencedError, match="is no longer held"):
        discard_unpublished(fence, PyArrowFileIO(), paths[1:], window_s=WINDOW_S)
    assert [Path(p).exists() for p in paths] == [False, True, True]


def test_discarding_reads_the_lease_row_again_once_a_window_is_over(fence: Fence, state: StateStore, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A discard that outlasts its window (a slow store, a pause) reads the lease row again."""
    paths = orphans(tmp_path, 3)
    real_delete = PyArrowFileIO.delete

    def slow_then_released(io: PyArrowFileIO, path: str) -> None:
        real_delete(io, path)
        if path == paths[0]:
            state.leases.force_release(fence.keeper.lease.table)
            time.sleep(WINDOW_S * 1.5)

    monkeypatch.setattr(PyArrowFileIO, "delete", slow_then_released)
    with pytest.raises(FencedError, match="is no longer held"):
        discard_unpublished(fence, PyArrowFileIO(), paths, window_s=WINDOW_S)
    assert [Path(p).exists() for p in paths] == [False, True, True]
