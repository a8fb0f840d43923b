"""What the overview shows of every table, and how it is cached.

Table health comes from an evaluation (`schedule.cycle.evaluate`: metadata only, every
table's manifests read once), which is far too slow to run per page view on a thousand
tables. So the overview renders from a `Snapshot`: the health counters, the reader cost
and the planner's decisions of every table, as of one evaluation.

- In the daemon, the snapshot is the daemon's latest evaluation, published by the scheduler
  when it finishes one (`StatusCache.publish`); the page never evaluates while there is one.
- In `icemaint ui` (and in a daemon before its first evaluation), the cache evaluates by
  itself, in a background thread: the first view waits for it (up to `wait_s`), later views
  get the cached snapshot at once, and one older than the TTL is refreshed in the
  background while the stale one is still shown (with its age).

What changes between evaluations without a metadata read (the run history, the leases) is
read from the state database on every view: the leases in one query (`LeaseStore.list`),
the newest runs of the tables whose runs moved since the previous view (`latest_runs.py`).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import structlog

from maintenance.config import Config
from maintenance.jobs import registry
from maintenance.schedule.cycle import Evaluation
from maintenance.table.health import TableHealth
from maintenance.table.reader_cost import NO_COST, ReaderCost

log = structlog.get_logger(__name__)

DAEMON_SOURCE = "the daemon's latest evaluation"


@dataclass(frozen=True)
class DecisionView:
    """One (table, job) decision of the planner, without the plan it may carry."""

    job: str
    due: bool
    reason: str
    estimated_s: float


@dataclass(frozen=True)
class TableSummary:
    name: str  # catalog.namespace.table
    catalog: str
    namespace: str
    policy: str
    cost: ReaderCost
    health: TableHealth | None  # the table's counters (no per-partition breakdown); None when not evaluated
    decisions: tuple[DecisionView, ...] = ()
    problem: str | None = None  # why it could not be evaluated
    note: str | None = None  # why no job is considered (disabled, no policy selects it)

    @property
    def next_due(self) -> DecisionView | None:
        return next((d for d in self.decisions if d.due), None)


@dataclass
class Snapshot:
    """Every table as of one evaluation, costliest first."""

    taken_at: float  # wall clock, seconds
    source: str
    duration_s: float | None
    tables: list[TableSummary]
    catalogs_failing: dict[str, str] = field(default_factory=dict)
    catalogs_empty: dict[str, str] = field(default_factory=dict)  # catalog that lists no table -> a hint why (a wrong name or path)
    by_name: dict[str, TableSummary] = field(default_factory=dict)
    catalogs: Counter[str] = field(default_factory=Counter)
    namespaces: Counter[str] = field(default_factory=Counter)
    policies: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self.tables.sort(key=lambda t: (-t.cost.extra_bytes, t.name))
        self.by_name = {t.name: t for t in self.tables}
        self.catalogs = Counter(t.catalog for t in self.tables)
        self.namespaces = Counter(t.namespace for t in self.tables)
        self.policies = Counter(t.policy for t in self.tables)


def split_name(name: str) -> tuple[str, str]:
    """(catalog, namespace) of `catalog.namespace.table` (a namespace may have several parts)."""
    parts = name.split(".")
    return parts[0], ".".join(parts[1:-1])


def summarize(evaluation: Evaluation, *, source: str, taken_at: float | None = None, duration_s: float | None = None) -> Snapshot:
    """The overview's view of an evaluation. Keeps no plan and no per-partition health, so
    holding the latest snapshot costs little memory whatever the tables' sizes."""
    decisions: dict[str, list[DecisionView]] = {}
    policies: dict[str, str] = {}
    costs: dict[str, ReaderCost] = {}
    notes: dict[str, str] = {}
    for d in evaluation.decisions:
        policies.setdefault(d.table, d.policy)
        costs.setdefault(d.table, d.reader_cost)
        if d.job != "-":  # "-": the table is disabled or no policy selects it
            decisions.setdefault(d.table, []).append(DecisionView(d.job, d.due, d.reason, d.estimated_s))
        else:
            notes[d.table] = d.reason
    names = set(policies) | set(evaluation.health) | {t for t in evaluation.problems if not t.startswith("catalog ")}
    tables = []
    for name in names:
        catalog, namespace = split_name(name)
        health = evaluation.health.get(name)
        jobs = sorted(decisions.get(name, []), key=lambda d: registry.order(d.job))
        tables.append(TableSummary(
            name=name, catalog=catalog, namespace=namespace, policy=policies.get(name, "?"), cost=costs.get(name, NO_COST),
            health=dataclasses.replace(health, partitions=[]) if health is not None else None,
            decisions=tuple(jobs), problem=evaluation.problems.get(name), note=notes.get(name),
        ))
    return Snapshot(taken_at=time.time() if taken_at is None else taken_at, source=source, duration_s=duration_s, tables=tables,
                    catalogs_failing=dict(evaluation.catalogs_failing), catalogs_empty=dict(evaluation.catalogs_empty))


