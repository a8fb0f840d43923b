"""What a job returns, and what the CLI and the run history report (the README's CLI reference lists the fields)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from maintenance.state.statuses import COMMITTED, FAILED, FENCED, INTERRUPTED, NOOP, SKIPPED

PLANNED = "planned"  # a dry run that found work (dry runs are never recorded)
JOB_STATUSES = (COMMITTED, NOOP, SKIPPED, FENCED, FAILED, INTERRUPTED, PLANNED)  # how a job ends (a run may also be running or abandoned)
Counters = dict[str, Any]


def iso_ms(epoch_ms: int | None) -> str | None:
    """A time in milliseconds since the epoch as ISO 8601 in UTC, to the millisecond."""
    return None if epoch_ms is None else datetime.fromtimestamp(epoch_ms / 1000, tz=timezone.utc).isoformat(timespec="milliseconds")


@dataclass
class JobOutcome:
    """A job body's own report: committed or noop, the new snapshot, its counters."""

    status: str
    snapshot_id: int | None = None
    counters: Counters = field(default_factory=dict)
    reason: str | None = None  # a noop's: why there was nothing to do
    effect: str | None = None  # a committed job's without a new snapshot (EXPIRE, ORPHANS): what it changed instead


def attach_partial(exc: BaseException, outcome: JobOutcome) -> None:
    """Record on a job's error what it committed before failing (partial progress), so the
    run's result still names the snapshot it left current and what it did."""
    exc.icemaint_partial_outcome = outcome  # type: ignore[attr-defined]


def partial_outcome(exc: BaseException) -> JobOutcome | None:
    return getattr(exc, "icemaint_partial_outcome", None)


@dataclass
class JobResult:
    job: str
    table: str
    status: str
    run_id: str | None
    snapshot_id: int | None = None
    duration_s: float = 0.0
    compute_s: float | None = None  # CPU seconds of the run's Spark tasks and own threads (`run/compute.py`); none where unknown
    counters: Counters = field(default_factory=dict)
    error: str | None = None  # a failed, fenced or interrupted run's
    reason: str | None = None  # a noop's: why there was nothing to do (the plan's `nothing_to_do`); a skip's: why it did not run
    effect: str | None = None  # a committed job's that made no snapshot: what it changed instead (`JobOutcome.effect`)
    dry_run: bool = False
    fingerprint_before: str | None = None
    fingerprint_after: str | None = None
    content_verified: bool | None = None
    verify_counters: Counters = field(default_factory=dict)  # what verification read (`verify_data_files`, ...)
    started_at_ms: int | None = None  # wall clock, when the run asked for its lease (a dry run: began planning)
    ended_at_ms: int | None = None
    phase_seconds: dict[str, float] | None = None  # where the run's time went (`run/phases.py`); none for a dry run

    @property
    def ok(self) -> bool:
        return self.status in (COMMITTED, NOOP, SKIPPED, PLANNED)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "job": self.job,
            "table": self.table,
            "status": self.status,
            "run_id": self.run_id,
            "snapshot_id": self.snapshot_id,
            "duration_s": round(self.duration_s, 3),
            **({"compute_s": round(self.compute_s, 3)} if self.compute_s is not None else {}),
            "started_at": iso_ms(self.started_at_ms),
            "ended_at": iso_ms(self.ended_at_ms),
            **self.counters,
        }
        if self.phase_seconds is not None:
            out["phase_seconds"] = self.phase_seconds
        if self.dry_run:
            out["dry_run"] = True
        if self.error is not None:
            out["error"] = self.error
        if self.reason is not None:
            out["reason"] = self.reason
        if self.effect is not None:
            out["effect"] = self.effect
        if self.content_verified is not None:
            out.update(fingerprint_before=self.fingerprint_before, fingerprint_after=self.fingerprint_after, content_verified=self.content_verified,
                       **self.verify_counters)
        return out
