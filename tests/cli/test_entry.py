"""`cli/entry.py`: how `python -m maintenance` ends when interrupted."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.paths import REPO


@pytest.mark.process
def test_an_interrupt_that_passed_through_c_code_still_exits_130_under_python_m() -> None:
    """CPython ends a `-m` process by SIGINT (return code -2) after a KeyboardInterrupt
    passed out of `PyRun_String`, whatever it exits with; the entry must still exit 130."""
    done = subprocess.run([sys.executable, "-m", "tests.support.interrupted_in_c"], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert done.returncode == 130, (done.returncode, done.stderr)
    assert done.stderr.strip().splitlines() == ["icemaint: error: interrupted"]


@pytest.mark.process
def test_an_ending_process_skips_only_the_teardown_atexit_handlers_streams_and_code_kept() -> None:
    """`exit_without_teardown` ends the process with its exit code after the `atexit`
    handlers ran and the buffered output was written, as a normal exit would."""
    script = ("import atexit, logging, sys; from maintenance.cli.entry import exit_without_teardown\n"
              "atexit.register(lambda: print('handler ran'))\n"
              "print('buffered', end=' '); sys.stderr.write('err line\\n'); exit_without_teardown(3)\n"
              "print('not reached')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (3, "buffered handler ran\n", "err line\n")


def test_a_thread_a_normal_exit_would_wait_for_keeps_the_normal_exit() -> None:
    """With a thread alive that the interpreter waits for at exit, nothing is skipped: the
    function returns and the caller exits as usual, after the thread."""
    import threading

    from maintenance.cli.entry import exit_without_teardown

    release = threading.Event()
    worker = threading.Thread(target=release.wait, daemon=False)
    worker.start()
    try:
        exit_without_teardown(0)  # returns: os._exit would have ended pytest here
    finally:
        release.set()
        worker.join()


@pytest.mark.process
def test_a_cli_process_ends_with_its_output_its_log_and_its_code(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The console entry as cron runs it: the JSON on stdout whole, the log file's lines
    written, the exit code the command's (0, then 2 for an unknown table)."""
    import json
    import os

    env = {**os.environ, "ICEMAINT_HOME": str(tmp_path)}
    env.pop("ICEMAINT_CONFIG", None)
    made = subprocess.run([sys.executable, "-m", "maintenance", "workload", "fleet", "--tables", "2", "--commits", "1", "--rows", "5"],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert made.returncode == 0, made.stderr
    done = subprocess.run([sys.executable, "-m", "maintenance", "plan", "--all", "--json"], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert done.returncode == 0 and len(json.loads(done.stdout)["decisions"]) >= 2, done.stderr
    assert "state database" in (tmp_path / "logs" / "icemaint.log").read_text()
    unknown = subprocess.run([sys.executable, "-m", "maintenance", "plan", "fleet.missing"], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert unknown.returncode == 2 and unknown.stderr.startswith("icemaint: error: unknown table"), unknown.stderr
