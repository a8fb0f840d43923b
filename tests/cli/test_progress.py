"""The terminal progress display: redrawn in place with the job's latest event, then erased."""

from __future__ import annotations

import io
import itertools
import re
import threading

from maintenance.cli.progress import progress_display, wanted


class Screen(io.StringIO):
    """A terminal that says when a line naming `wanted` was drawn."""

    def __init__(self, wanted: str) -> None:
        super().__init__()
        self.wanted, self.drawn = wanted, threading.Event()

    def write(self, text: str) -> int:
        written = super().write(text)
        if self.wanted in self.getvalue():
            self.drawn.set()
        return written


def test_display_redraws_the_latest_event_and_erases_itself() -> None:
    """A clock that moves a second per reading, so every redraw shows time passed."""
    out = Screen("rewritten: data files added 4")
    seconds = itertools.count()
    with progress_display("merge local.db.t", enabled=True, stream=out, clock=lambda: float(next(seconds)), redraw_s=0.001) as progress:
        progress("rewritten", data_files_added=4)
        assert out.drawn.wait(10)
    text = out.getvalue()
    assert re.search(r"\r\033\[Kmerge local\.db\.t: [1-9][0-9]*s  rewritten: data files added 4", text), text
    assert text.endswith("\r\033[K")


def test_display_is_off_for_json_and_pipes() -> None:
    out = io.StringIO()
    with progress_display("x", enabled=wanted(False, out), stream=out) as progress:
        progress("a", b=1)
    assert out.getvalue() == "" and not wanted(True)
