"""The terminal progress display: redrawn in place with the job's latest event, then erased."""

from __future__ import annotations

import io
import time

from maintenance.cli.progress import progress_display, wanted
from maintenance.jobs.spec import describe_progress as describe


def test_display_redraws_the_latest_event_and_erases_itself() -> None:
    out = io.StringIO()
    with progress_display("merge local.db.t", enabled=True, stream=out) as progress:
        progress("rewritten", data_files_added=4)
        time.sleep(1.2)
    text = out.getvalue()
    assert "\r\033[Kmerge local.db.t: 1s  rewritten: data files added 4" in text
    assert text.endswith("\r\033[K")


def test_display_is_off_for_json_and_pipes() -> None:
    out = io.StringIO()
    with progress_display("x", enabled=wanted(False, out), stream=out) as progress:
        progress("a", b=1)
    assert out.getvalue() == "" and not wanted(True)
    assert describe("staged", {}) == "staged" and describe("written", {"files": 9}) == "written: files 9"
