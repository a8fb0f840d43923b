"""A fencing holder process paused and resumed, read line by line."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

from sqlalchemy import select, text
from sqlalchemy.engine import make_url

from maintenance.state.database import make_engine, normalise_url
from maintenance.state.schema import LeaseRow


def read_line(proc: subprocess.Popen[str], prefix: str, timeout: float) -> str:
    deadline, seen = time.time() + timeout, []
    while time.time() < deadline:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        if line.startswith(prefix):
            return line.strip()
        seen.append(line)
        if not line and proc.poll() is not None:
            break
    raise AssertionError(f"worker never printed {prefix}; stdout: {''.join(seen)[-2000:]}")


def resume_paused_holder(holder: subprocess.Popen[str], flag: Path) -> tuple[str, str]:
    """Let the SIGSTOPped holder go on (the flag tells it the other holder has committed);
    return what it was refused and how its run ended, from its REFUSED and STATUS lines."""
    flag.touch()
    os.kill(holder.pid, signal.SIGCONT)
    refused = read_line(holder, "REFUSED", timeout=120)
    status = read_line(holder, "STATUS", timeout=60)
    assert holder.wait(timeout=60) == 0
    return refused, status


def pause_outside_state_writes(holder: subprocess.Popen[str], state_url: str, table: str, *, attempts: int = 50) -> None:
    """SIGSTOP the holder at a moment its lease keeper is not inside a write of the state
    database. A process paused inside one holds that write's lock for as long as it is
    paused (SQLite's lock of the whole file, a server's lock of the lease's row): the other
    holder can take nothing over until it resumes, which delays a takeover but never makes
    one unsafe, and is not what these tests are about. Paused inside one, it is resumed for
    a moment and paused again."""
    for _ in range(attempts):
        os.kill(holder.pid, signal.SIGSTOP)
        if not _lease_write_locked(state_url, table):
            return
        os.kill(holder.pid, signal.SIGCONT)
        time.sleep(0.05)
    raise AssertionError(f"the holder was inside a state database write at each of {attempts} pauses")


def _lease_write_locked(state_url: str, table: str) -> bool:
    """Whether a write of `table`'s lease would wait for another process now."""
    url = make_url(normalise_url(state_url))
    if url.get_backend_name() == "sqlite":
        conn = sqlite3.connect(url.database, timeout=0, isolation_level=None)
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("ROLLBACK")
            return False
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                return True
            raise
        finally:
            conn.close()
    engine = make_engine(state_url)
    wait = "SET LOCAL lock_timeout = '200ms'" if url.get_backend_name() == "postgresql" else "SET SESSION innodb_lock_wait_timeout = 1"
    try:
        with engine.begin() as conn:
            conn.execute(text(wait))
            conn.execute(select(LeaseRow.table_name).where(LeaseRow.table_name == table).with_for_update())
        return False
    except Exception as exc:  # the lock wait's timeout: LockNotAvailable, or MariaDB's 1205
        if "lock" in str(exc).lower():
            return True
        raise
    finally:
        engine.dispose()
