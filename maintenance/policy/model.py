"""What a policy says, once loaded and checked."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from maintenance.catalogs import TableRef


@dataclass(frozen=True)
class Selector:
    catalogs: tuple[str, ...] = ("*",)
    namespaces: tuple[str, ...] = ("*",)
    tables: tuple[str, ...] = ("*",)

    def matches(self, ref: TableRef) -> bool:
        namespace = ".".join(ref.namespace)
        return _any_match(ref.catalog, self.catalogs) and _any_match(namespace, self.namespaces) and _any_match(ref.name, self.tables)


def _any_match(text: str, globs: tuple[str, ...]) -> bool:
    """Whether a glob matches; `*` (a selector left open, the usual) without fnmatch."""
    return any(glob == "*" or fnmatch.fnmatchcase(text, glob) for glob in globs)


@dataclass(frozen=True)
class QuietHours:
    start_minute: int  # of the day, in the policy's time zone
    end_minute: int

    def contains(self, minute: int) -> bool:
        if self.start_minute <= self.end_minute:
            return self.start_minute <= minute < self.end_minute
        return minute >= self.start_minute or minute < self.end_minute  # across midnight


@dataclass(frozen=True)
class Schedule:
    every_s: float | None = None  # at most once per interval
    cron: str | None = None  # at most once per cron period
    quiet_hours: tuple[QuietHours, ...] = ()
    timezone: str = "UTC"

    def quiet_at(self, now: datetime) -> bool:
        if not self.quiet_hours:  # most schedules: no local time to work out, per job and table
            return False
        local = now.astimezone(_zone(self.timezone))
        minute = local.hour * 60 + local.minute
        return any(q.contains(minute) for q in self.quiet_hours)


def _zone(name: str):  # type: ignore[no-untyped-def]
    if name.upper() == "UTC":
        return timezone.utc
    from zoneinfo import ZoneInfo

    return ZoneInfo(name)


@dataclass(frozen=True)
class JobPolicy:
    job: str
    enabled: bool = True
    triggers: dict[str, float] = field(default_factory=dict)  # any reached makes the job due
    schedule: Schedule = Schedule()
    spark: dict[str, str] = field(default_factory=dict)  # runtime Spark SQL settings for the job
    options: Any = None  # the job's own typed options (its options dataclass); None: its defaults
    verify: bool = True  # stage, compare the content fingerprint with the parent's, then publish


@dataclass(frozen=True)
class Policy:
    name: str
    source: str
    priority: int
    selector: Selector
    jobs: dict[str, JobPolicy]
    raw_jobs: dict[str, Any]  # as written, so table properties can override key by key
    timezone: str = "UTC"
    # The line of every key path in its file (("jobs", "merge", "every") -> 14), so the status
    # page can say where a setting came from; empty for policies not read from a file.
    lines: dict[tuple[str, ...], int] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class TablePolicy:
    """The policy a table gets: the chosen file's, with the table's `icemaint.` properties applied."""

    ref: TableRef
    policy: str
    enabled: bool
    jobs: dict[str, JobPolicy]
    overrides: dict[str, str] = field(default_factory=dict)

    def enabled_jobs(self) -> list[JobPolicy]:
        from maintenance.jobs.registry import JOB_NAMES

        return [self.jobs[j] for j in JOB_NAMES if j in self.jobs and self.jobs[j].enabled]
