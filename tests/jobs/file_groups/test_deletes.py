"""Which delete files a commit of rewritten groups may drop (`jobs/file_groups/deletes.py`)."""

from __future__ import annotations

from maintenance.jobs.file_groups.deletes import DroppableDeletes, delete_reach
from tests.support.metadata import data, pos, snapshot


def test_a_delete_is_dropped_only_with_the_last_data_file_it_reaches() -> None:
    a1, a2, b1 = data(1, "a"), data(1, "a"), data(1, "b")
    partition_delete, dangling = pos(2, "a"), pos(2, "c")
    reach = delete_reach(snapshot(a1, a2, b1, partition_delete, dangling), [partition_delete, dangling])
    droppable = DroppableDeletes(reach)
    assert droppable.covered_by([a1.path]) == [dangling.path]  # dangling: with the first commit
    assert droppable.covered_by([a1.path]) == [dangling.path]  # asked again (a refused commit): the same, until committed
    droppable.committed([a1.path], [dangling.path])
    assert droppable.covered_by([b1.path]) == []
    droppable.committed([b1.path], [])
    assert droppable.covered_by([a2.path]) == [partition_delete.path]
    droppable.committed([a2.path], [partition_delete.path])
    assert droppable.kept == []