class StatusCache:
    """The snapshot the overview renders from (see the module's docstring)."""

    def __init__(self, config: Config, *, ttl_s: float = 60.0, evaluate: Callable[[], Evaluation] | None = None) -> None:
        self.config = config
        self.ttl_s = ttl_s
        self._evaluate = evaluate or self._evaluate_all
        self._published: Snapshot | None = None
        self._own: Snapshot | None = None
        self._stale_after = 0.0  # wall clock: refresh the own snapshot at the first view after it
        self.error: str | None = None  # why the last evaluation of its own failed
        self._lock = threading.Lock()
        self._refresh: threading.Thread | None = None

    def publish(self, evaluation: Evaluation, duration_s: float | None = None) -> None:
        """The daemon's evaluation, as soon as it has one: from then on the page uses it."""
        snapshot = summarize(evaluation, source=DAEMON_SOURCE, duration_s=duration_s)
        self._published = snapshot

    def get(self, wait_s: float = 30.0) -> Snapshot | None:
        """The newest snapshot; None when the first one is still being made after `wait_s`."""
        published = self._published
        if published is not None:
            return published
        own = self._own
        if own is None or time.time() >= self._stale_after:
            refresh = self._start_refresh()
            if own is None:
                refresh.join(wait_s)
                return self._own
        return own

    @property
    def refreshing(self) -> bool:
        thread = self._refresh
        return thread is not None and thread.is_alive()

    def _start_refresh(self) -> threading.Thread:
        """One evaluation at a time, in its own thread (a page view never blocks on a second)."""
        with self._lock:
            if self._refresh is None or not self._refresh.is_alive():
                self._refresh = threading.Thread(target=self._run_refresh, name="icemaint-ui-evaluate", daemon=True)
                self._refresh.start()
            return self._refresh

    def _run_refresh(self) -> None:
        started = time.monotonic()
        try:
            evaluation = self._evaluate()
        except Exception as exc:  # state down, a bad policy file, a bug: shown on the page, retried after the TTL
            self.error = str(exc) or type(exc).__name__
            log.warning("status page: evaluation failed", error=self.error)
            self._stale_after = time.time() + min(self.ttl_s, 10.0)  # the last snapshot stays shown; retried soon
            return
        self.error = None
        self._own = summarize(evaluation, source=f"an evaluation by this process, refreshed after {self.ttl_s:g}s",
                              duration_s=time.monotonic() - started)
        self._stale_after = self._own.taken_at + self.ttl_s

    def _evaluate_all(self) -> Evaluation:
        """The one evaluation loop (`schedule.cycle.evaluate`) over every table: a table
        whose metadata cannot be read for any reason is a problem shown on its row."""
        from maintenance.policy.loader import load_policies
        from maintenance.schedule.cycle import evaluate
        from maintenance.state.store import open_state

        return evaluate(self.config, open_state(self.config), None, load_policies(self.config.policies_dir))
