"""maintenance/state/background_writes.py: a pause waits for the writes under way and holds
new ones back until it ends; writers never wait for each other."""

from __future__ import annotations

import threading
import time

from maintenance.state import background_writes


def test_a_pause_waits_for_a_write_under_way_and_holds_new_ones_back() -> None:
    events: list[str] = []
    writing, release = threading.Event(), threading.Event()

    def long_write() -> None:
        with background_writes.write():
            writing.set()
            release.wait(5)
            events.append("first write ended")

    def later_write() -> None:
        with background_writes.write():
            events.append("later write")

    first = threading.Thread(target=long_write)
    first.start()
    writing.wait(5)
    pauser = threading.Thread(target=lambda: _pause(events))
    pauser.start()
    time.sleep(0.1)
    assert events == []  # the pause waits for the write under way
    release.set()
    first.join(5)
    time.sleep(0.05)
    later = threading.Thread(target=later_write)
    later.start()
    pauser.join(5)
    later.join(5)
    assert events == ["first write ended", "paused", "later write"]


def _pause(events: list[str]) -> None:
    with background_writes.paused():
        events.append("paused")
        time.sleep(0.2)  # a write asked for now waits until the pause ends


def test_writers_do_not_wait_for_each_other() -> None:
    inside = threading.Barrier(2, timeout=5)

    def write() -> None:
        with background_writes.write():
            inside.wait()  # both inside at once, or the barrier breaks

    threads = [threading.Thread(target=write) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert not inside.broken
