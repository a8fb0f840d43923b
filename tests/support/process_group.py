"""Run a command as the leader of a process group of its own and report how every process
of that group ended: the fault tests must see the Spark JVM killed by SIGKILL along with
its Python, not merely gone (a JVM whose Python died exits by itself once its stdin closes,
running its shutdown hooks: that is a clean exit, not the container kill being simulated).

    python -m tests.support.process_group REPORT -- COMMAND...

This process makes itself a child subreaper (Linux `PR_SET_CHILD_SUBREAPER`), so whatever
the command leaves orphaned is reparented here, not to init, and its exit status can be read.
It writes the group id to REPORT at once (for a caller that must clean up after a hang),
then, once every descendant has ended, REPORT as JSON: `pgid`, `leader` (the command's exit
status) and `ended`: each reaped process's pid, name (`/proc/PID/comm`) and exit status, as
subprocess return codes (negative: killed by that signal). A descendant that never ends
keeps this process waiting: the caller's timeout is then the failure.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: python -m tests.support.process_group REPORT -- COMMAND...", file=sys.stderr)
        return 2
    report, command = Path(argv[0]), argv[2:]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    leader = subprocess.Popen(command, start_new_session=True)
    report.write_text(json.dumps({"pgid": leader.pid}))
    ended = []
    leader_code = None
    while True:
        try:
            info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOWAIT)  # peek: the zombie still has its name
        except ChildProcessError:
            break
        assert info is not None
        name = _name(info.si_pid)
        _, status = os.waitpid(info.si_pid, 0)
        code = os.waitstatus_to_exitcode(status)
        ended.append({"pid": info.si_pid, "name": name, "code": code})
        if info.si_pid == leader.pid:
            leader_code = code
    leader.returncode = leader_code  # reaped above: keep Popen from waiting on it again
    report.write_text(json.dumps({"pgid": leader.pid, "leader": leader_code, "ended": ended}))
    return 0


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
