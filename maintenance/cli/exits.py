"""How every command ends on SIGINT or SIGTERM: one line and exit 130. Light on purpose:
the console script's entry (`cli/entry.py`) needs it before the CLI's slow imports."""

from __future__ import annotations

import sys

from maintenance import interrupts

INTERRUPTED = 130  # 128 + SIGINT, as shells report it


def interrupted() -> None:
    """How every command ends on SIGINT or SIGTERM."""
    interrupts.end_children()
    sys.stderr.write("icemaint: error: interrupted\n")
    sys.stderr.flush()
    interrupts.reported()
    sys.exit(INTERRUPTED)
