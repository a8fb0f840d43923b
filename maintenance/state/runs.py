"""Run history: every job run on every table, with its outcome, counters and error."""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import Engine, and_, delete, func, insert, or_, select, update

from maintenance.state.database import db_now_ms, in_groups, unavailable_as_error
from maintenance.state.schema import RunRow
from maintenance.state.statuses import ABANDONED, COMMITTED, FAILED, FENCED, INTERRUPTED, NOOP, RUNNING, SKIPPED, STATUSES

__all__ = ["ABANDONED", "COMMITTED", "FAILED", "FENCED", "INTERRUPTED", "NOOP", "RUNNING", "SKIPPED", "STATUSES", "VERDICTLESS", "RunRecord", "RunStore"]
runs = RunRow.__table__
VERDICTLESS = (SKIPPED, RUNNING, INTERRUPTED)  # runs that say nothing of whether the job works: not ended, did nothing, stopped by a signal


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
    health: dict[str, Any] | None = None  # the table's health counters when the run ended (status page)
    stage: dict[str, Any] | None = None  # the last progress step it reported: {"stage": step, **counts} (the column's name predates "step")

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

    def finish(self, run_id: str, status: str, *, snapshot_id: int | None = None, counters: dict[str, Any] | None = None, error: str | None = None,
               lease_epoch: int | None = None, health: dict[str, Any] | None = None) -> None:
        """Record how a run ended; `lease_epoch`, when given, is the epoch it ended under
        (a holder may have raised its epoch past a table's during the run); `health`, when
        given, the table's health counters at the end (a small JSON object)."""
        assert status in STATUSES
        values: dict[str, Any] = {"status": status, "ended_at_ms": self._now, "snapshot_id": snapshot_id,
                                  "counters": json.dumps(counters or {}, default=str), "error": error}
        if lease_epoch is not None:
            values["lease_epoch"] = lease_epoch
        if health is not None:
            values["health"] = json.dumps(health, default=str)
        with unavailable_as_error(), self.engine.begin() as conn:
            conn.execute(update(runs).where(runs.c.run_id == run_id).values(**values))

    def set_step(self, run_id: str, step: str, counts: dict[str, Any]) -> None:
        """Record the progress step a running run reports (the status page shows it live), in
        the column `stage`."""
        with unavailable_as_error(), self.engine.begin() as conn:
            conn.execute(update(runs).where(runs.c.run_id == run_id, runs.c.status == RUNNING)
                         .values(stage=json.dumps({"stage": step, **counts}, default=str)))

    def abandon_running(self, table: str, *, taken_by: str, epoch: int) -> int:
        """Runs of the table still marked running when a new holder has just taken its lease:
        their holder is gone (its lease expired or was released by force), so nobody will
        record their end. Called by the new holder, which alone may touch the table now."""
        reason = f"abandoned: its holder stopped without recording an end; the lease was taken over by {taken_by} (epoch {epoch})"
        with unavailable_as_error(), self.engine.begin() as conn:
            return int(conn.execute(
                update(runs)
                .where(runs.c.table_name == table, runs.c.status == RUNNING)
                .values(status=ABANDONED, ended_at_ms=self._now, error=reason)
            ).rowcount or 0)

    def forget(self, table: str) -> int:
        """Drop a table's run history (the demo recreating its table). Returns the rows dropped."""
        with unavailable_as_error(), self.engine.begin() as conn:
            return int(conn.execute(delete(runs).where(runs.c.table_name == table)).rowcount or 0)

    def get(self, run_id: str) -> RunRecord | None:
        found = self.list(run_id=run_id)
        return found[0] if found else None

    def list(self, *, table: str | None = None, job: str | None = None, run_id: str | None = None, status: str | None = None,
             limit: int = 100, offset: int = 0) -> list[RunRecord]:
        """Newest first."""
        query = select(runs).order_by(runs.c.started_at_ms.desc(), runs.c.run_id).limit(limit).offset(offset)
        if table is not None:
            query = query.where(runs.c.table_name == table)
        if job is not None:
            query = query.where(runs.c.job == job)
        if run_id is not None:
            query = query.where(runs.c.run_id == run_id)
        if status is not None:
            query = query.where(runs.c.status == status)
        with unavailable_as_error(), self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [_record(r) for r in rows]

    def count(self, *, table: str | None = None) -> int:
        query = select(func.count()).select_from(runs)
        if table is not None:
            query = query.where(runs.c.table_name == table)
        with unavailable_as_error(), self.engine.connect() as conn:
            return int(conn.execute(query).scalar_one())

    def database_now_ms(self) -> int:
        """The database's clock (every run's times are on it)."""
        with unavailable_as_error(), self.engine.connect() as conn:
            return int(conn.execute(select(self._now)).scalar_one())

    def tables_with_runs_since(self, since_ms: int) -> set[str]:
        """The tables with a run that started or ended at `since_ms` or later (database clock)."""
        query = select(runs.c.table_name).where(or_(runs.c.started_at_ms >= since_ms, runs.c.ended_at_ms >= since_ms)).distinct()
        with unavailable_as_error(), self.engine.connect() as conn:
            return {r[0] for r in conn.execute(query).all()}

    def ended_since(self, since_ms: int) -> list[RunRecord]:
        """The runs that ended at `since_ms` or later (database clock), newest first."""
        query = select(runs).where(runs.c.ended_at_ms >= since_ms).order_by(runs.c.ended_at_ms.desc(), runs.c.run_id)
        with unavailable_as_error(), self.engine.connect() as conn:
            return [_record(r) for r in conn.execute(query).all()]

    def last_successes(self) -> dict[tuple[str, str], int]:
        """(table, job) -> when its newest `committed` or `noop` run ended (ms, database clock)."""
        query = (select(runs.c.table_name, runs.c.job, func.max(runs.c.ended_at_ms)).where(runs.c.status.in_((COMMITTED, NOOP)))
                 .group_by(runs.c.table_name, runs.c.job))
        with unavailable_as_error(), self.engine.connect() as conn:
            return {(r[0], r[1]): int(r[2]) for r in conn.execute(query).all() if r[2] is not None}

    def newest_of(self, tables: Collection[str], limit: int) -> dict[str, list[RunRecord]]:
        """Each named table's newest `limit` runs, newest first (as `list(table=…)` gives
        one table's), in one query per `NAMES_AT_ONCE` tables: a process that keeps no history yet (a
        cron run, a daemon's first cycle) reads a fleet's histories in a few queries, not
        one per table. Tables without runs have an empty list."""
        found: dict[str, list[RunRecord]] = {table: [] for table in tables}
        for names in in_groups(found):
            order = (runs.c.started_at_ms.desc(), runs.c.run_id)
            ranked = (select(runs, func.row_number().over(partition_by=runs.c.table_name, order_by=order).label("newness"))
                      .where(runs.c.table_name.in_(names)).subquery())
            query = select(ranked).where(ranked.c.newness <= limit).order_by(ranked.c.table_name, ranked.c.newness)
            with unavailable_as_error(), self.engine.connect() as conn:
                rows = conn.execute(query).all()
            for r in rows:
                found[r.table_name].append(_record(r))
        return found

    def latest_per_job(self, tables: Collection[str] | None = None, *, ignoring: Collection[str] = (SKIPPED,)) -> list[RunRecord]:
        """The newest run of every (table, job) that was not `skipped`, in one query (the
        status page's overview: a skipped run did nothing and says nothing about the table);
        of the named tables only, when named. Light records: their `counters` are empty and
        their `health` None (not read). `ignoring` names the statuses passed over (the
        overview's verdicts pass over `running` and `interrupted` too: VERDICTLESS)."""
        chosen = runs.c.status.not_in(sorted(ignoring))
        if tables is not None:
            chosen = and_(chosen, runs.c.table_name.in_(sorted(tables)))
        newest = (
            select(runs.c.table_name, runs.c.job, func.max(runs.c.started_at_ms).label("started"))
            .where(chosen)
            .group_by(runs.c.table_name, runs.c.job)
            .subquery()
        )
        light = [c for c in runs.c if c.name not in ("counters", "health")]
        query = (
            select(*light)
            .join(newest, and_(runs.c.table_name == newest.c.table_name, runs.c.job == newest.c.job, runs.c.started_at_ms == newest.c.started))
            .where(runs.c.status.not_in(sorted(ignoring)))
            .order_by(runs.c.table_name, runs.c.job, runs.c.run_id)
        )
        with unavailable_as_error(), self.engine.connect() as conn:
            rows = conn.execute(query).all()
        seen: set[tuple[str, str]] = set()
        out = []
        for r in rows:  # two runs started in the same millisecond: keep one
            if (r.table_name, r.job) not in seen:
                seen.add((r.table_name, r.job))
                out.append(_record(r, light=True))
        return out


def _record(r: Any, *, light: bool = False) -> RunRecord:
    return RunRecord(
        run_id=r.run_id,
        table=r.table_name,
        job=r.job,
        status=r.status,
        holder_id=r.holder_id,
        lease_epoch=r.lease_epoch,
        started_at_ms=int(r.started_at_ms),
        ended_at_ms=r.ended_at_ms,
        snapshot_id=r.snapshot_id,
        counters={} if light or not r.counters else json.loads(r.counters),
        error=r.error,
        health=None if light else _json_object(r.health),
        stage=_json_object(r.stage),
    )


def _json_object(text: str | None) -> dict[str, Any] | None:
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
