"""Run history: every job run on every table, with its outcome, counters and error."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import Engine, delete, insert, select, update

from maintenance.state.database import db_now_ms, unavailable_as_error
from maintenance.state.schema import RunRow

runs = RunRow.__table__
STATUSES = ("running", "committed", "noop", "skipped", "fenced", "failed")


@dataclass(frozen=True)
class RunRecord:
    run_id: str
    table: str
    job: str
    status: str
    holder_id: str | None
    lease_epoch: int | None
    started_at_ms: int
    ended_at_ms: int | None
    snapshot_id: int | None
    counters: dict[str, Any]
    error: str | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class RunStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._now = db_now_ms(engine)

    def start(self, run_id: str, table: str, job: str, *, holder_id: str | None, lease_epoch: int | None, status: str = "running") -> None:
        with unavailable_as_error(), self.engine.begin() as conn:
            conn.execute(
                insert(runs).values(
                    run_id=run_id, table_name=table, job=job, status=status, holder_id=holder_id, lease_epoch=lease_epoch, started_at_ms=self._now
                )
            )

    def finish(self, run_id: str, status: str, *, snapshot_id: int | None = None, counters: dict[str, Any] | None = None, error: str | None = None) -> None:
        assert status in STATUSES
        with unavailable_as_error(), self.engine.begin() as conn:
            conn.execute(
                update(runs)
                .where(runs.c.run_id == run_id)
                .values(status=status, ended_at_ms=self._now, snapshot_id=snapshot_id, counters=json.dumps(counters or {}, default=str), error=error)
            )

    def forget(self, table: str) -> int:
        """Drop a table's run history (the demo recreating its table). Returns the rows dropped."""
        with unavailable_as_error(), self.engine.begin() as conn:
            return int(conn.execute(delete(runs).where(runs.c.table_name == table)).rowcount or 0)

    def get(self, run_id: str) -> RunRecord | None:
        found = self.list(run_id=run_id)
        return found[0] if found else None

    def list(self, *, table: str | None = None, job: str | None = None, run_id: str | None = None, limit: int = 100) -> list[RunRecord]:
        """Newest first."""
        query = select(runs).order_by(runs.c.started_at_ms.desc(), runs.c.run_id).limit(limit)
        if table is not None:
            query = query.where(runs.c.table_name == table)
        if job is not None:
            query = query.where(runs.c.job == job)
        if run_id is not None:
            query = query.where(runs.c.run_id == run_id)
        with unavailable_as_error(), self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [
            RunRecord(
                run_id=r.run_id,
                table=r.table_name,
                job=r.job,
                status=r.status,
                holder_id=r.holder_id,
                lease_epoch=r.lease_epoch,
                started_at_ms=int(r.started_at_ms),
                ended_at_ms=r.ended_at_ms,
                snapshot_id=r.snapshot_id,
                counters=json.loads(r.counters) if r.counters else {},
                error=r.error,
            )
            for r in rows
        ]
