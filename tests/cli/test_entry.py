"""`cli/entry.py`: how `python -m maintenance` ends when interrupted."""

from __future__ import annotations

import subprocess
import sys

from tests.support.paths import REPO


def test_an_interrupt_that_passed_through_c_code_still_exits_130_under_python_m() -> None:
    """CPython ends a `-m` process by SIGINT (return code -2) after a KeyboardInterrupt
    passed out of `PyRun_String`, whatever it exits with; the entry must still exit 130."""
    done = subprocess.run([sys.executable, "-m", "tests.support.interrupted_in_c"], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert done.returncode == 130, (done.returncode, done.stderr)
    assert done.stderr.strip().splitlines() == ["icemaint: error: interrupted"]
