"""Run a command and account for its whole process tree: its wall time and the CPU-seconds
of every process in it, however they leave.

    python benchmarks/tree_probe.py OUT_JSON COMMAND [ARG...]

A JVM that PySpark starts is never waited for by the Python that started it (it exits once
its parent's pipe closes), so it is reparented when its parent exits and its CPU time is
counted by nobody. This probe makes itself the tree's child subreaper (Linux
`PR_SET_CHILD_SUBREAPER`): every orphan below it is reparented to it, and it waits for all
of them, so `RUSAGE_CHILDREN` holds the CPU of every process of the tree. The command's
stdin, stdout and stderr are the probe's. Writes OUT_JSON: `wall_s` (fork to the command's
exit), `tree_s` (to the last process's exit), `cpu_s`, `returncode`.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36


def main() -> None:
    out, command = Path(sys.argv[1]), sys.argv[2:]
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise SystemExit(f"prctl(PR_SET_CHILD_SUBREAPER): errno {ctypes.get_errno()}")
    started = time.monotonic()
    returncode = subprocess.call(command)
    wall_s = time.monotonic() - started
    while True:  # the orphans the command left, reparented here
        try:
            os.wait()
        except ChildProcessError:
            break
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    out.write_text(json.dumps({"wall_s": wall_s, "tree_s": time.monotonic() - started, "cpu_s": usage.ru_utime + usage.ru_stime,
                               "returncode": returncode}))


if __name__ == "__main__":
    main()
