"""Holder A of the fencing test: a job in its own process that commits, waits, then tries again.

    python -m tests.support.fencing_worker CONFIG TABLE FLAG

Prints READY after its first commit (and after writing scratch files), then waits until
FLAG exists. The test pauses it with SIGSTOP meanwhile, lets holder B take the lease and
commit, then resumes it. Everything A tries afterwards must be refused.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from maintenance.catalogs import load_table, parse_table_ref
from maintenance.config import load_config
from maintenance.lease.fence import FencedError
from maintenance.run.context import JobContext
from maintenance.run.outcome import COMMITTED, JobOutcome
from maintenance.run.runner import run_under_lease
from maintenance.table.references import NewestReferences, ReferencedFiles
from tests.support.fencing_jobs import append_marker_row, write_scratch_files


def main() -> None:
    config_path, table_name, flag = sys.argv[1:4]
    config = load_config(config_path)
    ref = parse_table_ref(table_name, config)

    def body(ctx: JobContext) -> JobOutcome:
        first = append_marker_row(ctx, row_id=10_000_001)
        scratch = write_scratch_files(ctx, count=3)
        print("READY", ctx.run_id, " ".join(scratch), flush=True)
        deadline = time.time() + 120
        while not Path(flag).exists() and time.time() < deadline:
            time.sleep(0.05)
        refused = []
        try:
            table = load_table(config, ref)
            ctx.remove_files([scratch], NewestReferences(lambda: load_table(config, ref), ReferencedFiles(), table.metadata_location))
        except FencedError:
            refused.append("delete")
        try:
            append_marker_row(ctx, row_id=10_000_002)
        except FencedError:
            refused.append("commit")
        print("REFUSED", ",".join(refused), flush=True)
        if refused:
            raise FencedError(f"refused: {', '.join(refused)}")
        return JobOutcome(COMMITTED, snapshot_id=first)

    load_table(config, ref)
    result = run_under_lease(config, ref, "fencing-test", body, holder="holder-A")
    print("STATUS", result.status, flush=True)


if __name__ == "__main__":
    main()
