"""A run's progress: the steps it reports as it works (`planning`, `staged`, `verifying`,
...), each with its counts, to whoever watches it (the terminal, the run record for the
status page, the log). Low in the house: the jobs, the publishing stage, the schedule and
the pages all speak it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class Progress(Protocol):
    def __call__(self, step: str, **counts: int) -> None: ...


def describe_progress(step: str, counts: Mapping[str, Any]) -> str:
    """A step and its counts as a short line, on the terminal and the status page alike:
    `rewritten: data files added 4`; byte counts (`…bytes…`) in binary units."""
    from maintenance.units import format_bytes

    detail = ", ".join(f"{k.replace('_', ' ')} {format_bytes(v) if 'bytes' in k and isinstance(v, int) else v}" for k, v in counts.items())
    return f"{step}: {detail}" if detail else step


def no_progress(step: str, **counts: int) -> None:
    """The progress callback of runs nobody watches."""


def recorded_step(record: Mapping[str, Any] | None) -> str | None:
    """The step a run record keeps (`RunRecord.stage`: `{"stage": step, **counts}`) as a short
    line, or None when the run reported none."""
    counts = dict(record or {})
    step = counts.pop("stage", None)
    return describe_progress(str(step), counts) if step else None
