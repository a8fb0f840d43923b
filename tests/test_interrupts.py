"""maintenance/interrupts.py in a process of its own: signals are real, and the handler in
place when they come is not always ours (PySpark installs its own while Spark starts)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from maintenance.interrupts import SECOND_INTERRUPT
from tests.support.paths import REPO


def _run(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=REPO, capture_output=True, text=True, timeout=60)


def test_a_signal_another_handler_took_still_counts_as_requested() -> None:
    """As PySpark's handler does when its call into the JVM breaks: the signal surfaces as some
    other error, and the runner must still record the run `interrupted`, not `failed`."""
    proc = _run("""
        import os, signal
        from maintenance import interrupts
        interrupts.install()
        def libraries_handler(signum, frame):
            raise RuntimeError("a Py4J call cut in the middle")
        signal.signal(signal.SIGINT, libraries_handler)
        try:
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):
                pass
        except RuntimeError:
            print("requested" if interrupts.requested() else "not requested")
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["requested"]


def test_no_signal_is_not_requested_and_a_second_one_stops_at_once() -> None:
    proc = _run("""
        import os, signal, time
        from maintenance import interrupts
        interrupts.install()
        signal.signal(signal.SIGINT, lambda signum, frame: None)  # a handler that swallows it
        print("before", interrupts.requested(), flush=True)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)
        print("after one", interrupts.requested(), flush=True)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
        print("still running", flush=True)
    """)
    assert proc.stdout.split("\n")[:2] == ["before False", "after one True"], proc.stdout
    assert "still running" not in proc.stdout
    assert proc.returncode == 130
    assert proc.stderr == SECOND_INTERRUPT


def test_after_a_hand_over_a_first_signal_is_the_commands_and_a_second_still_stops_at_once() -> None:
    """The daemon drains on SIGTERM: the job it cancels after its grace is `failed`
    (cancelled), not `interrupted`, and a second signal still stops the process."""
    proc = _run("""
        import os, signal, time
        from maintenance import interrupts
        interrupts.install()
        interrupts.hand_over()
        signal.signal(signal.SIGTERM, lambda signum, frame: print("draining", flush=True))
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.2)
        print("requested", interrupts.requested(), flush=True)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
        print("still running", flush=True)
    """)
    assert proc.stdout.split("\n")[:2] == ["draining", "requested False"], proc.stdout
    assert "still running" not in proc.stdout
    assert proc.returncode == 130
