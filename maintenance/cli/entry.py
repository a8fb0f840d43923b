"""The console script's entry: the CLI's imports take a few seconds (pyiceberg, pyarrow,
SQLAlchemy), and a Ctrl-C or SIGTERM in them must end in one line too, not a traceback
(`maintenance/interrupts.py`)."""

from __future__ import annotations

import logging
import os
import sys
import threading

from maintenance import interrupts
from maintenance.cli.exits import INTERRUPTED, interrupted


def main() -> None:
    interrupts.install()
    try:
        from maintenance.cli.main import main as run_cli
    except KeyboardInterrupt:
        interrupted()
    try:
        run_cli()
    except SystemExit as exc:
        exit_without_teardown(exc.code)
        raise


def exit_without_teardown(code: object) -> None:
    """End the process now, as it would end, less the interpreter's teardown; or return when
    that would change anything (then the caller exits as usual).

    Tearing down frees every object of every module one by one: 0.2 s of CPU after a `plan`
    of 2,000 tables (about 1,000 modules, the evaluation's objects), a sixth of a warm cron
    tick, with no effect outside the process. What a normal exit does that shows outside is
    done first, in its order: waiting for other threads (none may be left: with one that a
    normal exit would wait for alive, this returns), the `atexit` handlers (logging's flush and close, weakref finalizers,
    libraries' own), and the standard streams' flush. A process that imported Spark's Python
    side exits as usual: its gateway and JVM end through their own shutdown."""
    if code is None:
        code = 0
    waited_for = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    if not isinstance(code, int) or waited_for or "pyspark" in sys.modules or "py4j" in sys.modules:
        return
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`icemaint plan | head`): nothing more can be said
            pass
    os._exit(code)


def main_as_module() -> None:
    """`python -m maintenance`: `main`, except that an interrupted command leaves by
    `os._exit(130)` once its output and logs are flushed. Why: CPython remembers a
    KeyboardInterrupt that passed out of C code running Python (`PyRun_String`, which some
    compiled modules call while they import: a Ctrl-C there is common at start-up), and
    under `-m` it then ends the process by SIGINT after finalizing, whatever exit code was
    asked for. The console script runs as a file, where `sys.exit` wins."""
    try:
        main()
    except SystemExit as exc:
        if exc.code != INTERRUPTED:
            raise
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(INTERRUPTED)
