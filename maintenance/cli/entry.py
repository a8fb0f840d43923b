"""The console script's entry: the CLI's imports take a few seconds (pyiceberg, pyarrow,
SQLAlchemy), and a Ctrl-C or SIGTERM in them must end in one line too, not a traceback
(`maintenance/interrupts.py`)."""

from __future__ import annotations

import sys

from maintenance import interrupts

INTERRUPTED = 130  # 128 + SIGINT, as shells report it


def main() -> None:
    interrupts.install()
    try:
        from maintenance.cli.main import main as run_cli
    except KeyboardInterrupt:
        interrupted()
    run_cli()


def interrupted() -> None:
    """How every command ends on SIGINT or SIGTERM."""
    interrupts.end_children()
    sys.stderr.write("icemaint: error: interrupted\n")
    sys.exit(INTERRUPTED)
