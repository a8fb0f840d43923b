"""The console script's entry: the CLI's imports take a few seconds (pyiceberg, pyarrow,
SQLAlchemy), and a Ctrl-C or SIGTERM in them must end in one line too, not a traceback
(`maintenance/interrupts.py`)."""

from __future__ import annotations

import logging
import os
import sys

from maintenance import interrupts
from maintenance.cli.exits import INTERRUPTED, interrupted


def main() -> None:
    interrupts.install()
    try:
        from maintenance.cli.main import main as run_cli
    except KeyboardInterrupt:
        interrupted()
    run_cli()


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
