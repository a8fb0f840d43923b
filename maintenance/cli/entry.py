"""The console script's entry: the CLI's imports take a few seconds (pyiceberg, pyarrow,
SQLAlchemy), and a Ctrl-C or SIGTERM in them must end in one line too, not a traceback
(`maintenance/interrupts.py`)."""

from __future__ import annotations

from maintenance import interrupts
from maintenance.cli.exits import interrupted


def main() -> None:
    interrupts.install()
    try:
        from maintenance.cli.main import main as run_cli
    except KeyboardInterrupt:
        interrupted()
    run_cli()
