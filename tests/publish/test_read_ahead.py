"""`publish/read_ahead.py`: which readings a verification takes, and what is left.

The readings here are plain functions: what a reading reads through Spark is
`files_fingerprints`, tested with verification (`tests/publish/proofs/test_rows.py`, which also
changes the schema while a reading is under way)."""

from __future__ import annotations

import threading
import time

from maintenance.publish.read_ahead import WRITTEN, ReadAhead, Reading
from maintenance.spark.fingerprint import Fingerprint

SCHEMA = '{"schema-id": 0}'


def _reading(snapshot_id: int, paths: frozenset[str]) -> Reading:
    if "broken" in paths:
        raise OSError("the reading failed")
    schema = '{"schema-id": 1}' if "altered" in paths else SCHEMA
    return Reading(paths - {"gone"}, Fingerprint("t", snapshot_id, len(paths), str(sum(len(p) for p in paths))), schema)


def _start(ahead: ReadAhead, snapshot_id: int, paths: frozenset[str]) -> None:
    ahead.start(snapshot_id, paths, lambda: _reading(snapshot_id, paths))


def test_readings_of_the_parent_add_up_and_are_taken_once() -> None:
    ahead = ReadAhead(cancel=lambda: None)
    _start(ahead, 1, frozenset({"a", "bb"}))
    _start(ahead, 1, frozenset({"ccc"}))
    _start(ahead, 2, frozenset({"dddd"}))  # another snapshot
    _start(ahead, 1, frozenset({"eeeee", "elsewhere"}))  # not all of it is removed by the change
    covered, total = ahead.take(1, frozenset({"a", "bb", "ccc", "eeeee"}), SCHEMA)
    assert covered == {"a", "bb", "ccc"}
    assert total == Fingerprint("t", 1, 3, "6")
    assert ahead.take(1, frozenset({"a", "bb", "ccc"}), SCHEMA) == (frozenset(), None)
    ahead.stop()


def test_readings_of_written_files_are_taken_each_and_apart_from_the_parents() -> None:
    ahead = ReadAhead(cancel=lambda: None)
    _start(ahead, 1, frozenset({"old"}))
    written = [frozenset({"new-1", "new-2"}), frozenset({"new-3"}), frozenset({"new-4", "not-staged"})]
    for paths in written:
        ahead.start(WRITTEN, paths, lambda paths=paths: Reading(paths, Fingerprint("t", None, len(paths), "1"), SCHEMA, frozenset((p, 0, 1, 2) for p in paths)))
    taken = ahead.take_each(WRITTEN, frozenset({"old", "new-1", "new-2", "new-3", "new-4"}), SCHEMA)
    assert [r.paths for r in taken] == written[:2]  # one by one; the third names a file the change does not add
    assert ahead.take(1, frozenset({"old"}), SCHEMA)[0] == {"old"}
    ahead.stop()


def test_a_failed_reading_or_one_in_another_schema_covers_nothing() -> None:
    ahead = ReadAhead(cancel=lambda: None)
    _start(ahead, 1, frozenset({"broken"}))
    _start(ahead, 1, frozenset({"altered"}))
    _start(ahead, 1, frozenset({"a", "gone"}))
    covered, total = ahead.take(1, frozenset({"broken", "altered", "a", "gone"}), SCHEMA)
    assert covered == {"a"}  # "gone" was not found in the snapshot
    assert total is not None and total.rows == 2
    ahead.stop()


def test_stop_cancels_what_is_still_running_and_ends_the_thread() -> None:
    release, cancelled = threading.Event(), threading.Event()

    def slow(snapshot_id: int, paths: frozenset[str]) -> Reading:
        release.wait(10)
        return Reading(paths, Fingerprint("t", snapshot_id, 0, "0"), SCHEMA)

    def cancel() -> None:
        cancelled.set()
        release.set()

    ahead = ReadAhead(cancel=cancel)
    ahead.start(1, frozenset({"a"}), lambda: slow(1, frozenset({"a"})))
    ahead.start(1, frozenset({"b"}), lambda: slow(1, frozenset({"b"})))
    ahead.start(1, frozenset({"c"}), lambda: slow(1, frozenset({"c"})))  # queued behind two: never starts
    ahead.stop()
    assert cancelled.is_set()
    assert not [t for t in threading.enumerate() if t.name.startswith("icemaint-read-ahead")]


def test_stop_cancels_again_until_a_reading_that_started_late_ends() -> None:
    """A reading planning its scan when `stop` cancels has no Spark job yet: the cancel must
    come again once its job runs (here: the reading ends at its second cancel, or gives up
    after 5 s)."""
    cancels: list[int] = []

    def late(snapshot_id: int, paths: frozenset[str]) -> Reading:
        deadline = time.monotonic() + 5
        while len(cancels) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        return Reading(paths, Fingerprint("t", snapshot_id, 0, "0"), SCHEMA)

    ahead = ReadAhead(cancel=lambda: cancels.append(1))
    ahead.start(1, frozenset({"a"}), lambda: late(1, frozenset({"a"})))
    ahead.stop()
    assert len(cancels) >= 2
