"""`maintenance/run/phases.py`: a run's wall time, each second in exactly one phase."""

from __future__ import annotations

import threading
import time

import pytest

from maintenance.run import phases as phases_module
from maintenance.run.phases import PHASES, PhaseClock, process_age_s


def test_time_goes_to_the_phase_it_was_spent_in_and_nested_phases_return() -> None:
    clock = PhaseClock(before_s=1.5)
    time.sleep(0.05)
    clock.enter("read")
    with clock.within("verify"):
        time.sleep(0.1)
    time.sleep(0.05)
    seconds = clock.seconds()
    assert list(seconds) == list(PHASES)
    assert seconds["start"] >= 1.55 and 0.1 <= seconds["verify"] < 0.2 and seconds["read"] >= 0.05
    assert clock.current == "read"


def test_other_threads_do_not_move_the_clock() -> None:
    clock = PhaseClock()
    clock.enter("write")
    thread = threading.Thread(target=lambda: clock.enter("verify"))
    thread.start()
    thread.join()
    assert clock.current == "write" and clock.seconds()["verify"] == 0.0


def test_an_unknown_phase_is_refused() -> None:
    with pytest.raises(ValueError):
        PhaseClock().enter("thinking")


def test_the_process_start_is_counted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(phases_module, "_process_counted", False)
    first = process_age_s()
    assert first > 0.0  # this process started before the test
    assert process_age_s() == 0.0
