"""How a run ends (or stands): the statuses the run history records, shared by the job
results the CLI prints. A module of its own, without the database, so what only prints a
result (the command line) need not import SQLAlchemy."""

from __future__ import annotations

RUNNING, COMMITTED, NOOP, SKIPPED, FENCED, FAILED, ABANDONED = "running", "committed", "noop", "skipped", "fenced", "failed", "abandoned"
INTERRUPTED = "interrupted"  # SIGINT or SIGTERM stopped it; its holder recorded that and released the lease
STATUSES = (RUNNING, COMMITTED, NOOP, SKIPPED, FENCED, FAILED, INTERRUPTED, ABANDONED)  # ABANDONED: its holder died; set by the next holder
