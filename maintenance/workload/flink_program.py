"""What the workload's Flink programs (`flink_job.py`, `flink_reader_job.py`) share: SQL
quoting, a Java error in one line, and the program's frame (settings in, outcome out).

Like them, it imports only the standard library: they run under Flink's own interpreter
(`make flink`), as scripts of this folder, and import it as `flink_program`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any


def quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def root_cause(exc: BaseException) -> str:
    """One line: the innermost Java cause of a Py4J error (its class and message), else the
    Python exception itself."""
    java = getattr(exc, "java_exception", None)
    if java is None:
        return f"{type(exc).__name__}: {exc}".splitlines()[0]
    while java.getCause() is not None and java.getCause() is not java:
        java = java.getCause()
    lines = [line.strip() for line in str(java.getMessage() or "").splitlines() if line.strip()]
    # A Python worker's error arrives as its traceback: its last line says what failed.
    message = (lines[-1] if "Traceback" in lines[0] else lines[0]) if lines else ""
    return f"{java.getClass().getName()}: {message}".strip()


def program_main(argv: list[str], run: Callable[[dict[str, Any]], dict[str, Any]]) -> int:
    """Run `run` on the settings file named by the one argument; its outcome (or a one-line
    `error`) into the settings' `outcome_file`; 1 when it failed, 2 on a wrong call."""
    if len(argv) != 2:
        print(f"usage: {argv[0]} SETTINGS_JSON", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as handle:
        settings = json.load(handle)
    try:
        outcome = run(settings)
    except Exception as exc:  # the job's one-line report; its log has the rest
        outcome = {"error": root_cause(exc)}
    with open(settings["outcome_file"], "w", encoding="utf-8") as handle:
        json.dump(outcome, handle)
    return 1 if "error" in outcome else 0
