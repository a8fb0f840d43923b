"""The publisher's rules without Spark (`publish/publisher.py`): unverified changes are committed;
verified ones are staged, compared, and made current only when the content is the same;
a table that moved meanwhile gets the change applied again on its newest state.

The table is a scripted stand-in for `FencedTable` that records what was asked of it: the
rules, not Iceberg, are what is tested here (the same paths run on real tables in
`tests/publish/proofs/` and every job's tests)."""

from __future__ import annotations

from typing import Any

import pytest

from maintenance.publish.publisher import Change, ContentChangedError, Publisher
from maintenance.publish.verifier import Evidence
from maintenance.spark.fenced_table import Staged
from maintenance.spark.fingerprint import Fingerprint


class ScriptedStaged(Staged):
    """A staged change without a JVM: the files staging wrote are named after its id."""

    def written_metadata(self) -> list[str]:
        return [f"snap-{self.snapshot_id}.avro", f"manifest-{self.snapshot_id}.avro"]


class ScriptedTable:
    """Answers `FencedTable`'s publishing calls from a script and records them."""

    java = "the java table"

    def __init__(self, *, publishes: bool = True) -> None:
        self.publishes = publishes
        self.calls: list[tuple[str, Any]] = []
        self.next_id = 100

    def _new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def commit(self, operation: Any, what: str, validate: Any = None) -> int:
        self.calls.append(("commit", operation))
        return self._new_id()

    def stage(self, operation: Any, what: str, validate: Any = None) -> Staged:
        self.calls.append(("stage", operation))
        return ScriptedStaged(self._new_id(), 1, None, None, None, None)

    def publish_staged(self, staged: Staged, what: str, validate: Any = None) -> bool:
        self.calls.append(("publish_staged", staged.snapshot_id))
        return self.publishes


def evidence(before: str, after: str, rows: int = 10) -> Evidence:
    return Evidence(Fingerprint("t", 1, rows, before), Fingerprint("t", 2, rows, after), data_files=3, bytes=300, table_bytes=1200)


def change() -> Change:
    return Change("MERGE", build=lambda java: f"operation on {java}")


def test_unverified_changes_are_committed_and_nothing_is_read() -> None:
    table = ScriptedTable()
    asked: list[Any] = []
    publisher = Publisher(table, verify=False, verifier=lambda *args: asked.append(args))  # type: ignore[arg-type]
    assert publisher.publish(change()) == 101
    assert table.calls == [("commit", "operation on the java table")] and asked == []
    assert publisher.verification.verified is None


def test_a_verified_change_is_made_current_as_staged_only_when_the_content_is_the_same() -> None:
    table = ScriptedTable()
    asked: list[tuple[Any, ...]] = []
    discarded: list[list[str]] = []

    def verifier(proof: str, staged: Staged, removes: frozenset[str]) -> Evidence:
        asked.append((proof, staged.parent_id, staged.snapshot_id, removes))
        return evidence("f1", "f1")

    publisher = Publisher(table, verify=True, verifier=verifier, discard=lambda paths: discarded.append(paths) or len(paths))
    assert publisher.publish(change()) == 101
    assert table.calls == [("stage", "operation on the java table"), ("publish_staged", 101)]
    assert asked == [("rows", 1, 101, frozenset())] and discarded == []
    assert publisher.verification.verified is True and publisher.verification.counters() == {"verify_data_files": 3, "verify_bytes": 300, "verify_share": 0.25}


def test_a_change_that_alters_content_is_never_made_current() -> None:
    table = ScriptedTable()
    discarded: list[list[str]] = []
    publisher = Publisher(table, verify=True, verifier=lambda *args: evidence("f1", "f2"), discard=lambda paths: discarded.append(paths) or len(paths))
    with pytest.raises(ContentChangedError, match="nothing was published"):
        publisher.publish(change())
    assert [call for call, _ in table.calls] == ["stage"]  # staged, then neither published nor committed
    assert discarded == [["snap-101.avro", "manifest-101.avro"]]  # its metadata files, never committed, go
    assert publisher.verification.verified is False
    # A later change that keeps the content does not make the run verified again.
    Publisher(table, verify=True, verifier=lambda *args: evidence("f", "f"), verification=publisher.verification).publish(change())
    assert publisher.verification.verified is False


def test_a_table_that_moved_while_verifying_gets_the_change_applied_again() -> None:
    table = ScriptedTable(publishes=False)
    discarded: list[list[str]] = []
    publisher = Publisher(table, verify=True, verifier=lambda *args: evidence("f1", "f1"), discard=lambda paths: discarded.append(paths) or len(paths))
    assert publisher.publish(change()) == 102
    assert [call for call, _ in table.calls] == ["stage", "publish_staged", "commit"]
    assert discarded == [["snap-101.avro", "manifest-101.avro"]]
